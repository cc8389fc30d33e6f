#!/usr/bin/env python3
"""Reads a KernelBench problem (a torch.nn.Module `Model`, get_inputs(), get_init_inputs()) and says
what a KernelLoop problem for it is: size symbols, inputs, outputs, fuzz sizes, and a PyTorch reference.

    python3 kernelbench_import.py REQUEST.json OUT_DIR        (run by cli/cmd_kernelbench.cpp)

REQUEST: {"file": "relu.py"}
OUT_DIR/reply.json:
    {"ok": true, "name", "symbols": [{"name", "main"}], "inputs": [{"name", "dtype", "shape", "distribution",
     "parameter"?}], "scalars": [{"name", "dtype", "value"}], "outputs": [{"name", "dtype", "shape"}],
     "init_inputs": [...], "fuzz": [{SYMBOL: value}], "dropped_fuzz": [{"sizes", "reason"}], "bytes": "4 * M * N"}
  and OUT_DIR/reference.py (the KernelBench source, then reference(**tensors, **scalars) around Model)
  or {"ok": false, "error": {"category", "message"}}.

How: the module's integer globals that get_inputs() reads are the size symbols (each one changed alone,
get_inputs() run with meta tensors, so a huge problem costs no memory). Every shape is then written
over the symbols from two small runs on the CPU at different values; the forward pass is checked for
random draws (the RNG state), data-dependent output shapes, and state drawn in __init__ that is not a
parameter. Parameters become inputs, so a kernel gets them like any tensor.
"""
import importlib.util
import inspect
import json
import os
import sys
import traceback

PRIMES_A = [5, 7, 11, 13, 17, 19, 23, 29]
PRIMES_B = [3, 31, 37, 41, 43, 47, 53, 59]
FUZZ_ELEMENT_LIMIT = 1 << 22  # all tensors of one fuzz set together: the CPU reference stays fast
RANDOM_OPS = {"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal", "bernoulli",
              "multinomial", "randperm", "dropout", "alpha_dropout", "feature_dropout", "rrelu", "poisson",
              "uniform_", "normal_", "bernoulli_", "exponential_", "random_", "cauchy_", "log_normal_",
              "geometric_", "dropout_", "rrelu_"}
DTYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8",
               "uint8": "u8", "int32": "i32", "int64": "i64"}
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i32": 4, "i64": 8}


class Refusal(Exception):
    def __init__(self, category, message):
        super().__init__(message)
        self.category = category
        self.message = message


def load_module(path):
    """The KernelBench file as a module; its own failures are the user's, named as such."""
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise Refusal("unreadable", "cannot read %s: %s" % (path, error))
    try:
        code = compile(source, path, "exec")
    except SyntaxError as error:
        raise Refusal("syntax-error", "%s:%s: %s" % (path, error.lineno, error.msg))
    spec = importlib.util.spec_from_file_location("kernelbench_problem", path)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = path
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the user's problem is the point
    except BaseException as error:  # noqa: BLE001 - sys.exit() at import is the file's failure too
        raise Refusal("import-error", "importing %s raised %s: %s" % (path, type(error).__name__, error))
    return source, module


def discovery_mode(torch, device):
    """Factories make tensors on `device` (meta: shapes without memory), .cuda() stays put, and every
    random draw is counted; randn/rand/randint mark what they made so the problem can say so."""
    from torch.overrides import TorchFunctionMode

    class Discovery(TorchFunctionMode):
        random_calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if name in RANDOM_OPS:
                Discovery.random_calls.append(name)
            if name == "cuda":
                return args[0] if device == "meta" else args[0].to(device)
            if name == "to":
                args = tuple(device if _is_cuda(a) else a for a in args)
                if _is_cuda(kwargs.get("device")):
                    kwargs["device"] = device
            elif "device" in kwargs or name in ("randn", "rand", "randint", "zeros", "ones", "empty", "full",
                                                "arange", "linspace", "eye", "tensor", "normal"):
                if name != "normal" or "size" in kwargs:
                    kwargs["device"] = device
            result = func(*args, **kwargs)
            if torch.is_tensor(result) and name in ("randn", "rand", "randint"):
                result._kl_distribution = _factory_distribution(name, args, kwargs)
            return result

    return Discovery


