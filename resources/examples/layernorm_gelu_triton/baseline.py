# Naive Triton baseline for layernorm_gelu_triton, as in the seed's case study: one program per
# row, two passes over the row (sums, then normalise + GELU + write), BLOCK_N columns at a time.
#   BLOCK_N  columns per step (a power of two); a row longer than BLOCK_N takes several steps
#   W        num_warps per program;  S  num_stages (software pipelining of the column loop)
import triton
import triton.language as tl

# @kl tunable BLOCK_N = 256 in 256..8192 pow2
# @kl tunable W = 1 in 1, 2, 4, 8, 16
# @kl tunable S = 1 in 1, 2, 3
# @kl constraint BLOCK_N >= 32 * W
# @kl launch ln_gelu grid=(M) num_warps=(W) num_stages=(S) args=(x, gamma, beta, y, N, stride_x, stride_y, eps, BLOCK_N=BLOCK_N)


@triton.jit
def ln_gelu(x_ptr, gamma_ptr, beta_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
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
        # gelu(h) = 0.5 h (1 + tanh(u)) = h * sigmoid(2u), u = sqrt(2/pi) (h + 0.044715 h^3)
        u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
        tl.store(y_row + cols, (h * tl.sigmoid(2.0 * u)).to(tl.float16), mask=mask)
