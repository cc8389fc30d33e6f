// Baseline for softmax_bf16 in two launches, to show the format's multi-launch rules: the first
// kernel writes each row's max and sum of exponentials to a scratch buffer, the second
// normalises. A fused one-launch rewrite is the obvious first step.
#include <cuda_bf16.h>
#include <math_constants.h> // INFINITY comes from the host math.h, which NVRTC lacks

// @kl tunable THREADS = 256 in 64, 128, 256, 512, 1024
// @kl scratch stats f32 [2 * ROWS]
// @kl launch row_stats grid=(ROWS) block=(THREADS) args=(x, stats, ROWS, COLS)
// @kl launch normalise grid=(cdiv(COLS, THREADS), ROWS) block=(THREADS) args=(x, stats, y, ROWS, COLS)

#ifndef THREADS
#define THREADS 256
#endif

__device__ float block_reduce(float v, float* shared, bool isMax)
{
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = isMax ? fmaxf(v, other) : v + other;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    float t = lane < THREADS / 32 ? shared[lane] : (isMax ? -CUDART_INF_F : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, t, o);
        t = isMax ? fmaxf(t, other) : t + other;
    }
    return t;
}

extern "C" __global__ void row_stats(const __nv_bfloat16* x, float* stats, int rows, int cols)
{
    __shared__ float shared[32];
    const __nv_bfloat16* xr = x + (long long)blockIdx.x * cols;
    float m = -CUDART_INF_F;
    for (int j = threadIdx.x; j < cols; j += THREADS)
        m = fmaxf(m, __bfloat162float(xr[j]));
    m = block_reduce(m, shared, true);
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += THREADS)
        s += __expf(__bfloat162float(xr[j]) - m);
    s = block_reduce(s, shared, false);
    if (threadIdx.x == 0) {
        stats[2 * blockIdx.x] = m;
        stats[2 * blockIdx.x + 1] = s;
    }
}

extern "C" __global__ void normalise(const __nv_bfloat16* x, const float* stats, __nv_bfloat16* y, int rows, int cols)
{
    const int j = blockIdx.x * THREADS + threadIdx.x;
    const long long row = blockIdx.y;
    if (j >= cols)
        return;
    const float m = stats[2 * row], s = stats[2 * row + 1];
    y[row * cols + j] = __float2bfloat16(__expf(__bfloat162float(x[row * cols + j]) - m) / s);
}
