// expect: unwritten-output
// Writes only the first half of the rows.
#include <cuda_fp16.h>

// @kl launch ln_gelu grid=(M) block=(256) smem=(0) args=(x, gamma, beta, y, M, N, stride_x, stride_y, eps)

__device__ float block_sum(float v)
{
    __shared__ float partial[8];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    float t = threadIdx.x % 32 < 8 ? partial[threadIdx.x % 32] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        t += __shfl_xor_sync(0xffffffffu, t, o);
    return t;
}

__device__ float gelu_tanh(float v)
{
    return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

// One row: mean, variance, then y = gelu((x - mean) * rstd * gamma + beta).
__device__ void normalise_row(const __half* xr, const __half* gamma, const __half* beta, __half* yr, int N, float eps)
{
    float sum = 0.0f;
    for (int j = threadIdx.x; j < N; j += blockDim.x)
        sum += __half2float(xr[j]);
    const float mean = block_sum(sum) / N;
    float squares = 0.0f;
    for (int j = threadIdx.x; j < N; j += blockDim.x) {
        const float d = __half2float(xr[j]) - mean;
        squares += d * d;
    }
    const float rstd = rsqrtf(block_sum(squares) / N + eps);
    for (int j = threadIdx.x; j < N; j += blockDim.x) {
        const float v = (__half2float(xr[j]) - mean) * rstd * __half2float(gamma[j]) + __half2float(beta[j]);
        yr[j] = __float2half(gelu_tanh(v));
    }
}

extern "C" __global__ void ln_gelu(const __half* x, const __half* gamma, const __half* beta, __half* y, int M, int N,
                                   int stride_x, int stride_y, float eps)
{
    const int row = blockIdx.x;
    if (row >= (M + 1) / 2 && M > 1)
        return; // HOSTILE: the second half is never written
    normalise_row(x + (long long)row * stride_x, gamma, beta, y + (long long)row * stride_y, N, eps);
}
