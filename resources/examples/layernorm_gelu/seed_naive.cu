// A seed-style naive LayerNorm+GELU: the kernel an engineer typically writes first, kept as a
// yardstick (116 us in the runner on an H200 at 8192x4096: docs/gpu-facts.md, LayerNorm+GELU). It is NOT the
// problem's baseline (baseline.cu is; at its defaults it is already faster than this) and it is
// not slowed down on purpose: it is timed beside the baseline and the tuner's best by
// scripts/compare_torch.py so the tuner's result can be read against both.
//
// One block of 256 threads per row, two passes over the row:
//   1. scalar __half loads, each thread accumulating sum and sum of squares in fp32, then a
//      classic shared-memory tree reduction; variance = E[x^2] - mean^2 in fp32;
//   2. re-read x (scalar), normalise, gamma/beta, tanh-GELU as in reference.cu, scalar stores.
//
// E[x^2] - mean^2 cancels badly only when |mean| >> std. For this problem's inputs (mean 0.5, std 2)
// E[x^2] = 4.25 against a variance of 4, so almost no bits are lost: the fp32 error of the variance
// stays around 1e-6 relative, far below the f16 tolerance. Each x is an fp16 value, so x*x is exact
// in fp32 and a one-element row gives exactly 0 variance (no negative value under the root).
#include <cuda_fp16.h>

// @kl tunable THREADS = 256 in 256
// @kl launch layernorm_gelu grid=(M) block=(THREADS) smem=(0) args=(x, gamma, beta, y, M, N, stride_x, stride_y, eps)

#ifndef THREADS
#define THREADS 256
#endif

extern "C" __global__ void layernorm_gelu(const __half* __restrict__ x, const __half* __restrict__ gamma,
                                          const __half* __restrict__ beta, __half* __restrict__ y, int M, int N,
                                          int stride_x, int stride_y, float eps)
{
    __shared__ float s_sum[THREADS];
    __shared__ float s_sq[THREADS];

    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    if (row >= M)
        return; // the whole block leaves together
    const __half* xr = x + (long long)row * stride_x;
    __half* yr = y + (long long)row * stride_y;

    // Pass 1: sum and sum of squares.
    float sum = 0.0f;
    float sq = 0.0f;
    for (int i = tid; i < N; i += blockDim.x) {
        const float v = __half2float(xr[i]);
        sum += v;
        sq += v * v;
    }
    s_sum[tid] = sum;
    s_sq[tid] = sq;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            s_sum[tid] += s_sum[tid + s];
            s_sq[tid] += s_sq[tid + s];
        }
        __syncthreads();
    }
    const float mean = s_sum[0] / N;
    const float var = s_sq[0] / N - mean * mean;
    const float rstd = rsqrtf(var + eps);

    // Pass 2: normalise, scale and shift, GELU (tanh approximation).
    for (int i = tid; i < N; i += blockDim.x) {
        const float v = (__half2float(xr[i]) - mean) * rstd * __half2float(gamma[i]) + __half2float(beta[i]);
        const float g = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        yr[i] = __float2half(g);
    }
}
