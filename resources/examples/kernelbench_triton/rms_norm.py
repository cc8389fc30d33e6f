# Naive Triton starting candidate for resources/kernelbench/rms_norm.py (import it with
# `kernelloop-cli import-kernelbench resources/kernelbench/rms_norm.py --baseline THIS_FILE`):
# y = x / sqrt(mean(x^2) + 1e-6) * weight per row, fp32; one program per row, two passes over the
# row (sum of squares, then scale and write), BLOCK_N columns at a time.
#   BLOCK_N  columns per step (a power of two);  W  num_warps per program
import triton
import triton.language as tl

# @kl tunable BLOCK_N = 256 in 256..8192 pow2
# @kl tunable W = 1 in 1, 2, 4, 8, 16
# @kl constraint BLOCK_N >= 32 * W
# @kl launch rms_norm grid=(tokens) num_warps=(W) num_stages=(1) args=(x, weight, y, hidden, stride_x, stride_y, BLOCK_N=BLOCK_N)


@triton.jit
def rms_norm(x_ptr, weight_ptr, y_ptr, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    squares = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0)
        squares += v * v
    scale = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / N + 1e-6)  # the Model's eps (a constructor argument)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        v = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(weight_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, v * scale * w, mask=mask)
