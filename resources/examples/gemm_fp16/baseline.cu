// Baseline for gemm_fp16, a first attempt as a textbook writes it: square TILE x TILE tiles of A and B
// staged through shared memory as fp32, each thread accumulating WPT outputs of one column in fp32 on the
// CUDA cores. No tensor cores: speed of light for this problem is the FP16 tensor ceiling, ~16x the FP32
// one on Hopper, so the findings should say so ("no tensor-core instructions").
//
//   TILE  the block's tile edge: TILE x TILE outputs per block, K advanced TILE at a time
//   WPT   outputs per thread (rows of the tile); the block has TILE x TILE / WPT threads
#include <cuda_fp16.h>

// @kl tunable TILE = 16 in 8, 16, 32
// @kl tunable WPT = 1 in 1, 2, 4, 8
// @kl constraint TILE % WPT == 0
// @kl constraint TILE * TILE / WPT >= 32
// @kl launch gemm_tiled grid=(cdiv(N, TILE), cdiv(M, TILE)) block=(TILE, TILE / WPT) smem=(0) args=(a, b, c, M, N, K)

#ifndef TILE
#define TILE 16
#endif
#ifndef WPT
#define WPT 1
#endif

extern "C" __global__ void __launch_bounds__(TILE * TILE / WPT)
    gemm_tiled(const __half* a, const __half* b, __half* c, int M, int N, int K)
{
    __shared__ float as[TILE][TILE + 1]; // +1: a column of the tile spreads over the banks
    __shared__ float bs[TILE][TILE + 1];
    const int tx = threadIdx.x; // the column within the tile
    const int ty = threadIdx.y; // rows ty * WPT .. ty * WPT + WPT - 1 within the tile
    const int rowBase = blockIdx.y * TILE;
    const int col = blockIdx.x * TILE + tx;
    float acc[WPT];
#pragma unroll
    for (int w = 0; w < WPT; ++w)
        acc[w] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE) {
#pragma unroll
        for (int w = 0; w < WPT; ++w) {
            const int r = ty * WPT + w;
            const int aRow = rowBase + r, aCol = k0 + tx;
            as[r][tx] = aRow < M && aCol < K ? __half2float(a[(long long)aRow * K + aCol]) : 0.0f;
            const int bRow = k0 + r;
            bs[r][tx] = bRow < K && col < N ? __half2float(b[(long long)bRow * N + col]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) {
            const float bv = bs[kk][tx];
#pragma unroll
            for (int w = 0; w < WPT; ++w)
                acc[w] += as[ty * WPT + w][kk] * bv;
        }
        __syncthreads();
    }
#pragma unroll
    for (int w = 0; w < WPT; ++w) {
        const int row = rowBase + ty * WPT + w;
        if (row < M && col < N)
            c[(long long)row * N + col] = __float2half(acc[w]);
    }
}
