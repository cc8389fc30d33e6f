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

The forward runs on meta tensors (shapes, no memory) at two sizes, as the importer runs shapes; each
dimension of each product is fitted to a symbol (dim_expression) and the products are summed, so
matmul at M, N, K gives "2 * M * N * K". The expression is checked against a count at the main sizes
(meta again); any mismatch or a dimension that follows no symbol gives no expression, with the reason.
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


def count_terms(problem, values, discovery_mode, device="meta"):
    """The products of one forward pass at `values` with tensors on `device` (discovery_mode: the
    importer's, which puts factories' tensors there)."""
    torch = problem.torch
    inputs = problem.call("get_inputs", device, values)
    init = problem.call("get_init_inputs", device, values)
    torch.manual_seed(1234)
    with discovery_mode(torch, device)():
        model = problem.model_class(*init)
    if device == "meta":
        model = model.to("meta")
    counter = FlopCounter()
    with torch.no_grad(), discovery_mode(torch, device)(), counter:
        model(*inputs)
    return counter


def _factor(expression):
    return "(%s)" % expression if (" + " in expression or " - " in expression) else expression


def flops_expression(problem, symbols, values_a, values_b, main, importer):
    """(expression, None) or (None, why). `importer`: the module with dim_expression, evaluate and
    discovery_mode (kernelbench_import)."""
    dim_expression, evaluate, mode = importer.dim_expression, importer.evaluate, importer.discovery_mode
    try:
        a = count_terms(problem, values_a, mode)
        b = count_terms(problem, values_b, mode)
    except Exception as error:  # noqa: BLE001 - an op without a meta kernel: no FLOPs, not a failed import
        return None, "forward() on meta tensors raised %s: %s" % (type(error).__name__, error)
    if not a.terms:
        return None, "no matrix product or convolution to count"
    if len(a.terms) != len(b.terms):
        return None, "forward() runs %d products at one size and %d at another" % (len(a.terms), len(b.terms))
    summed = {}  # sorted symbolic factors → coefficient
    for (coefficient_a, dims_a), (coefficient_b, dims_b) in zip(a.terms, b.terms):
        if len(dims_a) != len(dims_b) or coefficient_a != coefficient_b:
            return None, "forward() runs different products at the two sizes"
        coefficient, factors = coefficient_a, []
        for da, db in zip(dims_a, dims_b):
            expression = dim_expression(da, db, symbols, values_a, values_b)
            if expression is None:
                return None, "a product's dimension (%d, then %d) follows no size symbol" % (da, db)
            if expression.isdigit():
                coefficient *= int(expression)
            else:
                factors.append(_factor(expression))
        key = tuple(sorted(factors, key=lambda f: (symbols.index(f) if f in symbols else len(symbols), f)))
        summed[key] = summed.get(key, 0) + coefficient
    terms = []
    for factors, coefficient in summed.items():
        if coefficient == 0:
            continue
        terms.append(" * ".join([str(coefficient)] + list(factors)) if factors else str(coefficient))
    expression = " + ".join(terms)
    try:
        expected = count_terms(problem, main, mode).total()
    except Exception:  # noqa: BLE001 - the two small sizes ran; the main one must too, else unchecked
        return None, "forward() on meta tensors fails at the main sizes"
    got = evaluate(expression, main)
    if got != expected:
        return None, "the fitted expression %s gives %d at the main sizes, the count %d" % (expression, got, expected)
    return expression, None
