// Exported by KernelLoop from session 1, iteration 26 (layernorm_gelu)
// Measured on NVIDIA H200 #0
// Median 40.00 us (p20 39.39, p80 40.90), 3356 GB/s, 83.4% of a same-size device copy, 1.81x the problem's baseline timed in the same job; CUDA events, L2 flushed before every run, SM clock 1980 MHz, NVRTC 13.0.
// Verified against the problem's reference at its main, fuzz and padded sizes: passed.
// The launch rule is in the // @kl lines below; the chosen tunables are fixed here:
#ifndef CACHE
#define CACHE 4
#endif
#ifndef TANH
#define TANH 1
#endif
#ifndef THREADS
#define THREADS 128
#endif
#ifndef VEC
#define VEC 8
#endif

// Baseline for layernorm_gelu, in the spirit of a first attempt: one block per row and three
// passes over the row (mean, variance, write), scalar loads by default.
//
// The tunables span the space from there to near the memory roofline:
//   THREADS  threads per block (one block per row)
//   VEC      halves per load (8 = 16-byte loads); rows whose length or stride is not a multiple
//            of VEC, or whose pointers are misaligned, take the scalar path
//   CACHE    vectors per thread kept in registers between passes; 0 re-reads the row from
//            memory in every pass. A row longer than THREADS * VEC * CACHE falls back to re-reading.
//   TANH     0: tanhf (what the reference uses); 1: the hardware tanh.approx.f32, one instruction
//            instead of a libdevice sequence. The maths stays fp32; only tanh is approximated, and
//            the verifier holds the result to the problem's tolerance like any other change.
#include <cuda_fp16.h>

// @kl tunable THREADS = 128 in 32, 64, 128, 256, 512, 1024
// @kl tunable VEC = 1 in 1, 2, 4, 8
// @kl tunable CACHE = 0 in 0, 1, 2, 4, 8
// @kl tunable TANH = 0 in 0, 1
// @kl constraint CACHE * VEC <= 32
// @kl launch layernorm_gelu grid=(M) block=(THREADS) smem=(0) args=(x, gamma, beta, y, M, N, stride_x, stride_y, eps)

#ifndef THREADS
#define THREADS 128
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef CACHE
#define CACHE 0
#endif
#ifndef TANH
#define TANH 0
#endif

template <int V>
struct alignas(2 * V) HalfVec {
    __half h[V];
};

__device__ __forceinline__ float gelu_tanh(float v)
{
    const float u = 0.7978845608f * (v + 0.044715f * v * v * v);
#if TANH
    float t;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
#else
    const float t = tanhf(u);
#endif
    return 0.5f * v * (1.0f + t);
}

// Sum over the block; every thread gets the total. `scratch` holds one float per warp.
__device__ float block_sum(float v, float* scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads(); // the previous call may still be reading scratch
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    float t = lane < (THREADS + 31) / 32 ? scratch[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        t += __shfl_xor_sync(0xffffffffu, t, o);
    return t;
}

template <int V>
__device__ void normalise_row(const __half* xr, const __half* gamma, const __half* beta, __half* yr, int N, float eps,
                              float* scratch)
{
    using T = HalfVec<V>;
    const int vectors = N / V;
    const T* xv = reinterpret_cast<const T*>(xr);
    const T* gv = reinterpret_cast<const T*>(gamma);
    const T* bv = reinterpret_cast<const T*>(beta);
    T* yv = reinterpret_cast<T*>(yr);
    constexpr int kCached = CACHE > 0 ? CACHE * V : 1;
    float cached[kCached];
    const bool useCache = CACHE > 0 && vectors <= THREADS * CACHE;

    float sum = 0.0f;
    if (useCache) {
#pragma unroll
        for (int k = 0; k < (CACHE > 0 ? CACHE : 1); ++k) {
            const int i = threadIdx.x + k * THREADS;
            if (i < vectors) {
                const T t = xv[i];
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    cached[k * V + e] = __half2float(t.h[e]);
                    sum += cached[k * V + e];
                }
            }
        }
    } else {
        for (int i = threadIdx.x; i < vectors; i += THREADS) {
            const T t = xv[i];
#pragma unroll
            for (int e = 0; e < V; ++e)
                sum += __half2float(t.h[e]);
        }
    }
    const float mean = block_sum(sum, scratch) / N;

    float squares = 0.0f;
    if (useCache) {
#pragma unroll
        for (int k = 0; k < (CACHE > 0 ? CACHE : 1); ++k) {
            const int i = threadIdx.x + k * THREADS;
            if (i < vectors) {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float d = cached[k * V + e] - mean;
                    squares += d * d;
                }
            }
        }
    } else {
        for (int i = threadIdx.x; i < vectors; i += THREADS) {
            const T t = xv[i];
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const float d = __half2float(t.h[e]) - mean;
                squares += d * d;
            }
        }
    }
    const float rstd = rsqrtf(block_sum(squares, scratch) / N + eps);

    // One output vector from V input values.
    auto write = [&](int i, const float* values) {
        const T g = gv[i], b = bv[i];
        T out;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float v = (values[e] - mean) * rstd * __half2float(g.h[e]) + __half2float(b.h[e]);
            out.h[e] = __float2half(gelu_tanh(v));
        }
        yv[i] = out;
    };
    if (useCache) {
#pragma unroll
        for (int k = 0; k < (CACHE > 0 ? CACHE : 1); ++k) {
            const int i = threadIdx.x + k * THREADS;
            if (i < vectors)
                write(i, &cached[k * V]);
        }
    } else {
        for (int i = threadIdx.x; i < vectors; i += THREADS) {
            const T t = xv[i];
            float values[V];
#pragma unroll
            for (int e = 0; e < V; ++e)
                values[e] = __half2float(t.h[e]);
            write(i, values);
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    layernorm_gelu(const __half* __restrict__ x, const __half* __restrict__ gamma, const __half* __restrict__ beta,
                   __half* __restrict__ y, int M, int N, int stride_x, int stride_y, float eps)
{
    __shared__ float scratch[32];
    const int row = blockIdx.x;
    if (row >= M)
        return;
    const __half* xr = x + (long long)row * stride_x;
    __half* yr = y + (long long)row * stride_y;
    const unsigned long long mask = 2 * VEC - 1;
    const bool aligned = VEC > 1 && N % VEC == 0 && ((unsigned long long)xr & mask) == 0
                         && ((unsigned long long)yr & mask) == 0 && ((unsigned long long)gamma & mask) == 0
                         && ((unsigned long long)beta & mask) == 0;
    if (aligned)
        normalise_row<VEC>(xr, gamma, beta, yr, N, eps, scratch);
    else
        normalise_row<1>(xr, gamma, beta, yr, N, eps, scratch);
}
