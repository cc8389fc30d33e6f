# Triton baseline for gemm_fp16_triton: one program per BLOCK_M x BLOCK_N tile of C, K advanced BLOCK_K at
# a time, tl.dot (tensor cores) with fp32 accumulation, no grouping of programs for L2 reuse.
#   BLOCK_M, BLOCK_N, BLOCK_K  the tile (powers of two, at least 16 for tl.dot)
#   W  num_warps per program;  S  num_stages (software pipelining of the K loop)
import triton
import triton.language as tl

# @kl tunable BLOCK_M = 64 in 16..256 pow2
# @kl tunable BLOCK_N = 64 in 16..256 pow2
# @kl tunable BLOCK_K = 32 in 16..128 pow2
# @kl tunable W = 4 in 1, 2, 4, 8
# @kl tunable S = 2 in 1, 2, 3, 4
# @kl constraint BLOCK_M * BLOCK_N <= 256 * 256
# @kl launch gemm grid=(cdiv(N, BLOCK_N), cdiv(M, BLOCK_M)) num_warps=(W) num_stages=(S) args=(a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)


@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None].to(tl.int64) * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(tl.float16), mask=mask)
