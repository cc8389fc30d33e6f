# Naive Triton starting candidate for resources/kernelbench/gelu.py (import it with
# `kernelloop-cli import-kernelbench resources/kernelbench/gelu.py --baseline THIS_FILE`):
# y = gelu(x), the exact erf form, fp32, one element per lane over the flattened matrix.
#   BLOCK  elements per program (a power of two);  W  num_warps per program
import triton
import triton.language as tl

# @kl tunable BLOCK = 256 in 128..8192 pow2
# @kl tunable W = 4 in 1, 2, 4, 8, 16
# @kl constraint BLOCK >= 32 * W
# @kl launch gelu grid=(cdiv(batch_size * dim, BLOCK)) num_warps=(W) num_stages=(1) args=(x, y, batch_size * dim, BLOCK=BLOCK)


@triton.jit
def gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offsets = start + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=mask)
