// A naive CUDA baseline for resources/kernelbench/gelu.py (the tests' own: check must pass on it).
// @kl tunable THREADS = 256 in 64, 128, 256, 512, 1024
// @kl launch gelu grid=(cdiv(batch_size * dim, THREADS)) block=(THREADS) args=(x, y, batch_size * dim)
extern "C" __global__ void gelu(const float* x, float* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}
