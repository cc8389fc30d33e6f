# ---- KernelLoop's patch runtime (python/kernelloop/model_patch_runtime.py, copied into every patch module
# kernelloop-cli model-patch writes; the table of kernels follows it).
#
#   import patch; fast = patch.apply(model)      # a patched copy; the model itself is left as it was
#   fast(*inputs); print(patch.report())         # calls, fallbacks and why, per kernel
#
# Each winning kernel is registered as a PyTorch custom operator: torch.library.custom_op where the
# installed PyTorch has it (2.4 and later), else torch.library.Library (1.13 has it); triton_op and
# wrap_triton (2.6 and later) are detected and named in describe(), used for Triton sources only. It is put
# back where the capture found it: a graph rewrite (torch.fx) of the operators it replaces, or the
# replacement of a module's forward. At every call its inputs are checked against the shapes, dtypes and
# strides it was verified for; anything else runs the original PyTorch code, counted as a fallback.
import base64 as _kl_base64
import copy as _kl_copy
import ctypes as _kl_ctypes
import hashlib as _kl_hashlib
import inspect as _kl_inspect
import json as _kl_json
import time as _kl_time

import torch as _kl_torch

_KL_DTYPES = {"f16": _kl_torch.float16, "bf16": _kl_torch.bfloat16, "f32": _kl_torch.float32,
              "f64": _kl_torch.float64, "i8": _kl_torch.int8, "u8": _kl_torch.uint8, "i32": _kl_torch.int32,
              "i64": _kl_torch.int64}
_kl_force_fallback = [False]  # model-check times the original operators through the same wrappers


def registration():
    """How the kernels are registered with this PyTorch, in words."""
    lib = _kl_torch.library
    if hasattr(lib, "custom_op"):
        text = "torch.library.custom_op (PyTorch %s)" % _kl_torch.__version__
    else:
        text = "torch.library.Library (PyTorch %s has no custom_op)" % _kl_torch.__version__
    if hasattr(lib, "triton_op") and hasattr(lib, "wrap_triton"):
        text += "; triton_op/wrap_triton available"
    else:
        text += "; no triton_op/wrap_triton here (PyTorch 2.6+): Triton kernels load as cubins"
    return text


def _contiguous_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(int(d), 1)
    return list(reversed(strides))


