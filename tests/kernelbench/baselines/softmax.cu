// A naive CUDA baseline for resources/kernelbench/softmax.py: one thread per row, three passes.
// @kl tunable THREADS = 128 in 32, 64, 128, 256
// @kl launch softmax grid=(cdiv(batch_size, THREADS)) block=(THREADS) args=(x, y, batch_size, dim)
extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float* row = x + static_cast<long long>(r) * cols;
    float top = -3.402823466e38f, sum = 0.0f;
    for (int c = 0; c < cols; ++c)
        top = fmaxf(top, row[c]);
    for (int c = 0; c < cols; ++c)
        sum += expf(row[c] - top);
    for (int c = 0; c < cols; ++c)
        y[static_cast<long long>(r) * cols + c] = expf(row[c] - top) / sum;
}
