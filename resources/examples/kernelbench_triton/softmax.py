# Naive Triton starting candidate for resources/kernelbench/softmax.py (import it with
# `kernelloop-cli import-kernelbench resources/kernelbench/softmax.py --baseline THIS_FILE`):
# softmax over each row, fp32; one program per row, three passes over the row (max, sum of
# exponentials, write), BLOCK_N columns at a time.
#   BLOCK_N  columns per step (a power of two);  W  num_warps per program
import triton
import triton.language as tl

# @kl tunable BLOCK_N = 256 in 256..8192 pow2
# @kl tunable W = 1 in 1, 2, 4, 8, 16
# @kl constraint BLOCK_N >= 32 * W
# @kl launch softmax grid=(batch_size) num_warps=(W) num_stages=(1) args=(x, y, dim, stride_x, stride_y, BLOCK_N=BLOCK_N)


@triton.jit
def softmax(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    top = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        top = tl.maximum(top, tl.load(x_row + cols, mask=cols < N, other=-float("inf")))
    row_max = tl.max(top, axis=0)
    sums = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        v = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        sums += tl.exp(v - row_max)
    total = tl.sum(sums, axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        v = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, tl.exp(v - row_max) / total, mask=mask)