def _is_cuda(value):
    return value is not None and "cuda" in str(value)


def _factory_distribution(name, args, kwargs):
    if name == "randn":
        return {"kind": "normal", "mean": 0.0, "std": 1.0}
    if name == "rand":
        return {"kind": "uniform", "low": 0.0, "high": 1.0}
    numbers = [a for a in args if isinstance(a, int)]
    low, high = (numbers[0], numbers[1]) if len(numbers) >= 2 else (kwargs.get("low", 0), numbers[0]
                                                                        if numbers else kwargs.get("high", 2))
    return {"kind": "integers", "low": low, "high": max(low, high - 1)}


class Problem:
    def __init__(self, torch, module, path):
        self.torch = torch
        self.module = module
        self.path = path
        model = getattr(module, "Model", None)
        if not (inspect.isclass(model) and issubclass(model, torch.nn.Module)):
            raise Refusal("no-model", "%s defines no class Model(torch.nn.Module)" % path)
        if not callable(getattr(module, "get_inputs", None)):
            raise Refusal("no-get-inputs", "%s defines no get_inputs()" % path)
        self.model_class = model
        self.main_globals = {k: v for k, v in vars(module).items() if type(v) is int and not k.startswith("_")}

    def set_globals(self, values):
        for name, value in values.items():
            setattr(self.module, name, value)

    def call(self, what, device, values):
        """get_inputs() or get_init_inputs() with the size globals at `values`, tensors on `device`."""
        self.set_globals(dict(self.main_globals, **values))
        function = getattr(self.module, what, None)
        if function is None:
            return []
        with discovery_mode(self.torch, device)():
            result = function()
        if not isinstance(result, (list, tuple)):
            raise Refusal("unsupported-input", "%s() must return a list, not %s" % (what, type(result).__name__))
        return list(result)

    def input_shapes(self, values, device="meta"):
        shapes = []
        for item in self.call("get_inputs", device, values):
            shapes.append(tuple(item.shape) if self.torch.is_tensor(item) else None)
        return shapes

    def find_symbols(self):
        """The integer globals that change an input's shape when changed alone (meta tensors)."""
        try:
            main = self.input_shapes({})
        except Refusal:
            raise
        except Exception as error:  # noqa: BLE001
            raise Refusal("get-inputs-failed", "get_inputs() raised %s: %s" % (type(error).__name__, error))
        symbols = []
        for name, value in self.main_globals.items():
            try:
                changed = self.input_shapes({name: 2 * value + 1}) != main
            except Exception:  # noqa: BLE001 - a global get_inputs cannot take other values of is no size
                changed = False
            if changed:
                symbols.append(name)
        self.set_globals(self.main_globals)
        if not symbols:
            raise Refusal("fixed-shape", "no module-level integer (such as batch_size = 16) sets get_inputs()'s "
                                         "shapes, so there are no sizes to vary: write the sizes as globals")
        return symbols, main


def run_forward(problem, values, seed):
    """Inputs, parameters and outputs of one CPU forward pass at `values`, with the checks on it."""
    torch = problem.torch
    torch.manual_seed(seed)
    inputs = problem.call("get_inputs", "cpu", values)
    init = problem.call("get_init_inputs", "cpu", values)
    for item in init:
        if torch.is_tensor(item):
            raise Refusal("unsupported-input", "get_init_inputs() returns a tensor; only plain values are supported")
    torch.manual_seed(1234)
    with discovery_mode(torch, "cpu")():
        model = problem.model_class(*init)
    mode = discovery_mode(torch, "cpu")
    mode.random_calls.clear()
    state = torch.get_rng_state()
    with torch.no_grad(), mode():
        outputs = model(*inputs)
    if mode.random_calls or not torch.equal(state, torch.get_rng_state()):
        raise Refusal("random-ops", "forward() draws random numbers (%s): no kernel can match it"
                      % (", ".join(sorted(set(mode.random_calls))) or "the RNG state changed"))
    return inputs, init, model, outputs


def as_output_list(torch, outputs):
    if torch.is_tensor(outputs):
        return [outputs]
    if isinstance(outputs, (tuple, list)) and outputs and all(torch.is_tensor(o) for o in outputs):
        return list(outputs)
    raise Refusal("unsupported-output", "forward() returns %s; a tensor or a tuple of tensors is supported"
                  % type(outputs).__name__)


