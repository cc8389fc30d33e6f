// A naive CUDA baseline for resources/kernelbench/rms_norm.py: one thread per row, two passes.
// @kl tunable THREADS = 128 in 32, 64, 128, 256
// @kl launch rms_norm grid=(cdiv(tokens, THREADS)) block=(THREADS) args=(x, weight, y, tokens, hidden)
extern "C" __global__ void rms_norm(const float* x, const float* weight, float* y, int rows, int cols)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float* row = x + static_cast<long long>(r) * cols;
    float squares = 0.0f;
    for (int c = 0; c < cols; ++c)
        squares += row[c] * row[c];
    const float scale = 1.0f / sqrtf(squares / cols + 1e-6f);
    for (int c = 0; c < cols; ++c)
        y[static_cast<long long>(r) * cols + c] = row[c] * scale * weight[c];
}
