"""One problem from one operator (or a fusion chain) of a captured model: its PyTorch reference, written as
a self-contained reference.py, its inputs as captured (shapes, dtypes, strides, value distributions),
its outputs, FLOPs and bytes, and where each input comes from in the model (for model-patch).

The reference is the model file as it is, then the operator's own code: for a graph (fx) the subgraph's
nodes as fx writes them, called on the model's submodules; for a module call (module-hooks) that module;
for an aten op that op. The model is built once (on the meta device where its __init__ allows, so no
weights are made) and the weights the operator reads are the problem's inputs, swapped in at each call.
Every reference is run here on the captured values and must give the captured outputs, or the problem is
left out, said why.
"""
import model_cost
from model_load import MODULE_NAME, Refusal, flat_tensors
from model_record import module_tensors

# The tensors of a nested output, flattened: written into each generated reference, which stands alone.
FLAT_HELPER = '''def _kl_flat(value, out):
    if isinstance(value, _kl_torch.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _kl_flat(v, out)
    return out
'''

REFERENCE_HEAD = '''

# ---- KernelLoop: {what} of the model {file}, at the model's own shapes (written by kernelloop-cli
# model). A kernel must compute what _kl_operator below does; the model's weights it reads are inputs.
import torch as _kl_torch
import importlib as _kl_importlib
from torch.overrides import TorchFunctionMode as _KlFunctionMode

_KL_SEED = {seed}
_KL_EVAL = {eval_mode}
_KL_WEIGHTS = {weights!r}  # input: the model's tensor it stands for
_KL_COPIED = {copied!r}  # inputs the operator writes into: it is given a copy, so its inputs stay as they were
_kl_root_cache = []
_KL_FACTORIES = {{"empty", "zeros", "ones", "full", "rand", "randn", "randint", "tensor", "arange", "eye",
                 "linspace", "empty_like", "zeros_like", "ones_like", "randn_like", "rand_like", "full_like"}}


class _KlMeta(_KlFunctionMode):
    """Builds the model on the meta device: its shapes, none of its memory (the weights are inputs)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {{}})
        if getattr(func, "__name__", "") in _KL_FACTORIES:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def _kl_root():
    if not _kl_root_cache:
        _kl_torch.manual_seed(_KL_SEED)
        if "get_model" in globals():
            model = get_model()
        else:
            init = list(get_init_inputs()) if "get_init_inputs" in globals() else []
            try:
                with _KlMeta():
                    model = Model(*init)
            except Exception:  # an __init__ that needs real values: built as it is
                model = Model(*init)
        model.train(not _KL_EVAL)
        _kl_root_cache.append(model)
    return _kl_root_cache[0]


def _kl_swap(root, given):
    touched = []
    for name, path in _KL_WEIGHTS.items():
        owner, _, leaf = path.rpartition(".")
        module = root.get_submodule(owner) if owner else root
        tensor = given[name]
        if leaf in module._parameters:
            module._parameters[leaf] = tensor
        elif leaf in module._buffers:
            module._buffers[leaf] = tensor.clone()  # running statistics are updated in place in training
        else:
            object.__setattr__(module, leaf, tensor)
        touched.append(module)
    for module in touched:
        names = getattr(module, "_flat_weights_names", None)
        if names:  # RNNs keep a list of their weights beside _parameters
            module._flat_weights = [getattr(module, n) if hasattr(module, n) else None for n in names]


{flat}'''

REFERENCE_TAIL = '''

def reference({signature}):
    given = {given}
    for name in _KL_COPIED:
        given[name] = given[name].clone()
    root = _kl_root()
    _kl_swap(root, given)
    out = _kl_flat(_kl_operator(root, given), [])
    return out[0] if len(out) == 1 else tuple(out)
'''

LITERAL_TYPES = (int, float, bool, str, type(None))


