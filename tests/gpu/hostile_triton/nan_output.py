# expect: nan-output
# Correct output but one quiet NaN in each row.
import triton
import triton.language as tl

# @kl launch ln_gelu grid=(M) num_warps=(4) num_stages=(1) args=(x, gamma, beta, y, M, N, stride_x, stride_y, eps, BLOCK_N=1024)


@triton.jit
def normalise_row(x_row, gamma_ptr, beta_ptr, y_row, N, eps, keep, BLOCK_N: tl.constexpr):
    """One row: mean, variance, then y = gelu((x - mean) * rstd * gamma + beta), written where keep."""
    total = tl.zeros([BLOCK_N], dtype=tl.float32)
    squares = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        total += v
        squares += v * v
    mean = tl.sum(total, axis=0) / N
    var = tl.maximum(tl.sum(squares, axis=0) / N - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        v = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        g = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        h = (v - mean) * rstd * g + b
        u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
        tl.store(y_row + cols, (h * tl.sigmoid(2.0 * u)).to(tl.float16), mask=mask & keep)


@triton.jit
def ln_gelu(x_ptr, gamma_ptr, beta_ptr, y_ptr, M, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    normalise_row(x_row, gamma_ptr, beta_ptr, y_row, N, eps, True, BLOCK_N)
    tl.debug_barrier()
    zero = eps * 0.0
    tl.store(y_row + N // 2, (zero / zero).to(tl.float16))  # HOSTILE: 0/0, a NaN