def _flat(value, out):
    if isinstance(value, _kl_torch.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _flat(v, out)
    return out


def _rebuild(flat, structure):
    if isinstance(structure, int):
        return flat[structure]
    return tuple(_rebuild(flat, s) for s in structure)


def _shift(structure, offset):
    if isinstance(structure, int):
        return structure + offset
    return [_shift(s, offset) for s in structure]


class _CudaCubin:
    """A cubin launched through the CUDA driver (no compiler at the user's site). NEEDS A GPU TO TEST: this
    path was written without one and has not run yet."""

    def __init__(self, entry):
        self.entry = entry
        self.cuda = None

    def _load(self):
        cuda = _kl_ctypes.CDLL("libcuda.so.1")
        _kl_torch.cuda.init()  # PyTorch's context is the current one
        image = _kl_base64.b64decode(self.entry["cubin_b64"])
        module = _kl_ctypes.c_void_p()
        if cuda.cuModuleLoadData(_kl_ctypes.byref(module), _kl_ctypes.c_char_p(image)) != 0:
            raise RuntimeError("cuModuleLoadData failed for %s" % self.entry["name"])
        self.functions = []
        for launch in self.entry["launches"]:
            function = _kl_ctypes.c_void_p()
            if cuda.cuModuleGetFunction(_kl_ctypes.byref(function), module, launch["symbol"].encode()) != 0:
                raise RuntimeError("cuModuleGetFunction failed for %s" % launch["symbol"])
            if launch.get("shared_bytes", 0) > 48 * 1024:
                cuda.cuFuncSetAttribute(function, 8, int(launch["shared_bytes"]))  # MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.functions.append(function)
        self.cuda = cuda

    def __call__(self, *tensors):
        if self.cuda is None:
            self._load()
        buffers = dict(zip([i["name"] for i in self.entry["inputs"]], tensors))
        outputs = []
        for o in self.entry["outputs"]:
            buffers[o["name"]] = _kl_torch.empty(o["shape"], dtype=_KL_DTYPES[o["dtype"]], device=tensors[0].device)
            outputs.append(buffers[o["name"]])
        for s in self.entry.get("scratch", []):
            buffers[s["name"]] = _kl_torch.zeros(s["bytes"], dtype=_kl_torch.uint8, device=tensors[0].device)
        stream = _kl_torch.cuda.current_stream().cuda_stream
        for function, launch in zip(self.functions, self.entry["launches"]):
            values = []
            for a in launch["args"]:
                if a["kind"] == "buffer":
                    values.append(_kl_ctypes.c_uint64(buffers[a["buffer"]].data_ptr()))
                else:
                    ctype = {"i32": _kl_ctypes.c_int32, "i64": _kl_ctypes.c_int64, "f32": _kl_ctypes.c_float,
                             "f64": _kl_ctypes.c_double, "u8": _kl_ctypes.c_uint8, "i8": _kl_ctypes.c_int8}[a["type"]]
                    values.append(ctype(a["value"]))
            params = (_kl_ctypes.c_void_p * len(values))(*[_kl_ctypes.cast(_kl_ctypes.pointer(v), _kl_ctypes.c_void_p)
                                                          for v in values])
            g, b = launch["grid"], launch["block"]
            status = self.cuda.cuLaunchKernel(function, g[0], g[1], g[2], b[0], b[1], b[2],
                                              int(launch.get("shared_bytes", 0)), _kl_ctypes.c_void_p(stream),
                                              params, None)
            if status != 0:
                raise RuntimeError("cuLaunchKernel failed (%d) for %s" % (status, launch["symbol"]))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _pytorch_function(entry):
    """The CPU stand-in for a kernel: a PyTorch function kernel(...) with the reference's signature."""
    namespace = {"__name__": "kl_winner_" + entry["name"]}
    exec(compile(entry["source"], entry["name"] + "/" + entry["file"], "exec"), namespace)  # noqa: S102
    if not callable(namespace.get("kernel")):
        raise RuntimeError("%s defines no kernel(...)" % entry["file"])
    return namespace["kernel"]


def _register(namespace_name, entry, fn):
    """fn as the custom operator kl_<hash>::<name>, with the registration this PyTorch has."""
    lib = _kl_torch.library
    op = "p_" + "".join(c if c.isalnum() else "_" for c in entry["name"])
    names = [i["name"] for i in entry["inputs"]]
    outs = len(entry["outputs"])
    if hasattr(lib, "custom_op"):
        returns = "_kl_torch.Tensor" if outs == 1 else "tuple[%s]" % ", ".join(["_kl_torch.Tensor"] * outs)
        text = "def %s(%s) -> %s:\n    return _kl_fn(%s)\n" % (
            op, ", ".join("%s: _kl_torch.Tensor" % n for n in names), returns, ", ".join(names))
        scope = {"_kl_torch": _kl_torch, "_kl_fn": fn}
        exec(text, scope)  # noqa: S102 - a typed signature custom_op can read
        registered = lib.custom_op("%s::%s" % (namespace_name, op), mutates_args=())(scope[op])
        return registered
    if namespace_name not in _kl_libraries:
        _kl_libraries[namespace_name] = lib.Library(namespace_name, "DEF")
    library = _kl_libraries[namespace_name]
    library.define("%s(%s) -> %s" % (op, ", ".join("Tensor %s" % n for n in names),
                                     "Tensor" if outs == 1 else "(%s)" % ", ".join(["Tensor"] * outs)))
    library.impl(op, fn, "CompositeExplicitAutograd")
    return getattr(getattr(_kl_torch.ops, namespace_name), op)


_kl_libraries = {}


class PatchedOperator:
    """One winner, its guard and its counts."""

    def __init__(self, entry, namespace_name):
        self.entry = entry
        self.name = entry["name"]
        self.kind = entry["kind"]
        self.calls = 0
        self.fallbacks = 0
        self.last_fallback = ""
        self.kernel_seconds = 0.0
        self.fallback_seconds = 0.0
        self.applied = False
        self.why = ""
        if self.kind == "pytorch-function":
            fn = _pytorch_function(entry)
        elif self.kind == "cuda-cubin":
            fn = _CudaCubin(entry)  # NEEDS A GPU TO TEST
        else:
            raise RuntimeError("unknown kernel kind %r" % self.kind)
        self.op = _register(namespace_name, entry, fn)

    def guard(self, tensors):
        """None when the tensors are what the kernel was verified for, else why not. A tensor laid out as
        captured but not row-major is accepted and made row-major first (the problem verified row-major)."""
        if len(tensors) != len(self.entry["inputs"]):
            return "%d tensors, verified for %d" % (len(tensors), len(self.entry["inputs"]))
        for t, spec in zip(tensors, self.entry["inputs"]):
            if not isinstance(t, _kl_torch.Tensor):
                return "%s is not a tensor" % spec["name"]
            if list(t.shape) != spec["shape"]:
                return "%s is %s, verified for %s" % (spec["name"], list(t.shape), spec["shape"])
            if t.dtype != _KL_DTYPES[spec["dtype"]]:
                return "%s is %s, verified for %s" % (spec["name"], t.dtype, spec["dtype"])
            stride = list(t.stride())
            if stride != _contiguous_strides(spec["shape"]) and stride != spec["stride"]:
                return "%s has strides %s, verified for row-major" % (spec["name"], stride)
            if self.kind != "pytorch-function" and not t.is_cuda:
                return "%s is on %s; the kernel runs on the GPU" % (spec["name"], t.device)
        return None

    def constants_guard(self, constants):
        for value, spec in zip(constants, self.entry["spec"].get("constants", [])):
            if repr(value) != spec["value"]:
                return "%s is %r, verified for %s" % (spec["node"], value, spec["value"])
        return None

    def call(self, tensors, constants, fallback):
        """The kernel's outputs (flat, reshaped as verified), or the original's value after a fallback."""
        self.calls += 1
        start = _kl_time.perf_counter()  # the guard is part of what the patch costs
        why = "timing the original" if _kl_force_fallback[0] else (self.guard(tensors)
                                                                    or self.constants_guard(constants))
        if why:
            if not _kl_force_fallback[0]:
                self.fallbacks += 1
                self.last_fallback = why
            else:
                self.calls -= 1
            result = fallback()
            self.fallback_seconds += _kl_time.perf_counter() - start
            return None, result
        given = [t if list(t.stride()) == _contiguous_strides(list(t.shape)) else t.contiguous() for t in tensors]
        out = self.op(*given)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        out = [o.reshape(spec["shape"]) for o, spec in zip(out, self.entry["outputs"])]
        if out and out[0].is_cuda:
            _kl_torch.cuda.synchronize()  # timed as it is
        self.kernel_seconds += _kl_time.perf_counter() - start
        return out, None


def _namespace(table):
    digest = _kl_hashlib.sha1(_kl_json.dumps(table, sort_keys=True).encode()).hexdigest()[:10]
    return "kl_" + digest


def _trace(model, spec):
    import torch.fx as fx
    leaves = set(spec.get("leaves", []))

    class Tracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname in leaves or super().is_leaf_module(m, qualname)

    parameters = _kl_inspect.signature(model.forward).parameters
    concrete = {n: parameters[n].default for n in spec.get("concrete", []) if n in parameters}
    tracer = Tracer()
    graph = tracer.trace(model, concrete or None)
    return fx.GraphModule(tracer.root, graph)


def _rewrite(gm, patched, renamed):
    """Replaces the operator's nodes with one call through its guard; the nodes themselves stay reachable
    as the fallback (a GraphModule of the same subgraph over the same submodules). `renamed`: the nodes
    earlier rewrites replaced, by their old names (another kernel's output may be this one's input)."""
    import torch.fx as fx
    spec = patched.entry["spec"]
    nodes = {n.name: n for n in gm.graph.nodes}
    taken = [n for n in spec["nodes"] if n in renamed]
    if taken:
        return "its operators %s were put back by another kernel already" % ", ".join(taken)
    nodes.update(renamed)
    missing = [n for n in spec["nodes"] if n not in nodes]
    if missing:
        return "the model's graph has no node %s (another model or another PyTorch?)" % ", ".join(missing)
    group = [nodes[n] for n in spec["nodes"]]
    members = set(spec["nodes"])
    sub = fx.Graph()
    mapping = {}
    arguments = []  # nodes of gm passed to the call: the problem's inputs, then the constants
    for i in spec["inputs"]:
        placeholder = sub.placeholder(i["name"])
        if "node" in i:
            if i["node"] not in nodes:
                return "no node %s" % i["node"]
            source = nodes[i["node"]]
            mapping[source] = placeholder
            arguments.append(source)
        else:
            arguments.append(("attr", i["attr"]))
            mapping[("attr", i["attr"])] = placeholder
    constants = []
    for c in spec.get("constants", []):
        placeholder = sub.placeholder("c_" + c["node"])
        mapping[nodes[c["node"]]] = placeholder
        constants.append(nodes[c["node"]])

    def outside(n):
        if n in mapping:
            return mapping[n]
        if n.op == "get_attr":
            if ("attr", n.target) in mapping:
                return mapping[("attr", n.target)]
            copy = sub.get_attr(n.target)
            mapping[n] = copy
            return copy
        raise KeyError(n.name)

    try:
        for n in group:
            mapping[n] = sub.node_copy(n, outside)
    except KeyError as error:
        return "the operator reads %s, which the capture did not give it" % error
    outputs = [nodes[o["node"]] for o in spec["outputs"]]
    sub.output(tuple(mapping[o] for o in outputs))
    fallback = fx.GraphModule(gm, sub)
    flat_structures, offset = [], 0
    for o in spec["outputs"]:
        flat_structures.append(_shift(o["structure"], offset))
        offset += o["count"]

    def call(*values):
        tensors = list(values[:len(spec["inputs"])])
        consts = list(values[len(spec["inputs"]):])
        out, original = patched.call(tensors, consts, lambda: fallback(*tensors, *consts))
        if out is None:
            return original
        return tuple(_rebuild(out, s) for s in flat_structures)

    call.__name__ = "kl_" + patched.name
    with gm.graph.inserting_before(group[0]):
        args = []
        for a in arguments:
            args.append(gm.graph.get_attr(a[1]) if isinstance(a, tuple) else a)
        node = gm.graph.call_function(call, tuple(args + constants))
    if any(a is not None and not isinstance(a, tuple) and a in members for a in arguments):
        return "an input is made inside the group"
    for index, o in enumerate(outputs):
        with gm.graph.inserting_after(node):
            picked = gm.graph.call_function(_pick, (node, index))
        o.replace_all_uses_with(picked)
        renamed[o.name] = picked
    for n in reversed(group):
        if n.users:
            return "%s is still used inside the model" % n.name
        gm.graph.erase_node(n)
    return None


def _pick(values, index):
    return values[index]


def _replace_module(model, patched):
    spec = patched.entry["spec"]
    try:
        module = model.get_submodule(spec["module"])
    except AttributeError:
        return "the model has no module %s" % spec["module"]
    original = module.forward
    weights = [i["attr"] for i in spec["inputs"] if "attr" in i]

    def forward(*args, **kwargs):
        if kwargs:
            patched.calls += 1
            patched.fallbacks += 1
            patched.last_fallback = "called with keyword arguments"
            return original(*args, **kwargs)
        tensors = _flat(list(args), [])
        for path in weights:
            owner, _, leaf = path.rpartition(".")
            tensors.append(getattr(model.get_submodule(owner) if owner else model, leaf))
        out, result = patched.call(tensors, [], lambda: original(*args))
        return result if out is None else _rebuild(out, spec["structure"])

    module.forward = forward
    return None


def _load_operators():
    namespace_name = _namespace(KL_TABLE)
    operators = []
    for entry in KL_TABLE["ops"]:
        operators.append(PatchedOperator(entry, namespace_name))
    return operators


def apply(model):
    """A patched copy of `model`: each kernel put back where it was captured, guarded."""
    model = _kl_copy.deepcopy(model)
    gm = None
    renamed = {}
    for patched in OPERATORS:
        mode = patched.entry["spec"]["mode"]
        if mode == "graph":
            if gm is None:
                try:
                    gm = _trace(model, patched.entry["spec"])
                except Exception as error:  # noqa: BLE001
                    patched.why = "torch.fx cannot trace this model here: %s" % error
                    continue
            patched.why = _rewrite(gm, patched, renamed) or ""
        elif mode == "module":
            patched.why = _replace_module(model, patched) or ""
        else:
            patched.why = patched.entry["spec"].get("why", "no place in the model to put it")
        patched.applied = not patched.why
    if gm is not None:
        gm.graph.lint()
        gm.recompile()
        return gm
    return model


def report():
    """Per kernel: applied or why not, calls, fallbacks and the last guard that sent a call to PyTorch."""
    return [{"name": p.name, "kind": p.kind, "applied": p.applied, "why": p.why, "calls": p.calls,
             "fallbacks": p.fallbacks, "last_fallback": p.last_fallback, "kernel_seconds": p.kernel_seconds,
             "fallback_seconds": p.fallback_seconds, "share": p.entry.get("share", 0.0)} for p in OPERATORS]


def reset_counts():
    for p in OPERATORS:
        p.calls = p.fallbacks = 0
        p.last_fallback = ""
        p.kernel_seconds = p.fallback_seconds = 0.0


def describe():
    return "%d kernels from %s; %s" % (len(OPERATORS), KL_TABLE["model"].get("file", "?"), registration())