def literal(torch, value):
    """Python source for a constant argument, or None when it has none we can write."""
    if isinstance(value, LITERAL_TYPES):
        text = repr(value)
        return text if text not in ("inf", "-inf", "nan") else "float(%r)" % text
    if isinstance(value, torch.dtype):
        return "_kl_torch." + str(value).split(".", 1)[1]
    if isinstance(value, torch.device):
        return "_kl_torch.device(%r)" % str(value)
    if isinstance(value, torch.memory_format):
        return "_kl_torch." + str(value).split(".", 1)[1]
    if isinstance(value, torch.Size):
        return "_kl_torch.Size(%r)" % list(value)
    if isinstance(value, (tuple, list)):
        parts = [literal(torch, v) for v in value]
        if any(p is None for p in parts):
            return None
        return ("(%s,)" % ", ".join(parts)) if isinstance(value, tuple) else "[%s]" % ", ".join(parts)
    if isinstance(value, slice):
        parts = [literal(torch, v) for v in (value.start, value.stop, value.step)]
        return None if None in parts else "slice(%s)" % ", ".join(parts)
    if value is Ellipsis:
        return "..."
    return None


def distribution(torch, t):
    """How a problem draws this input, from the values the model gave it."""
    values = t.detach().double().flatten()
    if values.numel() == 0:
        return {"kind": "normal", "mean": 0.0, "std": 1.0}
    if not t.is_floating_point():
        return {"kind": "integers", "low": int(values.min()), "high": int(values.max())}
    finite = values[values.isfinite()]
    if finite.numel() == 0:
        return {"kind": "normal", "mean": 0.0, "std": 1.0}
    low, high = float(finite.min()), float(finite.max())
    if low == high:
        return {"kind": "uniform", "low": low - 0.5, "high": low + 0.5}  # a constant would let a kernel ignore it
    if bool((finite == finite.round()).all()) and high - low <= 16:
        return {"kind": "integers", "low": int(low), "high": int(high)}  # masks, indices kept whole
    if low >= 0.0:
        return {"kind": "uniform", "low": low, "high": high}  # after a ReLU, a variance: never negative
    return {"kind": "normal", "mean": float(finite.mean()), "std": max(float(finite.std()), 1e-3)}


class Names:
    """C identifiers, unique within a problem."""

    def __init__(self):
        self.taken = set()

    def make(self, hint):
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "t"
        if name[0].isdigit():
            name = "t_" + name
        name = name[:100]
        base, n = name, 1
        while name in self.taken:
            n += 1
            name = "%s_%d" % (base, n)
        self.taken.add(name)
        return name


class ProblemDraft:
    def __init__(self, name):
        self.name = name
        self.inputs = []  # (name, tensor, source dict)
        self.outputs = []  # (name, tensor)
        self.reference = ""
        self.flops = 0
        self.bytes = 0
        self.matrix = False
        self.patch = {}
        self.ops = []
        self.copied = []


def _header(loaded, what, weights, copied):
    return loaded.source.rstrip("\n") + "\n" + REFERENCE_HEAD.format(
        what=what, file=loaded.path.rsplit("/", 1)[-1], seed=loaded.seed, eval_mode=loaded.mode == "eval",
        weights=weights, copied=copied, flat=FLAT_HELPER)


def _tail(draft):
    names = [n for n, _, _ in draft.inputs]
    return REFERENCE_TAIL.format(signature=", ".join(names),
                                 given="{%s}" % ", ".join("%r: %s" % (n, n) for n in names))


