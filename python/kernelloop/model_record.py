"""Records a model's operator graph at its own sizes, with each operator's tensors (shape, dtype, stride),
FLOPs and bytes, in the first of three ways that works (and says which):

  fx                torch.fx.symbolic_trace: every call_module / call_function / call_method node
  fx-leaf-modules   the same with the model's own submodules whose forward fx cannot trace kept whole
  module-hooks      no graph (the model's own forward cannot be traced: control flow on values, tuples
                    unpacked, sizes read as numbers): each call of a torch.nn leaf module (forward hooks)
                    and each aten op outside one (a __torch_dispatch__ mode) is an operator

A traced graph must reproduce the model's output on the same inputs, else the next way is taken.
"""
import copy

import model_cost
from model_load import Refusal, flat_tensors

MAX_LEAF_TRIALS = 32


def meta(torch, t, role="activation", path=None):
    m = {"shape": [int(d) for d in t.shape], "dtype": model_cost.dtype_name(t), "stride": [int(s) for s in t.stride()],
         "role": role}
    if path:
        m["path"] = path
    return m


def module_tensors(torch, module, prefix):
    """Every tensor a module reads that is not an argument: parameters, buffers, plain tensor attributes."""
    found = []
    for name, sub in module.named_modules(prefix=prefix):
        for leaf, p in sub._parameters.items():
            if p is not None:
                found.append(("parameter", (name + "." if name else "") + leaf, p))
        for leaf, b in sub._buffers.items():
            if b is not None and (b.is_floating_point() or b.dim() > 0):  # not counters (num_batches_tracked)
                found.append(("buffer", (name + "." if name else "") + leaf, b))
        for leaf, v in vars(sub).items():
            if torch.is_tensor(v) and not leaf.startswith("_"):
                found.append(("constant", (name + "." if name else "") + leaf, v))
    return found


def _user_module(m):
    return not type(m).__module__.startswith("torch.")