def dim_expression(a, b, symbols, values_a, values_b):
    """The expression over the symbols that gives `a` at values_a and `b` at values_b, or None."""
    if a == b:
        return str(a)
    for s in symbols:
        sa, sb = values_a[s], values_b[s]
        if a == sa and b == sb:
            return s
        if a % sa == 0 and a // sa > 1 and b == (a // sa) * sb:
            return "%d * %s" % (a // sa, s)
        if a - sa == b - sb:
            return "%s %s %d" % (s, "+" if a > sa else "-", abs(a - sa))
    for i, s in enumerate(symbols):
        for t in symbols[i:]:
            if a == values_a[s] * values_a[t] and b == values_b[s] * values_b[t]:
                return "%s * %s" % (s, t)
    return None


def shape_expressions(shape_a, shape_b, symbols, values_a, values_b, what):
    if len(shape_a) != len(shape_b):
        raise Refusal("unknown-output-shape", "%s has %d dimensions at one size and %d at another"
                      % (what, len(shape_a), len(shape_b)))
    if not shape_a:
        return []
    shape = []
    for index, (a, b) in enumerate(zip(shape_a, shape_b)):
        expression = dim_expression(int(a), int(b), symbols, values_a, values_b)
        if expression is None:
            raise Refusal("unknown-output-shape", "dimension %d of %s (%d, then %d) follows no size symbol of %s"
                          % (index, what, a, b, ", ".join(symbols)))
        shape.append(expression)
    return shape


def evaluate(expression, values):
    return int(eval(expression, {"__builtins__": {}}, dict(values)))  # noqa: S307 - our own expressions


def dtype_name(torch, tensor, what):
    name = str(tensor.dtype).replace("torch.", "")
    if name not in DTYPE_NAMES:
        raise Refusal("unsupported-dtype", "%s is %s; supported: %s" % (what, name, ", ".join(DTYPE_NAMES)))
    return DTYPE_NAMES[name]


def distribution(torch, tensor):
    marked = getattr(tensor, "_kl_distribution", None)
    if marked:
        return marked
    values = tensor.detach().double().flatten()
    if not tensor.is_floating_point():
        return {"kind": "integers", "low": int(values.min()), "high": int(values.max())}
    low, high = float(values.min()), float(values.max())
    if low == high:
        return {"kind": "uniform", "low": low - 0.5, "high": low + 0.5}  # a constant would let a kernel ignore it
    if low >= 0.0 and high <= 1.0:
        return {"kind": "uniform", "low": 0.0, "high": 1.0}
    return {"kind": "normal", "mean": float(values.mean()), "std": max(float(values.std()), 1e-3)}


def argument_names(model_class, count, taken):
    parameters = list(inspect.signature(model_class.forward).parameters.values())[1:]
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = []
    for index in range(count):
        name = names[index] if index < len(names) else "x%d" % index
        while name in taken:
            name += "_in"
        taken.add(name)
        out.append(name)
    return out


def fresh(name, taken):
    while name in taken or not name.isidentifier():
        name = "p_" + name if name.isidentifier() else "p%d" % len(taken)
    taken.add(name)
    return name


def fuzz_candidates(symbols, row):
    """1, odd, prime, non-power-of-two, larger than a block: the row symbol takes the long values."""
    outer = [s for s in symbols if s != row]
    plans = [(1, 1), (3, 1), (1, 4097), (7, 1000), (13, 12289), (257, 768), (31, 2048), (5, 97)]
    sets = []
    for first, length in plans:
        values = {}
        for index, s in enumerate(outer):
            values[s] = first if index == 0 else min(first, 3 if first > 1 else 1)
        if row:
            values[row] = length
        elif outer:
            values[outer[-1]] = max(values[outer[-1]], length)
        if values not in sets:
            sets.append(values)
    return sets


class Importer:
    def __init__(self, torch, path):
        self.torch = torch
        self.path = path
        self.source, module = load_module(path)
        self.problem = Problem(torch, module, path)

    def analyse(self):
        torch = self.torch
        symbols, main_shapes = self.problem.find_symbols()
        values_a = dict(zip(symbols, PRIMES_A))
        values_b = dict(zip(symbols, PRIMES_B))
        if len(symbols) > len(PRIMES_A):
            raise Refusal("unsupported-shape", "more than %d size symbols" % len(PRIMES_A))
        try:
            inputs_a, init, model_a, outputs_a = run_forward(self.problem, values_a, 0)
            inputs_b, _, model_b, outputs_b = run_forward(self.problem, values_b, 0)
            again, _, _, outputs_again = run_forward(self.problem, values_a, 1)
        except Refusal:
            raise
        except Exception as error:  # noqa: BLE001
            raise Refusal("forward-failed", "Model.forward at small sizes (%s) raised %s: %s"
                          % (values_a, type(error).__name__, error))
        outputs_a = as_output_list(torch, outputs_a)
        outputs_b = as_output_list(torch, outputs_b)
        outputs_again = as_output_list(torch, outputs_again)
        if [tuple(o.shape) for o in outputs_a] != [tuple(o.shape) for o in outputs_again]:
            raise Refusal("data-dependent-shape", "forward()'s output shape depends on the input values (%s, then "
                          "%s at the same sizes)" % ([list(o.shape) for o in outputs_a],
                                                     [list(o.shape) for o in outputs_again]))
        if len(outputs_a) != len(outputs_b):
            raise Refusal("unknown-output-shape", "forward() returns %d tensors at one size and %d at another"
                          % (len(outputs_a), len(outputs_b)))
        self.check_init_state(init, inputs_a, model_a, outputs_a)

        taken = set(symbols)
        names = argument_names(self.problem.model_class, len(inputs_a), taken)
        tensors, scalars, forward_args = [], [], []
        for index, (name, a, b) in enumerate(zip(names, inputs_a, inputs_b)):
            forward_args.append(name)
            if torch.is_tensor(a):
                if a.dim() == 0:
                    raise Refusal("unsupported-input", "input %d (%s) is a 0-d tensor" % (index, name))
                if main_shapes[index] is None:
                    raise Refusal("unsupported-input", "input %s is not a tensor at the main size" % name)
                shape = shape_expressions(a.shape, b.shape, symbols, values_a, values_b, "input " + name)
                tensors.append({"name": name, "dtype": dtype_name(torch, a, "input " + name), "shape": shape,
                                "distribution": distribution(torch, a)})
            elif type(a) in (int, float):
                scalars.append({"name": name, "dtype": "f32" if type(a) is float else "i32", "value": a})
            else:
                raise Refusal("unsupported-input", "input %d (%s) is a %s; tensors, ints and floats are supported"
                              % (index, name, type(a).__name__))
        parameters_b = dict(model_b.named_parameters())
        for path, p in model_a.named_parameters():
            name = fresh(path.replace(".", "_"), taken)
            shape = shape_expressions(p.shape, parameters_b[path].shape, symbols, values_a, values_b,
                                      "parameter " + path)
            if not shape:
                raise Refusal("unsupported-input", "parameter %s is a 0-d tensor" % path)
            tensors.append({"name": name, "dtype": dtype_name(torch, p, "parameter " + path), "shape": shape,
                            "distribution": distribution(torch, p), "parameter": path})
        outputs = []
        for index, (a, b) in enumerate(zip(outputs_a, outputs_b)):
            name = fresh("y" if len(outputs_a) == 1 else "y%d" % index, taken)
            shape = shape_expressions(a.shape, b.shape, symbols, values_a, values_b, "output %d" % index)
            outputs.append({"name": name, "dtype": dtype_name(torch, a, "output %d" % index),
                            "shape": shape or ["1"], "zero_dim": not shape})
        self.bind_symbols(symbols, tensors)
        main = {s: self.problem.main_globals[s] for s in symbols}
        for index, t in enumerate([t for t in tensors if "parameter" not in t]):
            got = [evaluate(d, main) for d in t["shape"]]
            if got != list(main_shapes[forward_args.index(t["name"])]):
                raise Refusal("unsupported-shape", "input %s: %s gives %s at the main sizes, get_inputs() %s"
                              % (t["name"], t["shape"], got, list(main_shapes[forward_args.index(t["name"])])))
        reply = {"ok": True, "name": os.path.splitext(os.path.basename(self.path))[0],
                 "symbols": [{"name": s, "main": main[s]} for s in symbols], "inputs": tensors, "scalars": scalars,
                 "outputs": outputs, "forward_args": forward_args,
                 "init_inputs": _plain(self.problem.call("get_init_inputs", "cpu", main)),
                 "bytes": bytes_expression(tensors + outputs)}
        reply["fuzz"], reply["dropped_fuzz"] = self.fuzz_sizes(symbols, tensors, outputs)
        # FLOPs over the symbols (flop_count.py): matrix products and convolutions, counted on meta tensors.
        import flop_count
        reply["flops"], reply["flops_note"] = flop_count.flops_expression(
            self.problem, symbols, values_a, values_b, main, sys.modules[__name__])
        self.problem.set_globals(self.problem.main_globals)
        return reply

    def check_init_state(self, init, inputs, model, outputs):
        """Another Model built from another seed, given the same parameters, must agree: otherwise its
        output depends on something drawn in __init__ that a kernel is never given."""
        torch = self.torch
        torch.manual_seed(98765)
        with discovery_mode(torch, "cpu")():
            other = self.problem.model_class(*init)
        other.load_state_dict(dict(model.named_parameters()), strict=False)  # buffers stay other's own
        with torch.no_grad():
            again = as_output_list(torch, other(*inputs))
        for a, b in zip(outputs, again):
            if a.shape != b.shape or not torch.allclose(a.double(), b.double(), equal_nan=True):
                raise Refusal("random-init", "Model's output depends on values drawn in __init__ that are not "
                                             "parameters (a plain tensor attribute?): no kernel is given them")

    def bind_symbols(self, symbols, tensors):
        """Where the reference reads each symbol's value: a dimension that is the symbol (or k times it)."""
        self.binding = {}
        for s in symbols:
            for t in tensors:
                if "parameter" in t:
                    continue
                for index, d in enumerate(t["shape"]):
                    if d == s or (d.endswith(" * " + s) and d.split(" * ")[0].isdigit()):
                        factor = 1 if d == s else int(d.split(" * ")[0])
                        self.binding.setdefault(s, (t["name"], index, factor))
            if s not in self.binding:
                raise Refusal("unsupported-shape", "no input dimension is %s alone, so a call cannot tell its value"
                              % s)

    def fuzz_sizes(self, symbols, tensors, outputs):
        first = next((t for t in tensors if "parameter" not in t), None)
        row = first["shape"][-1] if first and first["shape"][-1] in symbols else None
        kept, dropped = [], []
        for values in fuzz_candidates(symbols, row):
            elements = sum(_elements(t["shape"], values) for t in tensors + outputs)
            if elements > FUZZ_ELEMENT_LIMIT:
                dropped.append({"sizes": values, "reason": "%d elements, above the fuzz limit" % elements})
                continue
            try:
                _, _, _, got = run_forward(self.problem, values, 2)
                got = as_output_list(self.torch, got)
                want = [[evaluate(d, values) for d in o["shape"]] for o in outputs]
                have = [list(g.shape) or [1] for g in got]
                if want != have:
                    raise ValueError("outputs %s, expected %s" % (have, want))
                kept.append(values)
            except Refusal:
                raise
            except Exception as error:  # noqa: BLE001 - a size the Model cannot take is left out, said why
                dropped.append({"sizes": values, "reason": "%s: %s" % (type(error).__name__, str(error)[:200])})
        self.problem.set_globals(self.problem.main_globals)
        return kept, dropped


def _elements(shape, values):
    count = 1
    for d in shape:
        count *= evaluate(d, values)
    return count


def _plain(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def bytes_expression(tensors):
    """Each tensor read or written once: what a memory-bound kernel must move at least."""
    terms = []
    for t in tensors:
        factors = [str(ELEMENT_BYTES[t["dtype"]])] + ["(%s)" % d if (" + " in d or " - " in d) else d
                                                      for d in t["shape"] if d != "1"]
        terms.append(" * ".join(factors))
    return " + ".join(terms)


REFERENCE_WRAPPER = '''

# ---- KernelLoop's reference around the Model above (written by kernelloop-cli import-kernelbench from
# {file}). A candidate must compute what Model(*get_init_inputs()).forward({args}) does; the Model's
# parameters are inputs, so the kernel is given them like any tensor. PyTorch eager is the time to beat.
import torch as _kl_torch

_KL_SYMBOLS = {symbols}  # symbol: (input, dimension, factor) it is read from
_KL_PARAMETERS = {parameters}  # input: the Model parameter it is
_KL_ZERO_DIM = {zero_dim}  # outputs that are 0-d tensors in PyTorch, one element here
_kl_models = {{}}
_kl_last = [None, None]


def _kl_model(tensors):
    """The Model for these shapes: the size globals set as get_inputs() would have them, then
    Model(*get_init_inputs()), one per shape and device; the parameters are the given inputs."""
    key = tuple((name, tuple(t.shape), str(t.device)) for name, t in tensors.items())
    if _kl_last[0] == key:
        model = _kl_last[1]
    else:
        for symbol, (name, dim, factor) in _KL_SYMBOLS.items():
            globals()[symbol] = tensors[name].shape[dim] // factor
        init = list(get_init_inputs()) if "get_init_inputs" in globals() else []
        model_key = (repr(init), key[0][2] if key else "cpu")
        model = _kl_models.get(model_key)
        if model is None:
            _kl_torch.manual_seed(0)
            model = Model(*init).to(key[0][2] if key else "cpu")
            model._kl_slots = []
            for name, path in _KL_PARAMETERS.items():
                owner, _, leaf = path.rpartition(".")
                model._kl_slots.append((model.get_submodule(owner) if owner else model, leaf, name))
            _kl_models[model_key] = model
        _kl_last[0], _kl_last[1] = key, model
    for owner, leaf, name in model._kl_slots:
        if owner._parameters[leaf] is not tensors[name]:
            owner._parameters[leaf] = tensors[name]
    return model


def reference({signature}):
    model = _kl_model({tensor_dict})
    out = model({args})
    {returns}
'''


def reference_source(source, file_name, reply, binding):
    """The KernelBench file as it is, then the reference(**tensors, **scalars) the runner calls."""
    names = [t["name"] for t in reply["inputs"]] + [s["name"] for s in reply["scalars"]]
    tensor_names = [t["name"] for t in reply["inputs"]]
    outputs = reply["outputs"]
    if len(outputs) == 1:
        returns = "return out.reshape(1)" if outputs[0]["zero_dim"] else "return out"
    else:
        parts = ["out[%d].reshape(1)" % i if o["zero_dim"] else "out[%d]" % i for i, o in enumerate(outputs)]
        returns = "return (%s)" % ", ".join(parts)
    wrapper = REFERENCE_WRAPPER.format(
        file=file_name, args=", ".join(reply["forward_args"]), symbols=repr(binding),
        parameters=repr({t["name"]: t["parameter"] for t in reply["inputs"] if "parameter" in t}),
        zero_dim=repr([o["name"] for o in outputs if o["zero_dim"]]), signature=", ".join(names),
        tensor_dict="{%s}" % ", ".join("%r: %s" % (n, n) for n in tensor_names), returns=returns)
    return source.rstrip("\n") + "\n" + wrapper


def main():
    request_path, out_dir = sys.argv[1], sys.argv[2]
    sys.setrecursionlimit(10000)
    try:
        with open(request_path) as handle:
            request = json.load(handle)
        try:
            import torch
        except Exception as error:  # noqa: BLE001
            raise Refusal("needs-pytorch", "needs PyTorch: %s cannot import torch (%s); set KL_PYTHON to a Python "
                                           "with PyTorch" % (sys.executable, error))
        torch.set_num_threads(1)
        importer = Importer(torch, os.path.abspath(request["file"]))
        reply = importer.analyse()
        with open(os.path.join(out_dir, "reference.py"), "w") as out:
            out.write(reference_source(importer.source, os.path.basename(request["file"]), reply,
                                       importer.binding))
    except Refusal as refusal:
        reply = {"ok": False, "error": {"category": refusal.category, "message": refusal.message}}
    except Exception as error:  # noqa: BLE001 - the user's Model failing in a way we did not foresee
        reply = {"ok": False, "error": {"category": "forward-failed", "message": "%s: %s" % (type(error).__name__,
                                                                                           error),
                                        "traceback": traceback.format_exc(limit=8)}}
    with open(os.path.join(out_dir, "reply.json"), "w") as out:
        json.dump(reply, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