def fx_problem(torch, captured, op_ids, name, values, records):
    """The subgraph of fx nodes `op_ids` as one problem."""
    import torch.fx as fx
    gm = captured.fx.gm
    loaded = captured.loaded
    group = set(op_ids)
    nodes = [n for n in gm.graph.nodes if n.name in group]
    draft = ProblemDraft(name)
    draft.ops = list(op_ids)
    names = Names()
    graph = fx.Graph()
    mapping = {}
    weights = {}
    sources = []
    constants = []  # values of non-tensor arguments, written into the reference; the patch checks them

    def add_weight(role, path, tensor):
        if path in [s.get("attr") for _, _, s in draft.inputs]:
            return
        input_name = names.make(path.replace(".", "_"))
        weights[input_name] = path
        draft.inputs.append((input_name, tensor, {"attr": path, "role": role}))

    def outside(n):
        if n in mapping:
            return mapping[n]
        if n.op == "get_attr":
            owner, _, leaf = n.target.rpartition(".")
            module = gm.get_submodule(owner) if owner else gm
            value = getattr(module, leaf)
            copy = graph.get_attr(n.target)
            mapping[n] = copy
            if torch.is_tensor(value):
                role = ("parameter" if leaf in module._parameters else "buffer" if leaf in module._buffers
                        else "constant")
                add_weight(role, n.target, value)
            return copy
        value = values.get(n.name)
        if torch.is_tensor(value):
            placeholder = graph.placeholder(names.make(n.name))
            mapping[n] = placeholder
            draft.inputs.append((placeholder.name, value, {"node": n.name, "role": "activation"}))
            sources.append(n.name)
            return placeholder
        text = literal(torch, value)
        if text is None:
            raise Refusal("unsupported-argument", "%s takes %s (%s), which is not a tensor or a constant we can "
                                                  "write" % (nodes[0].name, n.name, type(value).__name__))
        mapping[n] = value
        constants.append({"node": n.name, "value": repr(value)})
        return value

    for n in nodes:
        mapping[n] = graph.node_copy(n, outside)
        if n.op == "call_module":
            for role, path, t in module_tensors(torch, gm.get_submodule(n.target), n.target):
                add_weight(role, path, t)
    out_nodes = [n for n in nodes if any(u.name not in group for u in n.users) or not n.users]
    flat_outputs = []
    out_spec = []
    for n in out_nodes:
        tensors, structure = flat_tensors(torch, values[n.name])
        if not tensors or _has_none(structure):
            raise Refusal("unsupported-output", "%s gives %s, not tensors" % (n.name, type(values[n.name]).__name__))
        out_spec.append({"node": n.name, "structure": structure, "count": len(tensors)})
        flat_outputs.extend(tensors)
    graph.output(tuple(mapping[n] for n in out_nodes) if len(out_nodes) > 1 else mapping[out_nodes[0]])
    code = graph.python_code(root_module="self")
    prelude = [_global_line(torch, g, obj) for g, obj in code.globals.items()]
    body = code.src.replace("def forward(self", "def _kl_subgraph(self", 1)
    ops = [records[i] for i in op_ids]
    draft.copied = [n for n, _, s in draft.inputs if s["role"] == "activation"] if any(o.mutates for o in ops) else []
    what = ("operators %s" % ", ".join(op_ids)) if len(op_ids) > 1 else "operator %s (%s)" % (op_ids[0], ops[0].label)
    placeholders = [n for n, _, s in draft.inputs if s["role"] == "activation"]
    draft.reference = (_header(loaded, what, weights, draft.copied) + "\n" + "\n".join(prelude) + "\n" + body
                       + "\n\ndef _kl_operator(root, given):\n    return _kl_subgraph(root%s)\n"
                       % "".join(", given[%r]" % p for p in placeholders) + _tail(draft))
    draft.outputs = [(names.make("y" if len(flat_outputs) == 1 else "y%d" % i), t) for i, t in enumerate(flat_outputs)]
    draft.flops = sum(o.flops for o in ops)
    draft.matrix = any(o.matrix for o in ops)
    reads = [t for _, t, _ in draft.inputs]
    draft.bytes = ops[0].bytes if len(ops) == 1 else model_cost.moved_bytes(torch, reads, flat_outputs)
    draft.patch = {"mode": "graph", "nodes": list(op_ids), "outputs": out_spec,
                   "inputs": [dict(s, name=n) for n, _, s in draft.inputs], "constants": constants,
                   "leaves": sorted(captured.fx.leaves), "concrete": sorted(captured.fx.concrete)}
    return draft


def _has_none(structure):
    if structure is None:
        return True
    return isinstance(structure, list) and any(_has_none(s) for s in structure)


