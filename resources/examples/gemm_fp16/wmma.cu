// A first tensor-core attempt for gemm_fp16 (not the baseline): WMMA 16x16x16 fragments loaded straight from
// global memory, fp32 accumulation, one 32x32 tile of C per warp (2x2 fragments), four warps per block. On
// the H200 it measured 53.4 TFLOP/s at 4096^3 (docs/gpu-facts.md, "Compute, measured"): the tensor pipe is starved,
// operands are not staged through shared memory. Tiles that cross the matrix's edge, or a K or N that breaks
// WMMA's rules, take a scalar fp32 path, so the fuzz sizes verify. WMMA wants 256-bit aligned pointers and a
// leading dimension that is a multiple of 16 bytes (8 halves): ldm is K for A and N for B, so the fragment
// path needs K % 16 == 0 (K-steps of 16 also keep the pointers aligned) and N % 8 == 0. Without the N test,
// the fuzz size M=1031, N=67, K=1024 loaded B with rows 134 bytes apart: a misaligned address on the H200.
#include <cuda_fp16.h>
#include <mma.h>

// @kl launch gemm_wmma grid=(cdiv(N, 64), cdiv(M, 64)) block=(128) args=(a, b, c, M, N, K)

using namespace nvcuda;

extern "C" __global__ void __launch_bounds__(128) gemm_wmma(const __half* a, const __half* b, __half* c, int M, int N, int K)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row0 = blockIdx.y * 64 + (warp / 2) * 32;
    const int col0 = blockIdx.x * 64 + (warp % 2) * 32;
    if (row0 >= M || col0 >= N)
        return;
    if (row0 + 32 <= M && col0 + 32 <= N && K % 16 == 0 && N % 8 == 0) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j)
                wmma::fill_fragment(acc[i][j], 0.0f);
        for (int k = 0; k < K; k += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
            for (int i = 0; i < 2; ++i)
                wmma::load_matrix_sync(fa[i], a + (long long)(row0 + 16 * i) * K + k, K);
            for (int j = 0; j < 2; ++j)
                wmma::load_matrix_sync(fb[j], b + (long long)k * N + col0 + 16 * j, N);
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j)
                    wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        // fp32 fragments to fp16 C through a per-warp staging tile.
        __shared__ __align__(32) float stage[4][16 * 16]; // store_matrix_sync wants 256-bit alignment too
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) {
                wmma::store_matrix_sync(stage[warp], acc[i][j], 16, wmma::mem_row_major);
                __syncwarp();
                for (int e = lane; e < 256; e += 32)
                    c[(long long)(row0 + 16 * i + e / 16) * N + col0 + 16 * j + e % 16] = __float2half(stage[warp][e]);
                __syncwarp();
            }
        return;
    }
    for (int e = lane; e < 32 * 32; e += 32) { // the edge: one element at a time
        const int row = row0 + e / 32, col = col0 + e % 32;
        if (row >= M || col >= N)
            continue;
        float sum = 0.0f;
        for (int k = 0; k < K; ++k)
            sum += __half2float(a[(long long)row * K + k]) * __half2float(b[(long long)k * N + col]);
        c[(long long)row * N + col] = __float2half(sum);
    }
}
