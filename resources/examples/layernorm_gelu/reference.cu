// Reference for layernorm_gelu: one thread per row, double-precision maths, no tricks.
// Slow on purpose; it only has to be obviously right.
#include <cuda_fp16.h>

// @kl launch layernorm_gelu_reference grid=(cdiv(M, 128)) block=(128) args=(x, gamma, beta, y, M, N, stride_x, stride_y, eps)

extern "C" __global__ void layernorm_gelu_reference(const __half* x, const __half* gamma, const __half* beta, __half* y,
                                                    int M, int N, int stride_x, int stride_y, float eps)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M)
        return;
    const __half* xr = x + (long long)row * stride_x;
    __half* yr = y + (long long)row * stride_y;

    double sum = 0.0;
    for (int j = 0; j < N; ++j)
        sum += (double)__half2float(xr[j]);
    const double mean = sum / N;

    double squares = 0.0;
    for (int j = 0; j < N; ++j) {
        const double d = (double)__half2float(xr[j]) - mean;
        squares += d * d;
    }
    const double rstd = 1.0 / sqrt(squares / N + (double)eps);

    for (int j = 0; j < N; ++j) {
        const double v = ((double)__half2float(xr[j]) - mean) * rstd * (double)__half2float(gamma[j])
                         + (double)__half2float(beta[j]);
        const double g = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        yr[j] = __float2half((float)g);
    }
}
