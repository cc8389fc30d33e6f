"""FLOPs of a KernelBench-style Model.forward, written as an expression over the problem's size symbols.

torch.utils.flop_counter.FlopCounterMode (torch >= 2.1) gives a total for one call; Debian's python3-torch
1.13 has no such module, and a total at one size is not an expression anyway. So this counts with its own
__torch_dispatch__ mode, with FlopCounterMode's formulas (a multiply-add is 2 FLOPs; bias adds,
element-wise ops, softmax and reductions are not counted), and keeps each product's dimensions:

  mm / addmm            2 * M * N * K
  bmm / baddbmm         2 * B * M * N * K
  mv, dot               2 * M * K, 2 * K
  convolution           2 * N * Cout * prod(out spatial) * Cin/groups * prod(kernel)
  transposed conv       2 * N * Cin * prod(in spatial) * Cout/groups * prod(kernel)
  scaled dot-product    2 * B * H * S * Skv * (D + Dv)  (fused kernels; the math path is bmm)

The importer (kernelbench_import.py) runs FlopCounter inside each of its forward passes on meta tensors
(shapes, no memory), at KernelBench's sizes and with each size symbol moved alone; each dimension of each
product is fitted by the same shape rules as the tensors' dimensions (affine, floor((P x + Q) / R) + B,
products of those) and the products are summed, so matmul at M, N, K gives "2 * M * N * K". The
expression is checked against the count at the main sizes; any mismatch or a dimension that follows no
rule gives no expression, with the reason.
"""

from torch.utils._python_dispatch import TorchDispatchMode


def _ints(shape):
    return [int(d) for d in shape]


def _product_terms(name, args, out):
    """(coefficient, [dims]) per product that `name` computes, or [] for an op that is not counted."""
    if name in ("mm", "addmm"):
        a, b = (args[0], args[1]) if name == "mm" else (args[1], args[2])
        m, k = _ints(a.shape)
        n = int(b.shape[1])
        return [(2, [m, n, k])]
    if name in ("bmm", "baddbmm"):
        a, b = (args[0], args[1]) if name == "bmm" else (args[1], args[2])
        batch, m, k = _ints(a.shape)
        return [(2, [batch, m, int(b.shape[2]), k])]
    if name == "mv":
        m, k = _ints(args[0].shape)
        return [(2, [m, k])]
    if name == "dot":
        return [(2, [int(args[0].shape[0])])]
    if name in ("convolution", "_convolution"):
        x, w = args[0], args[1]
        transposed = bool(args[6]) if len(args) > 6 else False
        if transposed:  # each input element scatters Cout/groups x kernel products
            return [(2, _ints(x.shape) + [int(w.shape[1])] + _ints(w.shape[2:]))]
        return [(2, _ints(out.shape) + [int(w.shape[1])] + _ints(w.shape[2:]))]
    if name.startswith("_scaled_dot_product") or name == "scaled_dot_product_attention":
        q, k, v = args[0], args[1], args[2]
        batch, heads, s, d = _ints(q.shape)
        skv, dv = int(k.shape[-2]), int(v.shape[-1])
        return [(2, [batch, heads, s, skv, d]), (2, [batch, heads, s, skv, dv])]
    return []


class FlopCounter(TorchDispatchMode):
    """Every counted product of the ops run inside it, in order: terms = [(coefficient, [dims]), ...]."""

    def __init__(self):
        super().__init__()
        self.terms = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        self.terms.extend(_product_terms(name, args, out[0] if isinstance(out, (tuple, list)) else out))
        return out

    def total(self):
        count = 0
        for coefficient, dims in self.terms:
            product = coefficient
            for d in dims:
                product *= d
            count += product
        return count