def _global_line(torch, name, obj):
    """A global the fx code uses, as a line of the reference."""
    import builtins
    import types
    if obj is torch:
        return "%s = _kl_torch" % name
    if obj is type(None):
        return "%s = type(None)" % name
    if isinstance(obj, types.ModuleType):
        return "%s = _kl_importlib.import_module(%r)" % (name, obj.__name__)
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module == "builtins" and hasattr(builtins, qualname or ""):
        return "%s = %s" % (name, qualname)
    if module == MODULE_NAME and qualname:
        return "%s = %s" % (name, qualname)  # defined in the model file, above
    if module and qualname and "<" not in qualname:
        return "%s = _kl_importlib.import_module(%r).%s" % (name, module, qualname)
    text = literal(torch, obj)
    if text is not None:
        return "%s = %s" % (name, text)
    if obj is float("inf") or repr(obj) in ("inf", "nan"):
        return "%s = float(%r)" % (name, repr(obj))
    raise Refusal("unsupported-argument", "the subgraph uses %r (%s), which the reference cannot name"
                  % (name, type(obj).__name__))


def _arg_template(torch, value, draft, names, prefix):
    """Source for one call argument: tensors become the problem's inputs (given[...]), the rest literals."""
    if torch.is_tensor(value):
        input_name = names.make(prefix)
        draft.inputs.append((input_name, value, {"arg": len(draft.inputs), "role": "activation"}))
        return "given[%r]" % input_name
    if isinstance(value, (tuple, list)):
        parts = [_arg_template(torch, v, draft, names, prefix) for v in value]
        return ("(%s,)" % ", ".join(parts)) if isinstance(value, tuple) else "[%s]" % ", ".join(parts)
    text = literal(torch, value)
    if text is None:
        raise Refusal("unsupported-argument", "an argument is a %s, not a tensor or a constant we can write"
                      % type(value).__name__)
    return text


def module_problem(torch, captured, op, name, value):
    """One leaf module call (module-hooks) as a problem: that module on the captured arguments."""
    loaded = captured.loaded
    draft = ProblemDraft(name)
    draft.ops = [op.id]
    names = Names()
    args = value["args"]
    parts = [_arg_template(torch, a, draft, names, "x%d" % i) for i, a in enumerate(args)]
    module = loaded.model.get_submodule(op.module_path)
    weights = {}
    for role, path, t in module_tensors(torch, module, op.module_path):
        input_name = names.make(path.replace(".", "_"))
        weights[input_name] = path
        draft.inputs.append((input_name, t, {"attr": path, "role": role}))
    tensors, structure = flat_tensors(torch, value["result"])
    if not tensors or _has_none(structure):
        raise Refusal("unsupported-output", "%s gives no tensors" % op.label)
    draft.copied = [n for n, _, s in draft.inputs if s["role"] == "activation"] if op.mutates else []
    draft.reference = (_header(loaded, "the module call %s" % op.label, weights, draft.copied)
                       + "\n\ndef _kl_operator(root, given):\n    return root.get_submodule(%r)(%s)\n"
                       % (op.module_path, ", ".join(parts)) + _tail(draft))
    draft.outputs = [(names.make("y" if len(tensors) == 1 else "y%d" % i), t) for i, t in enumerate(tensors)]
    draft.flops, draft.bytes, draft.matrix = op.flops, op.bytes, op.matrix
    draft.patch = {"mode": "module", "module": op.module_path, "structure": structure, "arg_count": len(args),
                   "inputs": [dict(s, name=n) for n, _, s in draft.inputs]}
    return draft


ATEN_REFERENCE = '''# ---- KernelLoop: the aten op {label} of the model {file}, at the model's own shapes (written by
# kernelloop-cli model from its aten op list: the model's forward could not be traced as a graph).
import torch as _kl_torch


{flat}

def reference({signature}):
    given = {given}
    out = _kl_flat(_kl_torch.ops.aten.{packet}.{overload}({args}), [])
    return out[0] if len(out) == 1 else tuple(out)
'''


