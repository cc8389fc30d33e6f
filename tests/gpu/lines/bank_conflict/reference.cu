// Reference for bank_conflict: one thread per output, straight from global memory, in double.
// @kl launch rows_reference grid=(cdiv(B * 256, 128)) block=(128) args=(x, y, B)

extern "C" __global__ void rows_reference(const float* x, float* y, int b)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)b * 256)
        return;
    double sum = 0.0;
    for (int k = 0; k < 32; ++k)
        sum += x[i * 32 + k];
    y[i] = (float)(8.0 * sum);
}
