"""What each operator of a captured model costs at the model's shapes: FLOPs counted from the aten ops it
runs (a __torch_dispatch__ mode sees them whatever the Python above did), bytes from its tensors.

The counting rules, stated in every ranking (the ranking is an ESTIMATE from these, never a measurement):
  matrix products (mm, addmm, bmm, baddbmm, mv, dot, convolution, scaled dot-product attention):
      2 FLOPs per multiply-add (FlopCounterMode's formulas)
  element-wise ops: 1 FLOP per output element; reductions and softmax: 1 per input element (5 for
      softmax/log-softmax); normalisations: 8 per element; views and copies: 0
  bytes: every tensor the operator reads (inputs, weights) and writes (outputs) once; a view moves none
"""
from torch.utils._python_dispatch import TorchDispatchMode

ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i32": 4, "i64": 8, "bool": 1,
                 "i16": 2, "other": 4}
DTYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8",
               "uint8": "u8", "int32": "i32", "int64": "i64", "bool": "bool", "int16": "i16"}
PROBLEM_DTYPES = {"f16", "bf16", "f32", "f64", "i8", "u8", "i32", "i64"}  # what a problem's tensor may be

MATRIX_OPS = {"mm", "addmm", "bmm", "baddbmm", "mv", "dot", "convolution", "_convolution", "mkldnn_convolution",
              "_scaled_dot_product_attention", "scaled_dot_product_attention", "_scaled_dot_product_attention_math",
              "addbmm", "matmul", "linear"}
NORM_WORDS = ("batch_norm", "layer_norm", "group_norm", "instance_norm", "native_norm", "rms_norm")
REDUCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "var", "std", "var_mean", "std_mean", "logsumexp",
              "norm", "linalg_vector_norm", "prod", "argmax", "argmin", "cumsum", "_softmax", "_log_softmax",
              "softmax", "log_softmax", "any", "all", "avg_pool2d", "max_pool2d_with_indices", "avg_pool1d",
              "avg_pool3d", "max_pool3d_with_indices", "adaptive_avg_pool2d", "_adaptive_avg_pool2d",
              "adaptive_max_pool2d", "_adaptive_avg_pool3d", "max_pool2d", "max_pool1d", "adaptive_avg_pool1d",
              "mkldnn_max_pool2d", "_adaptive_avg_pool2d_backward"}
SOFTMAX = {"_softmax", "_log_softmax", "softmax", "log_softmax", "logsumexp"}
ELEMENTWISE = {"add", "sub", "mul", "div", "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "pow", "sqrt",
               "rsqrt", "neg", "abs", "clamp", "clamp_min", "clamp_max", "hardtanh", "leaky_relu", "elu", "where",
               "masked_fill", "threshold", "hardswish", "hardsigmoid", "erf", "minimum", "maximum", "reciprocal",
               "softplus", "mish", "log1p", "expm1", "sin", "cos", "square", "rsub", "addcmul", "addcdiv", "lerp",
               "sign", "floor", "ceil", "round", "fmod", "remainder", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_not",
               "logical_not", "logical_and", "logical_or", "glu", "prelu", "celu", "selu", "logit", "erfinv",
               "tril", "triu", "fill", "zero", "gelu_", "_prelu_kernel", "hardshrink", "softshrink", "relu6",
               "true_divide", "exp2", "log2", "sgn", "nan_to_num", "silu_", "mish_"}
RANDOM_OPS = {"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal", "bernoulli",
              "multinomial", "randperm", "native_dropout", "uniform", "exponential", "random", "cauchy",
              "log_normal", "geometric", "poisson", "rrelu_with_noise"}
COPIES = {"clone", "contiguous", "copy", "_to_copy", "cat", "stack", "index_select", "gather", "embedding",
          "constant_pad_nd", "repeat", "expand_copy", "index", "roll", "flip", "_unsafe_index", "scatter",
          "split_with_sizes_copy", "unsafe_split", "narrow_copy", "pixel_shuffle", "channel_shuffle",
          "reflection_pad2d", "replication_pad2d", "upsample_nearest2d", "upsample_bilinear2d", "masked_select"}


def dtype_name(tensor):
    return DTYPE_NAMES.get(str(tensor.dtype).replace("torch.", ""), "other")


def tensor_bytes(tensor):
    return int(tensor.numel()) * ELEMENT_BYTES[dtype_name(tensor)]


def _numel(shape):
    count = 1
    for d in shape:
        count *= int(d)
    return count


def _base_name(name):
    return name[:-1] if name.endswith("_") and not name.startswith("_") else name