def aten_problem(torch, captured, op, name, value):
    draft = ProblemDraft(name)
    draft.ops = [op.id]
    names = Names()
    parts = [_arg_template(torch, a, draft, names, "x%d" % i) for i, a in enumerate(value["args"])]
    for key, v in value["kwargs"].items():
        parts.append("%s=%s" % (key, _arg_template(torch, v, draft, names, key)))
    tensors, _ = flat_tensors(torch, value["result"])
    if not tensors:
        raise Refusal("unsupported-output", "%s gives no tensors" % op.label)
    if op.mutates:
        raise Refusal("unsupported-argument", "%s writes into its inputs" % op.label)
    input_names = [n for n, _, _ in draft.inputs]
    draft.reference = ATEN_REFERENCE.format(
        label=op.label, file=captured.loaded.path.rsplit("/", 1)[-1], signature=", ".join(input_names),
        given="{%s}" % ", ".join("%r: %s" % (n, n) for n in input_names), packet=op.aten.overloadpacket.__name__,
        overload=op.aten._overloadname, args=", ".join(parts), flat=FLAT_HELPER)
    draft.outputs = [(names.make("y" if len(tensors) == 1 else "y%d" % i), t) for i, t in enumerate(tensors)]
    draft.flops, draft.bytes, draft.matrix = op.flops, op.bytes, op.matrix
    draft.patch = {"mode": "none", "why": "an aten op of the op list: the model has no graph to put a kernel in"}
    return draft


def check_reference(torch, draft):
    """Runs the written reference on the captured inputs: it must give the captured outputs."""
    namespace = {"__name__": "kl_reference_check"}
    try:
        exec(compile(draft.reference, "reference.py", "exec"), namespace)  # noqa: S102 - our own reference
        given = {n: t.detach().clone() for n, t, _ in draft.inputs}
        with torch.no_grad():
            got = namespace["reference"](**given)
    except Exception as error:  # noqa: BLE001
        raise Refusal("reference-failed", "the written reference raised %s: %s" % (type(error).__name__, error))
    got = list(got) if isinstance(got, tuple) else [got]
    if len(got) != len(draft.outputs):
        raise Refusal("reference-mismatch", "the reference gives %d outputs, the model %d" % (len(got),
                                                                                            len(draft.outputs)))
    worst = 0.0
    for g, (_, want) in zip(got, draft.outputs):
        if g.shape != want.shape or g.dtype != want.dtype:
            raise Refusal("reference-mismatch", "the reference gives %s %s where the model gave %s %s"
                          % (list(g.shape), g.dtype, list(want.shape), want.dtype))
        if g.numel():
            diff = float((g.double() - want.double()).abs().nan_to_num(0.0).max())
            scale = float(want.double().abs().nan_to_num(0.0).max()) if want.is_floating_point() else 1.0
            if diff > 1e-4 * max(1.0, scale):
                raise Refusal("reference-mismatch", "the reference on the captured inputs is %.3g off the model's "
                                                    "values" % diff)
            worst = max(worst, diff)
    return worst


def problem_reply(torch, draft, checked):
    """What C++ writes the folder from."""
    def tensor(name, t, source=None):
        entry = {"name": name, "dtype": model_cost.dtype_name(t), "shape": [int(d) for d in t.shape],
                 "stride": [int(s) for s in t.stride()]}
        if source is not None:
            entry["distribution"] = distribution(torch, t)
            entry["role"] = source["role"]
            if "attr" in source:
                entry["weight"] = source["attr"]
        return entry

    for name, t, _ in draft.inputs + [(n, t, None) for n, t in draft.outputs]:
        if model_cost.dtype_name(t) not in model_cost.PROBLEM_DTYPES:
            raise Refusal("unsupported-dtype", "%s is %s; a problem's tensors are f16, bf16, f32, f64, i8, u8, i32 "
                                               "or i64" % (name, t.dtype))
        if t.dim() == 0:
            raise Refusal("unsupported-shape", "%s is a 0-d tensor" % name)
        if t.numel() == 0:
            raise Refusal("unsupported-shape", "%s has no elements" % name)
    return {"name": draft.name, "ops": draft.ops, "inputs": [tensor(n, t, s) for n, t, s in draft.inputs],
            "outputs": [tensor(n, t) for n, t in draft.outputs], "flops": int(draft.flops),
            "bytes": int(max(draft.bytes, 1)), "matrix_product": bool(draft.matrix), "reference_source": draft.reference,
            "checked_max_diff": checked, "copied_inputs": draft.copied, "patch": draft.patch}