class FxCapture:
    """A traced GraphModule over a copy of the model, and the way it was traced."""

    def __init__(self, torch, loaded):
        import torch.fx as fx
        self.torch = torch
        self.fx = fx
        self.loaded = loaded
        self.concrete = loaded.concrete_args()
        self.leaves = set()
        self.method = "fx"
        self.gm, first_error = self._trace(set())
        if self.gm is None:
            self.gm, self.leaves = self._trace_with_leaves(first_error)
            self.method = "fx-leaf-modules"
        self.note = ("torch.fx symbolic trace" if not self.leaves else
                     "torch.fx symbolic trace with these submodules kept whole (fx could not trace their "
                     "forward): %s" % ", ".join(sorted(self.leaves)))

    def _trace(self, leaves):
        fx = self.fx

        class Tracer(fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return qualname in leaves or super().is_leaf_module(m, qualname)

        try:
            root = copy.deepcopy(self.loaded.model)  # tracing may assign proxies to attributes
            tracer = Tracer()
            graph = tracer.trace(root, self.concrete or None)
            return fx.GraphModule(tracer.root, graph), None
        except Exception as error:  # noqa: BLE001 - any failure means: this way does not work
            return None, "%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else "")

    def _trace_with_leaves(self, first_error):
        model = self.loaded.model
        user = [name for name, m in model.named_modules() if name and _user_module(m)]
        if not user:
            raise _NoGraph(first_error)
        leaves = set(user)
        gm, error = self._trace(leaves)
        if gm is None:
            raise _NoGraph(first_error)
        # Open up the shallowest leaves first: as much of the model as fx can see.
        for name in sorted(user, key=lambda n: n.count("."))[:MAX_LEAF_TRIALS]:
            if name not in leaves or any(name.startswith(o + ".") for o in leaves):
                continue
            trial = leaves - {name}
            again, _ = self._trace(trial)
            if again is not None:
                leaves, gm = trial, again
        outermost = {n for n in leaves if not any(n.startswith(o + ".") for o in leaves if o != n)}
        return gm, outermost


class _NoGraph(Exception):
    pass


class Operator:
    """One operator as captured: what the ranking and the problems are made of."""

    def __init__(self, op_id, label, kind):
        self.id = op_id
        self.label = label
        self.kind = kind
        self.inputs = []  # meta dicts; non-tensor arguments are {"value": repr}
        self.outputs = []
        self.flops = 0
        self.bytes = 0
        self.random = []
        self.mutates = False
        self.view = False
        self.matrix = False
        self.module_path = None  # a leaf module's path (module-hooks, call_module)
        self.aten = None  # the aten op (module-hooks' free ops)
        self.structure = None  # how the outputs nest (lists of indices)

    def reply(self):
        r = {"id": self.id, "label": self.label, "kind": self.kind, "inputs": self.inputs, "outputs": self.outputs,
             "flops": self.flops, "bytes": self.bytes, "matrix_product": self.matrix, "view": self.view,
             "mutates_inputs": self.mutates}
        if self.random:
            r["random"] = sorted(set(self.random))
        return r


def _label(fx, gm, n):
    if n.op == "call_module":
        return "%s (%s)" % (n.target, type(gm.get_submodule(n.target)).__name__)
    if n.op == "call_method":
        return "Tensor.%s" % n.target
    try:
        return fx.node._get_qualified_name(n.target)
    except Exception:  # noqa: BLE001
        return getattr(n.target, "__name__", str(n.target))


def record_fx(torch, capture, inputs, seed, keep=()):
    """Runs the traced graph once on `inputs`: an Operator per node, and clones of the values of the nodes
    named in `keep` (as they were when made: a later in-place op does not change them)."""
    fx = capture.fx
    gm = capture.gm
    counter = model_cost.OpCounter(torch)
    keep = set(keep)
    ops, values = [], {}

    class Recorder(fx.Interpreter):
        def run_node(self, n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            if n.op not in ("call_module", "call_function", "call_method"):
                result = getattr(self, n.op)(n.target, args, kwargs)
                if n.name in keep:
                    values[n.name] = _clone(torch, result)
                return result
            reads, activations = [], []
            op = Operator(n.name, _label(fx, gm, n), "other")
            for x in n.all_input_nodes:
                v = self.env[x]
                if torch.is_tensor(v):
                    role, path = _attr_role(torch, gm, x)
                    op.inputs.append(meta(torch, v, role, path))
                    reads.append(v)
                    if role == "activation":
                        activations.append(v)
                else:
                    op.inputs.append({"value": "tensors" if isinstance(v, (tuple, list)) else _short(v)})
            if n.op == "call_module":
                op.module_path = n.target
                for role, path, t in module_tensors(torch, gm.get_submodule(n.target), n.target):
                    op.inputs.append(meta(torch, t, role, path))
                    reads.append(t)
            versions = [t._version for t in activations]
            counter.current = n.name
            try:
                result = getattr(self, n.op)(n.target, args, kwargs)
            finally:
                counter.current = None
            outs, op.structure = flat_tensors(torch, result)
            op.outputs = [meta(torch, t) for t in outs]
            _finish(torch, op, counter.bucket(n.name), reads, outs, activations, versions)
            ops.append(op)
            if n.name in keep:
                values[n.name] = _quietly(counter, lambda: _clone(torch, result))
            return result

    torch.manual_seed(seed)
    with torch.no_grad(), counter:
        try:
            output = Recorder(gm).run(*inputs)
        except Exception as error:  # noqa: BLE001
            raise Refusal("forward-failed", "the traced graph raised %s: %s" % (type(error).__name__, error))
    return ops, values, output


def _attr_role(torch, gm, node):
    if node.op != "get_attr":
        return "activation", None
    owner, _, leaf = node.target.rpartition(".")
    module = gm.get_submodule(owner) if owner else gm
    if leaf in module._parameters:
        return "parameter", node.target
    if leaf in module._buffers:
        return "buffer", node.target
    return "constant", node.target


def _clone(torch, value):
    if torch.is_tensor(value):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(torch, v) for v in value)
    return value


def _short(value):
    return repr(value)[:200]


def _finish(torch, op, bucket, reads, outs, activations, versions):
    """The operator's figures from what it ran; `mutates`: it wrote into an activation it was given
    (a buffer's in-place update, as batch norm's running statistics in training, is not counted)."""
    op.flops = bucket["flops"]
    op.matrix = bucket["matrix"]
    op.random = list(bucket["random"])
    op.kind = model_cost.kind_of(bucket, op.label)
    op.view = op.flops == 0 and model_cost.is_view_of(torch, reads, outs)
    op.bytes = 0 if op.view else model_cost.moved_bytes(torch, reads, outs, computes=op.flops > 0)
    op.mutates = any(t._version != v for t, v in zip(activations, versions))
    op.aten_ops = bucket["aten"]


def fusion_chains(capture, ops):
    """Fusion candidates: a matrix product, convolution or normalisation and the chain of element-wise
    operators after it, each the only user of the one before (what one kernel could do in one pass)."""
    by_name = {op.id: op for op in ops}
    nodes = {n.name: n for n in capture.gm.graph.nodes}
    chains = []
    for op in ops:
        if op.kind not in ("matmul", "conv", "norm") or op.random:
            continue
        chain = [op.id]
        current = nodes[op.id]
        while len(chain) < 6 and len(current.users) == 1:
            user = next(iter(current.users))
            follower = by_name.get(user.name)
            if follower is None or follower.kind != "elementwise" or follower.random:
                break
            chain.append(follower.id)
            current = user
        if len(chain) > 1:
            chains.append(chain)
    return chains


def record_hooks(torch, loaded, inputs, seed, keep=()):
    """The module-hooks capture: each leaf module call and each aten op outside one, in order."""
    model = loaded.model
    counter = model_cost.OpCounter(torch)
    keep = set(keep)
    ops, values = [], {}
    calls = {}
    stack = []
    handles = []

    def pre(path):
        def hook(module, args):
            index = calls.get(path, 0)
            calls[path] = index + 1
            op_id = "%s#%d" % (path, index)
            reads = [a for a in _flat(torch, list(args)) if torch.is_tensor(a)]
            tensors = module_tensors(torch, module, path)
            stack.append((op_id, module, args, reads + [t for _, _, t in tensors], reads,
                          [t._version for t in reads], tensors))
            if op_id in keep:
                values[op_id] = {"args": _quietly(counter, lambda: _clone(torch, list(args)))}
            counter.current = op_id
        return hook

    def post(path):
        def hook(module, args, result):
            op_id, _, call_args, reads, activations, versions, tensors = stack.pop()
            counter.current = stack[-1][0] if stack else None
            op = Operator(op_id, "%s (%s)" % (path, type(module).__name__), "other")
            op.module_path = path
            for a in _flat(torch, list(call_args)):  # never repr() a tensor here: that runs aten ops
                op.inputs.append(meta(torch, a) if torch.is_tensor(a) else {"value": _short(a)})
            for role, tpath, t in tensors:
                op.inputs.append(meta(torch, t, role, tpath))
            outs, op.structure = flat_tensors(torch, result)
            op.outputs = [meta(torch, t) for t in outs]
            _finish(torch, op, counter.bucket(op_id), reads, outs, activations, versions)
            ops.append(op)
            if op_id in keep:
                values[op_id]["result"] = _quietly(counter, lambda: _clone(torch, result))
        return hook

    parameters = {id(p): path for path, p in model.named_parameters()}
    parameters.update({id(b): path for path, b in model.named_buffers()})

    def free_op(op_id, func, args, kwargs, out):
        op = Operator(op_id, "aten.%s.%s" % (func.overloadpacket.__name__, func._overloadname), "other")
        op.aten = func
        reads = [a for a in _flat(torch, list(args) + list(kwargs.values())) if torch.is_tensor(a)]
        for a in reads:
            path = parameters.get(id(a))
            op.inputs.append(meta(torch, a, "parameter" if path else "activation", path))
        outs, op.structure = flat_tensors(torch, out)
        op.outputs = [meta(torch, t) for t in outs]
        _finish(torch, op, counter.bucket(op_id), reads, outs, [], [])
        op.mutates = func._schema.is_mutable if hasattr(func, "_schema") else False
        ops.append(op)
        if op_id in keep:
            values[op_id] = {"args": _clone(torch, args), "kwargs": _clone(torch, kwargs), "result": _clone(torch, out)}

    for path, m in model.named_modules():
        if path and not list(m.children()):
            handles.append(m.register_forward_pre_hook(pre(path)))
            handles.append(m.register_forward_hook(post(path)))
    counter.on_free_op = free_op
    try:
        torch.manual_seed(seed)
        with torch.no_grad(), counter:
            try:
                output = model(*inputs)
            except Exception as error:  # noqa: BLE001
                raise Refusal("forward-failed", "the model's forward raised %s: %s" % (type(error).__name__, error))
    finally:
        for h in handles:
            h.remove()
    return ops, values, output


def _quietly(counter, make):
    """The capture's own copies, not counted as the model's ops (nor numbered as aten ops)."""
    counter.inside = True
    try:
        return make()
    finally:
        counter.inside = False


def _flat(torch, values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(torch, v))
        else:
            out.append(v)
    return out


def outputs_match(torch, a, b):
    """Largest absolute difference between two outputs of the same structure, or None when they differ in
    structure or shape."""
    ta, sa = flat_tensors(torch, a)
    tb, sb = flat_tensors(torch, b)
    if sa != sb or len(ta) != len(tb):
        return None
    worst = 0.0
    for x, y in zip(ta, tb):
        if x.shape != y.shape or x.dtype != y.dtype:
            return None
        if x.numel():
            diff = (x.double() - y.double()).abs()
            diff = diff[~(x.isnan() & y.isnan())] if x.is_floating_point() else diff
            worst = max(worst, float(diff.max()) if diff.numel() else 0.0)
    return worst


class Captured:
    """The capture the rest works from: the way, the operators, the fusion chains."""

    def __init__(self, torch, loaded):
        self.torch = torch
        self.loaded = loaded
        self.fx = None
        self.fallback_reason = None
        model_output = loaded.forward(loaded.model, loaded.inputs)
        self.model_output = model_output
        try:
            self.fx = FxCapture(torch, loaded)
            self.method, self.note = self.fx.method, self.fx.note
        except _NoGraph as reason:
            self.fallback_reason = "torch.fx could not trace the model's forward (%s)" % reason
        if self.fx is not None:
            ops, _, out = record_fx(torch, self.fx, loaded.inputs, loaded.seed + 2)
            diff = outputs_match(torch, model_output, out)
            if diff is None or not _close(diff, model_output, torch):
                self.fallback_reason = ("the traced graph does not reproduce the model's output (%s)"
                                        % ("another structure or shape" if diff is None else "max diff %.3g" % diff))
                self.fx = None
        if self.fx is None:
            self.method = "module-hooks"
            self.note = ("%s: each torch.nn leaf module call (forward hooks) and each aten op outside one "
                         "(__torch_dispatch__) is an operator" % self.fallback_reason)
            ops, _, _ = record_hooks(torch, loaded, loaded.inputs, loaded.seed + 2)
            self.chains = []
        else:
            self.chains = fusion_chains(self.fx, ops)
        self.ops = ops

    def run(self, keep):
        if self.fx is not None:
            return record_fx(self.torch, self.fx, self.loaded.inputs, self.loaded.seed + 2, keep)
        return record_hooks(self.torch, self.loaded, self.loaded.inputs, self.loaded.seed + 2, keep)


def _close(diff, output, torch):
    tensors, _ = flat_tensors(torch, output)
    scale = max([float(t.abs().max()) for t in tensors if t.numel() and t.is_floating_point()] or [1.0])
    return diff <= 1e-5 * max(1.0, scale)