def matrix_flops(name, args, out):
    """Multiply-adds x 2 of one matrix product, or None for an op that is not one."""
    try:
        if name in ("mm", "addmm"):
            a, b = (args[0], args[1]) if name == "mm" else (args[1], args[2])
            return 2 * int(a.shape[0]) * int(a.shape[1]) * int(b.shape[1])
        if name in ("bmm", "baddbmm"):
            a, b = (args[0], args[1]) if name == "bmm" else (args[1], args[2])
            return 2 * int(a.shape[0]) * int(a.shape[1]) * int(a.shape[2]) * int(b.shape[2])
        if name == "addbmm":
            a, b = args[1], args[2]
            return 2 * int(a.shape[0]) * int(a.shape[1]) * int(a.shape[2]) * int(b.shape[2])
        if name == "mv":
            return 2 * int(args[0].shape[0]) * int(args[0].shape[1])
        if name == "dot":
            return 2 * int(args[0].shape[0])
        if name in ("convolution", "_convolution", "mkldnn_convolution"):
            x, w = args[0], args[1]
            transposed = bool(args[6]) if name != "mkldnn_convolution" and len(args) > 6 else False
            if transposed:
                return 2 * _numel(x.shape) * int(w.shape[1]) * _numel(w.shape[2:])
            return 2 * _numel(out.shape) * int(w.shape[1]) * _numel(w.shape[2:])
        if "scaled_dot_product" in name:
            q, k, v = args[0], args[1], args[2]
            lead = _numel(q.shape[:-1])
            return 2 * lead * int(k.shape[-2]) * (int(q.shape[-1]) + int(v.shape[-1]))
    except (AttributeError, IndexError, TypeError):
        return None
    return None


class OpCounter(TorchDispatchMode):
    """Counts every aten op run inside it into the bucket `current` names: FLOPs, matrix products,
    norms, random draws."""

    def __init__(self, torch):
        super().__init__()
        self.torch = torch
        self.current = None
        self.buckets = {}
        self.on_free_op = None  # set by the aten op list capture: called after each op outside a leaf module
        self.free_count = 0
        self.inside = False

    def bucket(self, key):
        return self.buckets.setdefault(key, {"flops": 0, "matrix": False, "conv": False, "norm": False,
                                             "random": [], "reduction": False, "elementwise": True, "aten": []})

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.inside:  # the capture's own ops (copies of what it keeps) are not the model's
            return out
        name = func.overloadpacket.__name__
        base = _base_name(name)
        key = self.current
        free = key is None and self.on_free_op is not None
        if free:  # the aten op list: each op outside a leaf module is its own operator
            key = "aten#%d" % self.free_count
            self.free_count += 1
        b = self.bucket(key)
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        flops = matrix_flops(base, args, first)
        torch = self.torch
        if flops is not None:
            b["matrix"] = True
            b["conv"] = b["conv"] or "convolution" in base
            b["elementwise"] = False
        elif any(word in base for word in NORM_WORDS):
            b["norm"] = True
            b["elementwise"] = False
            flops = 8 * _numel(args[0].shape) if args and torch.is_tensor(args[0]) else 0
        elif base in REDUCTIONS:
            b["reduction"] = True
            b["elementwise"] = False
            size = _numel(args[0].shape) if args and torch.is_tensor(args[0]) else 0
            flops = (5 if base in SOFTMAX else 1) * size
        elif base in ELEMENTWISE:
            flops = _numel(first.shape) if torch.is_tensor(first) else 0
        else:
            flops = 0
            if base in RANDOM_OPS:
                b["random"].append(name)
            elif base not in COPIES and not _is_view(torch, base, args, first):
                b["elementwise"] = False
        b["flops"] += int(flops)
        if len(b["aten"]) < 64:
            b["aten"].append(name)
        if free:
            self.inside = True
            try:
                self.on_free_op(key, func, args, kwargs, out)
            finally:
                self.inside = False
        return out


def _is_view(torch, name, args, out):
    if not torch.is_tensor(out):
        return True  # sizes, scalars: no data
    for a in args:
        if torch.is_tensor(a) and same_storage(a, out):
            return True
    return name in ("view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "unsqueeze",
                    "squeeze", "select", "slice", "detach", "alias", "unbind", "split", "chunk", "as_strided",
                    "lift_fresh", "_reshape_alias")


def same_storage(a, b):
    try:
        return a.storage().data_ptr() == b.storage().data_ptr() and a.numel() > 0
    except (RuntimeError, NotImplementedError):
        return False


def kind_of(bucket, label):
    """One word for what an operator is, from the aten ops it ran."""
    lowered = label.lower()
    if any(w in lowered for w in ("lstm", "gru", "rnn")):
        return "rnn"
    if bucket["matrix"]:
        if "attention" in lowered:
            return "attention"
        return "conv" if bucket["conv"] else "matmul"
    if bucket["norm"]:
        return "norm"
    if bucket["reduction"]:
        return "reduction"
    if bucket["flops"] > 0 and bucket["elementwise"]:
        return "elementwise"
    if bucket["flops"] == 0:
        return "data-movement"
    return "other"


def moved_bytes(torch, reads, writes, computes=True):
    """Each distinct tensor read once and each output written once; an output that is a view of what it
    read moves nothing, unless the operator computed it there (an in-place op writes it back)."""
    seen = set()
    total = 0
    read_storages = []
    for t in reads:
        if not torch.is_tensor(t) or id(t) in seen:
            continue
        seen.add(id(t))
        total += tensor_bytes(t)
        read_storages.append(t)
    for t in writes:
        if not torch.is_tensor(t) or id(t) in seen:
            continue
        seen.add(id(t))
        if not computes and any(same_storage(r, t) for r in read_storages):
            continue
        total += tensor_bytes(t)
    return total


def is_view_of(torch, reads, writes):
    outs = [t for t in writes if torch.is_tensor(t)]
    return bool(outs) and all(any(torch.is_tensor(r) and same_storage(r, o) for r in reads) for o in outs)
