#!/usr/bin/env python3
"""Reads a KernelBench problem (a torch.nn.Module `Model`, get_inputs(), get_init_inputs()) and says
what a KernelLoop problem for it is: size symbols, inputs, outputs, fuzz sizes, and a PyTorch reference.

    python3 kernelbench_import.py REQUEST.json OUT_DIR        (run by core/session/kernelbench_import.cpp)
    python3 kernelbench_import.py --serve                     (a folder: PyTorch imported once, warm_tool.py)

REQUEST: {"file": "relu.py"}
OUT_DIR/reply.json:
    {"ok": true, "name", "symbols": [{"name", "main"}], "inputs": [{"name", "dtype", "shape", "distribution",
     "parameter"?}], "scalars": [{"name", "dtype", "value"}], "outputs": [{"name", "dtype", "shape"}],
     "init_inputs": [...], "fuzz": [{SYMBOL: value}], "dropped_fuzz": [{"sizes", "reason"}], "bytes": "4 * M * N",
     "constraints": ["C % 4 == 0"], "notes": [...], "fixed_sizes": "why" (only where no size rule holds)}
  and OUT_DIR/reference.py (the KernelBench source, then reference(**tensors, **scalars) around Model)
  or {"ok": false, "error": {"category", "message"}}.

How: the module's integer globals that get_inputs() reads are the size symbols (each one changed alone,
get_inputs() run with meta tensors, so a huge problem costs no memory). The whole forward pass then runs
on meta tensors too (shapes without memory or arithmetic; an operator without a meta kernel, such as
max_pool3d in PyTorch 1.13, gets its shape rule or runs on zeros), at KernelBench's sizes and with each
symbol moved alone over a few dozen values: which values the Model accepts gives the symbol's constraint
(a multiple of the groups, at least the kernel's size), and every dimension of every input, parameter,
output and counted product is fitted over those values by the rules real operators follow: affine
(x, 2x - 1: transposed convolutions), floor((P x + Q) / R) + B (convolution and pooling, ceil_mode
too), and products or sums of those over several symbols (flatten, concatenation). A rule is checked at
points where several symbols move at once. A symbol no rule covers, or one no input dimension can tell
the value of, stays at KernelBench's value ("frozen"); with every symbol frozen the problem is imported at
KernelBench's sizes only, and says so ("fixed_sizes"). One small CPU forward pass then checks for random
draws (the RNG state; dropout with p = 0 is the identity), data-dependent output shapes and state drawn
in __init__ that is not a parameter, and each fuzz size set is run on the CPU. Parameters become inputs,
so a kernel gets them like any tensor (more than 64 tensors: the parameters packed, one buffer per dtype).
"""
import importlib.util
import inspect
import json
import math
import os
import sys
import traceback
from fractions import Fraction

FUZZ_ELEMENT_LIMIT = 1 << 22  # all tensors of one fuzz set together: the CPU reference stays fast
FUZZ_FLOP_LIMIT = 4e8  # counted products of one fuzz set's forward: a 3-D convolution stays under a second
PROBE_ELEMENT_LIMIT = 1 << 24  # the CPU probe (random draws, data-dependent shapes): small sizes only
ZEROS_FALLBACK_LIMIT = 1 << 24  # an operator without a meta kernel runs on CPU zeros up to this size
MAX_TENSORS = 64  # a problem's inputs (problem.too-many-tensors beyond): parameters are packed past it
MAX_DENOMINATOR = 64  # floor((P x + Q) / R): R up to 64 (strides and pooling windows multiplied)
RANDOM_OPS = {"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal", "bernoulli",
              "multinomial", "randperm", "dropout", "alpha_dropout", "feature_dropout", "rrelu", "poisson",
              "uniform_", "normal_", "bernoulli_", "exponential_", "random_", "cauchy_", "log_normal_",
              "geometric_", "dropout_", "rrelu_", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
              "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_"}
DTYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8",
               "uint8": "u8", "int32": "i32", "int64": "i64", "bool": "u8"}
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i32": 4, "i64": 8}
POOLS = {"max_pool1d": 1, "max_pool2d": 2, "max_pool3d": 3, "_max_pool1d": 1, "_max_pool2d": 2, "_max_pool3d": 3,
         "max_pool1d_with_indices": 1, "max_pool2d_with_indices": 2, "max_pool3d_with_indices": 3,
         "avg_pool1d": 1, "avg_pool2d": 2, "avg_pool3d": 3}


class Refusal(Exception):
    def __init__(self, category, message):
        super().__init__(message)
        self.category = category
        self.message = message


class ProbeFailed(Exception):
    """The Model cannot take these sizes (its own constraint, or an operator that cannot run here)."""


def missing_piece(error):
    """A true refusal for what this Python lacks: an operator of a newer PyTorch, or a package."""
    text = str(error)
    if isinstance(error, ModuleNotFoundError):
        name = getattr(error, "name", None) or text
        return Refusal("needs-package", "needs the Python package %s, which this Python (%s) does not have: %s"
                       % (name.split(".")[0], sys.executable, text))
    if isinstance(error, AttributeError) and "module 'torch" in text and "has no attribute" in text:
        import torch
        module = text.split("'")[1]
        attribute = text.split("'")[3] if text.count("'") >= 4 else text
        return Refusal("needs-operator", "calls %s.%s, which this PyTorch (%s) does not have (a newer PyTorch "
                       "does: run the import with it)" % (module, attribute, torch.__version__))
    return None


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
        piece = missing_piece(error)
        if piece:
            raise piece
        raise Refusal("import-error", "importing %s raised %s: %s" % (path, type(error).__name__, error))
    return source, module


def _identity_draw(name, args, kwargs):
    """Dropout that draws nothing: p = 0, or not training (nn.Dropout(0.0) is the identity)."""
    if "dropout" in name:
        p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
        training = kwargs.get("training", args[2] if len(args) > 2 else True)
        return not training or (isinstance(p, (int, float)) and float(p) == 0.0)
    if name.startswith("rrelu"):
        return not kwargs.get("training", args[3] if len(args) > 3 else False)
    return False


def discovery_mode(torch, device):
    """Factories make tensors on `device` (meta: shapes without memory), .cuda() stays put, and every
    random draw is counted; randn/rand/randint mark what they made so the problem can say so. On meta, an
    operator without a meta kernel gets its shape rule (pooling) or runs on CPU zeros."""
    from torch.overrides import TorchFunctionMode

    class Discovery(TorchFunctionMode):
        random_calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if name in RANDOM_OPS and not _identity_draw(name, args, kwargs):
                p = kwargs.get("p", args[1] if len(args) > 1 else None) if "dropout" in name else None
                Discovery.random_calls.append("%s with p = %s in training mode" % (name, p) if isinstance(
                    p, (int, float)) else name)
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
            if device != "meta":
                result = func(*args, **kwargs)
            else:
                try:
                    result = func(*args, **kwargs)
                except NotImplementedError:
                    result = _without_meta_kernel(torch, func, name, args, kwargs)
                _refuse_empty(torch, name, args, kwargs, result)
            if torch.is_tensor(result) and name in ("randn", "rand", "randint"):
                result._kl_distribution = _factory_distribution(name, args, kwargs)
            return result

    return Discovery


def _refuse_empty(torch, name, args, kwargs, result):
    """Meta's convolution gives an empty tensor where the CPU's refuses a kernel larger than its padded
    input: an operator that makes an empty tensor from non-empty ones is refused here as it is there."""
    results = result if isinstance(result, (tuple, list)) else [result]
    if not any(torch.is_tensor(r) and r.numel() == 0 for r in results):
        return
    given = [a for a in list(args) + list(kwargs.values()) if torch.is_tensor(a)]
    if given and all(a.numel() > 0 for a in given):
        shapes = [list(r.shape) for r in results if torch.is_tensor(r)]
        raise RuntimeError("%s would give an empty tensor %s: a kernel or window larger than its (padded) input"
                           % (name, shapes[0]))


def _without_meta_kernel(torch, func, name, args, kwargs):
    """What `func` gives on meta tensors although PyTorch has no meta kernel for it: small inputs run on
    CPU zeros; pooling, at any size, follows its shape rule."""
    tensors = [a for a in list(args) + list(kwargs.values()) if torch.is_tensor(a)]
    if sum(t.numel() for t in tensors) <= ZEROS_FALLBACK_LIMIT:
        def cpu(value):
            return torch.zeros(value.shape, dtype=value.dtype) if torch.is_tensor(value) and value.is_meta else value
        result = func(*[cpu(a) for a in args], **{k: cpu(v) for k, v in kwargs.items()})
        if isinstance(result, (tuple, list)):
            return type(result)(r.to("meta") if torch.is_tensor(r) else r for r in result)
        return result.to("meta") if torch.is_tensor(result) else result
    if name in POOLS:
        return _pool_shape(torch, name, POOLS[name], args, kwargs)
    raise NotImplementedError("%s has no meta kernel and its inputs are too large to run on zeros" % name)


def _pool_shape(torch, name, spatial, args, kwargs):
    """max_pool/avg_pool's output on meta: out = floor_or_ceil((L + 2p - d (k - 1) - 1) / s) + 1, one less
    under ceil_mode where the last window would start in the padding (PyTorch's pooling_output_shape)."""
    names = ["input", "kernel_size", "stride", "padding", "dilation" if "max" in name else "ceil_mode",
             "ceil_mode" if "max" in name else "count_include_pad", "return_indices"]
    given = dict(zip(names, args))
    given.update(kwargs)
    x = given["input"]

    def each(value, default):
        value = default if value is None or (isinstance(value, (list, tuple)) and not value) else value
        return list(value) * (spatial if len(value) == 1 else 1) if isinstance(value, (list, tuple)) \
            else [int(value)] * spatial

    kernel = each(given["kernel_size"], 1)
    stride = each(given.get("stride"), kernel)
    padding = each(given.get("padding", 0), 0)
    dilation = each(given.get("dilation", 1), 1) if "max" in name else [1] * spatial
    ceil_mode = bool(given.get("ceil_mode", False))
    out = list(x.shape[:-spatial])
    for length, k, s, p, d in zip(x.shape[-spatial:], kernel, stride, padding, dilation):
        numerator = int(length) + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil_mode else 0)
        size = numerator // s + 1
        if ceil_mode and (size - 1) * s >= int(length) + p:
            size -= 1
        if size < 1:
            raise RuntimeError("%s: computed output size %d is too small" % (name, size))
        out.append(size)
    result = torch.empty(out, dtype=x.dtype, device="meta")
    if given.get("return_indices") or name.endswith("with_indices"):
        return result, torch.empty(out, dtype=torch.int64, device="meta")
    return result


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
            raise missing_piece(error) or Refusal("get-inputs-failed", "get_inputs() raised %s: %s"
                                                  % (type(error).__name__, error))
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


class Shapes:
    """One forward pass on meta tensors: every dimension by key, the dtypes, and the counted products.
    Keys: ("input", i, d), ("parameter", path, d), ("output", i, d); products: [(coefficient, [dims])]."""

    def __init__(self, inputs, parameters, outputs, terms):
        self.inputs = inputs  # [(shape tuple, dtype) or None for a non-tensor]
        self.parameters = parameters  # {path: (shape, dtype)}
        self.outputs = outputs  # [(shape, dtype)]
        self.terms = terms
        self.flop_dims = {("flop", t, d): int(size) for t, (_, dims) in enumerate(terms) for d, size in enumerate(dims)}
        self.dims = {}
        for index, item in enumerate(inputs):
            if item is not None:
                for d, size in enumerate(item[0]):
                    self.dims[("input", index, d)] = int(size)
        for path, (shape, _) in parameters.items():
            for d, size in enumerate(shape):
                self.dims[("parameter", path, d)] = int(size)
        for index, (shape, _) in enumerate(outputs):
            for d, size in enumerate(shape):
                self.dims[("output", index, d)] = int(size)

    def layout(self):
        """What must agree between two size sets: ranks, dtypes, parameter names."""
        return ([None if i is None else (len(i[0]), i[1]) for i in self.inputs],
                sorted((p, len(s), t) for p, (s, t) in self.parameters.items()),
                [(len(s), t) for s, t in self.outputs])

    def elements(self):
        count = 0
        for item in list(self.inputs) + list(self.parameters.values()) + list(self.outputs):
            if item is not None:
                count += math.prod(int(d) for d in item[0])
        return count

    def flops(self):
        return sum(c * math.prod(d) for c, d in self.terms)


class Oracle:
    """Shapes at any size set from forward passes on meta tensors: no memory, no arithmetic."""

    def __init__(self, problem, device="meta"):
        self.problem = problem
        self.device = device  # "cpu": real forward passes, small sizes only (an operator meta cannot run)
        self.cache = {}
        self.models = {}

    def __call__(self, values):
        key = tuple(sorted(values.items()))
        if key not in self.cache:
            try:
                self.cache[key] = self.run(values)
            except Refusal:
                raise
            except ProbeFailed as failed:
                self.cache[key] = failed
            except RecursionError as error:
                self.cache[key] = ProbeFailed("RecursionError: %s" % error)
            except Exception as error:  # noqa: BLE001 - sizes the Model refuses: its constraint, found here
                self.cache[key] = ProbeFailed("%s: %s" % (type(error).__name__, str(error).split("\n")[0][:300]))
                self.cache[key].error = error
        result = self.cache[key]
        if isinstance(result, ProbeFailed):
            raise result
        return result

    def run(self, values):
        import flop_count
        torch = self.problem.torch
        if self.device == "cpu":
            count = sum(math.prod(shape) for shape in self.problem.input_shapes(values) if shape is not None)
            if count > PROBE_ELEMENT_LIMIT:
                raise ProbeFailed("%d input elements: too many to run on the CPU here" % count)
            inputs, _, model, outputs = run_forward(self.problem, values, 0)
            self.problem.set_globals(self.problem.main_globals)
            return Shapes([(tuple(x.shape), str(x.dtype)) if torch.is_tensor(x) else None for x in inputs],
                          {p: (tuple(t.shape), str(t.dtype)) for p, t in model.named_parameters()},
                          [(tuple(o.shape), str(o.dtype)) for o in as_output_list(torch, outputs)], [])
        inputs = self.problem.call("get_inputs", "meta", values)
        init = self.problem.call("get_init_inputs", "meta", values)
        model_key = repr(init)
        model = self.models.get(model_key)
        if model is None:
            with discovery_mode(torch, "meta")():
                model = self.problem.model_class(*init)
            model = model.to("meta")
            if len(self.models) > 64:
                self.models.clear()
            self.models[model_key] = model
        counter = flop_count.FlopCounter()
        with torch.no_grad(), discovery_mode(torch, "meta")(), counter:
            outputs = model(*inputs)
        outputs = as_output_list(torch, outputs)
        for index, o in enumerate(outputs):
            if any(int(d) < 1 for d in o.shape):  # meta's convolution gives 0 where the CPU's refuses the kernel
                raise ProbeFailed("output %d would be %s: the kernel or window is larger than the (padded) input"
                                  % (index, list(o.shape)))
        shapes = Shapes([(tuple(x.shape), str(x.dtype)) if torch.is_tensor(x) else None for x in inputs],
                        {p: (tuple(t.shape), str(t.dtype)) for p, t in model.named_parameters()},
                        [(tuple(o.shape), str(o.dtype)) for o in outputs],
                        [(c, [int(d) for d in dims]) for c, dims in counter.terms])
        self.problem.set_globals(self.problem.main_globals)
        return shapes


# ---- Shape rules: y = K * floor((P * x + Q) / R) + B over one symbol, and products or sums of those.

class Rule:
    """K * floor((P * x + Q) / R) + B; affine where R == 1 (then P == 1, Q == 0)."""

    def __init__(self, K, P, Q, R, B):
        self.K, self.P, self.Q, self.R, self.B = K, P, Q, R, B

    def __call__(self, x):
        return self.K * ((self.P * x + self.Q) // self.R) + self.B

    def increasing(self, step=1):
        """Whether every step of `step` (the symbol's modulus) in x grows y: then y tells x."""
        return self.K >= 1 and self.P * step >= self.R

    def expression(self, s):
        if self.K == 0:
            return str(self.B)
        if self.R == 1:
            core = s if self.K == 1 else "%d * %s" % (self.K, s)
        else:
            inner = s if self.P == 1 else "%d * %s" % (self.P, s)
            if self.Q:
                inner = "%s + %d" % (inner, self.Q)
            core = "floor((%s) / %d)" % (inner, self.R) if self.Q or self.P != 1 else "floor(%s / %d)" % (inner,
                                                                                                       self.R)
            core = core if self.K == 1 else "%d * %s" % (self.K, core)
        if self.B:
            return "%s %s %d" % (core, "+" if self.B > 0 else "-", abs(self.B))
        return core

    def normalised(self):
        """The same rule divided by the gcd of K and B: the factor a product is made of."""
        g = math.gcd(self.K, self.B) or 1
        return Rule(self.K // g, self.P, self.Q, self.R, self.B // g)


def fit_rule(points):
    """The rule through every (x, y), or None: affine first, then floors with the smallest R."""
    points = sorted(set(points))
    if len(points) < 2:
        return None
    x0, y0 = points[0]
    if all(y == y0 for _, y in points):
        return Rule(0, 1, 0, 1, y0)
    if len(points) < 3:
        return None
    K = 0
    for _, y in points:
        K = math.gcd(K, y - y0)
    if points[-1][1] < y0:
        return None  # a dimension that shrinks as its size grows: no operator we know does that
    slope = Fraction(points[-1][1] - y0, points[-1][0] - x0)
    if slope.denominator == 1 and all(y == y0 + slope * (x - x0) for x, y in points):
        return Rule(int(slope), 1, 0, 1, int(y0 - slope * x0))  # affine (on a symbol's multiples too)
    e = [((y - y0) // K, x) for x, y in points]
    if all(ei == x - x0 for ei, x in e):
        return Rule(K, 1, 0, 1, y0 - K * x0)
    span = points[-1][0] - x0
    slope = Fraction(e[-1][0], span)
    tolerance = Fraction(1, span)
    for R in range(2, MAX_DENOMINATOR + 1):
        low = max(1, math.floor((slope - tolerance) * R))
        high = math.ceil((slope + tolerance) * R)
        for P in range(low, high + 1):
            if math.gcd(P, R) != 1:
                continue
            for Q in range(R):
                f0 = (P * x0 + Q) // R
                if all((P * x + Q) // R - f0 == ei for ei, x in e):
                    return Rule(K, P, Q, R, y0 - K * f0)
    return None


class DimRule:
    """A dimension over the symbols it depends on: a constant, one rule, or a product or sum of rules."""

    def __init__(self, kind, constant=0, rules=None):
        self.kind = kind  # "const", "one", "product", "sum"
        self.constant = constant  # product: the coefficient; sum: the constant term
        self.rules = rules or {}  # symbol: Rule (normalised for a product)

    def __call__(self, values):
        if self.kind == "const":
            return self.constant
        if self.kind == "one":
            (s, rule), = self.rules.items()
            return rule(values[s])
        if self.kind == "product":
            return self.constant * math.prod(rule(values[s]) for s, rule in self.rules.items())
        return self.constant + sum(rule(values[s]) for s, rule in self.rules.items())

    def symbols(self):
        return list(self.rules)

    def increasing_in(self, s, step=1):
        rule = self.rules.get(s)
        return rule is not None and rule.increasing(step) and (self.kind != "product" or self.constant >= 1)

    def expression(self, order):
        if self.kind == "const":
            return str(self.constant)
        if self.kind == "one":
            (s, rule), = self.rules.items()
            return rule.expression(s)
        names = sorted(self.rules, key=order.index)
        if self.kind == "product":
            factors = [str(self.constant)] if self.constant != 1 else []
            for s in names:
                text = self.rules[s].expression(s)
                factors.append("(%s)" % text if (" + " in text or " - " in text) else text)
            return " * ".join(factors)
        parts = [Rule(r.K, r.P, r.Q, r.R, 0).expression(s) for s, r in ((s, self.rules[s]) for s in names)]
        constant = self.constant + sum(self.rules[s].B for s in names)
        text = " + ".join(parts)
        return "%s %s %d" % (text, "+" if constant > 0 else "-", abs(constant)) if constant else text


def evaluate(expression, values):
    """One of our own expressions (floor, ceil and + - * / only) at `values`."""
    return int(eval(expression, {"__builtins__": {}, "floor": math.floor, "ceil": math.ceil},  # noqa: S307
                    dict(values)))


def dtype_name(torch, dtype, what):
    name = str(dtype).replace("torch.", "")
    if name not in DTYPE_NAMES:
        raise Refusal("unsupported-dtype", "%s is %s; supported: %s" % (what, name, ", ".join(DTYPE_NAMES)))
    return DTYPE_NAMES[name]


def distribution(torch, tensor):
    marked = getattr(tensor, "_kl_distribution", None)
    if marked:
        return marked
    if tensor.dtype == torch.bool:
        return {"kind": "integers", "low": 0, "high": 1}
    values = tensor.detach().double().flatten()
    if values.numel() == 0:
        return {"kind": "normal", "mean": 0.0, "std": 1.0}
    if not tensor.is_floating_point():
        return {"kind": "integers", "low": int(values.min()), "high": int(values.max())}
    low, high = float(values.min()), float(values.max())
    if low == high:
        return {"kind": "uniform", "low": low - 0.5, "high": low + 0.5}  # a constant would let a kernel ignore it
    if low >= 0.0 and high <= 1.0:
        return {"kind": "uniform", "low": 0.0, "high": 1.0}
    std = float(values.std()) if values.numel() > 1 else 1.0
    return {"kind": "normal", "mean": float(values.mean()), "std": max(std, 1e-3)}


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


class Domain:
    """The values of one symbol the Model takes (the others at KernelBench's): x >= low, x % modulus == rest."""

    def __init__(self, low=1, modulus=1, rest=0, why=""):
        self.low, self.modulus, self.rest, self.why = low, modulus, rest, why

    def snap(self, value):
        value = max(value, self.low, 1)
        return value + (self.rest - value) % self.modulus

    def holds(self, value):
        return value >= self.low and value % self.modulus == self.rest

    def constraints(self, s):
        out = []
        if self.modulus > 1:
            out.append("%s %% %d == %d" % (s, self.modulus, self.rest))
        if self.low > 1 and not (self.rest == 0 and self.low <= self.modulus):  # a multiple of 4 is >= 4
            out.append("%s >= %d" % (s, self.low))
        return out


def _name(key):
    kind, which, d = key
    return "dimension %d of %s %s" % (d, kind, which)


class Importer:
    def __init__(self, torch, path):
        self.torch = torch
        self.path = path
        self.source, module = load_module(path)
        self.problem = Problem(torch, module, path)
        self.notes = []

    # -- the size symbols: which values each takes, which rule each dimension follows

    def sample_values(self, s, center):
        xs = set(range(1, 9)) | set(range(max(1, center - 8), center + 9)) | {2 * center + 1, 3 * center + 5}
        return sorted(xs)

    def explore(self, symbols, main, base):
        """Per symbol: the Domain it may take and the samples {x: Shapes} inside it; frozen: symbol -> why."""
        oracle, layout = self.oracle, base.layout()
        domains, samples, frozen = {}, {}, {}
        for s in symbols:
            center = main[s]
            ran, refused = {}, {}
            for x in self.sample_values(s, center):
                try:
                    shapes = oracle(dict(main, **{s: x}))
                    if shapes.layout() != layout:
                        raise ProbeFailed("the outputs' ranks or dtypes change")
                    ran[x] = shapes
                except ProbeFailed as failed:
                    refused[x] = str(failed)
            near = sorted(x for x in ran if abs(x - center) <= 8)
            if len(near) < 2:
                other = min(refused, key=lambda x: abs(x - center)) if refused else None
                frozen[s] = "%s = %d only: the Model refuses %s = %s (%s)" % (
                    s, center, s, other, refused.get(other, "")) if other is not None else "%s: too few sizes" % s
                continue
            modulus = 0
            for x in near:
                modulus = math.gcd(modulus, x - near[0])
            rest = center % modulus
            inside = [x for x in sorted(set(ran) | set(refused)) if x % modulus == rest]
            low = center
            for x in reversed([x for x in inside if x <= center]):
                if x not in ran:
                    break
                low = x
            refused_below = [x for x in inside if x < low]
            if refused_below and low - max(refused_below) > modulus:
                # A gap between what was tried: the smallest size the Model takes, by bisection (a window
                # or kernel larger than the input is refused below a threshold, taken above it).
                bad, good = max(refused_below), low
                while good - bad > modulus:
                    middle = bad + ((good - bad) // 2 // modulus) * modulus or bad + modulus
                    try:
                        shapes = oracle(dict(main, **{s: middle}))
                        if shapes.layout() != layout:
                            raise ProbeFailed("the outputs' ranks or dtypes change")
                        ran[middle], good = shapes, middle
                    except ProbeFailed as failed:
                        refused[middle], bad = str(failed), middle
                low = good
                for x in range(low, low + 8 * modulus, modulus):  # the rules must hold at the edge too
                    try:
                        shapes = oracle(dict(main, **{s: x}))
                        if shapes.layout() == layout:
                            ran[x] = shapes
                    except ProbeFailed as failed:
                        refused[x] = str(failed)
                inside = [x for x in sorted(set(ran) | set(refused)) if x % modulus == rest]
            if any(x not in ran for x in inside if x >= low):
                bad = min(x for x in inside if x >= low and x not in ran)
                frozen[s] = "the sizes %s takes follow no rule (%s = %d is refused: %s)" % (s, s, bad, refused[bad])
                continue
            why = ""
            if Domain(low, modulus, rest).constraints(s):
                below = [x for x in refused if x % modulus != rest or x < low]
                example = min(below, key=lambda x: abs(x - center)) if below else None
                why = "%s = %s: %s" % (s, example, refused[example]) if example is not None else ""
            domains[s] = Domain(low, modulus, rest, why)
            samples[s] = {x: shapes for x, shapes in ran.items() if x >= low and x % modulus == rest}
        return domains, samples, frozen

    def dim_rule(self, key, variable, samples, main, base, dims_of=lambda shapes: shapes.dims):
        """The DimRule of one dimension over the variable symbols, or (None, the symbols it failed on)."""
        d0 = dims_of(base)[key]
        depends = [s for s in variable if any(dims_of(sh).get(key) != d0 for sh in samples[s].values())]
        if not depends:
            return DimRule("const", d0), []
        rules = {}
        for s in depends:
            points = [(x, dims_of(sh)[key]) for x, sh in samples[s].items() if key in dims_of(sh)]
            rule = fit_rule(points)
            if rule is None:
                return None, [s]
            rules[s] = rule
        if len(depends) == 1:
            return DimRule("one", rules=rules), []
        normalised = {s: r.normalised() for s, r in rules.items()}
        at_main = math.prod(r(main[s]) for s, r in normalised.items())
        if at_main and d0 % at_main == 0:
            return DimRule("product", d0 // at_main, normalised), []
        return DimRule("sum", -(len(depends) - 1) * d0, rules), []

    def joint_points(self, variable, samples, main):
        points = []
        for j in range(4):
            point = dict(main)
            for index, s in enumerate(variable):
                others = sorted(x for x in samples[s] if x != main[s])
                if others:
                    point[s] = others[(3 * j + 5 * index) % len(others)]
            if point != main and point not in points:
                points.append(point)
        return points

    def fit(self, symbols, main, base):
        domains, samples, frozen = self.explore(symbols, main, base)
        self.domains = domains
        keys = list(base.dims)
        while True:
            variable = [s for s in symbols if s not in frozen]
            rules, newly = {}, {}
            for key in keys:
                rule, failed = self.dim_rule(key, variable, samples, main, base)
                if rule is None:
                    for s in failed:
                        values = sorted((x, sh.dims[key]) for x, sh in samples[s].items())[:12]
                        newly.setdefault(s, "%s follows no rule in %s (%s)" % (
                            _name(key), s, ", ".join("%d: %d" % v for v in values)))
                else:
                    rules[key] = rule
            if not newly:
                for point in self.joint_points(variable, samples, main):
                    try:
                        shapes = self.oracle(point)
                    except ProbeFailed:
                        continue
                    for key, rule in rules.items():
                        if shapes.dims.get(key) != rule(point):
                            for s in rule.symbols() or variable:
                                newly.setdefault(s, "%s is %s at %s, not %d by its rule %s" % (
                                    _name(key), shapes.dims.get(key), point, rule(point),
                                    rule.expression(symbols)))
            if not newly:
                binding, unbound = self.bind(variable, rules, frozen, base)
                for s in unbound:
                    newly[s] = "no input dimension tells %s's value (it appears only with other sizes)" % s
            if not newly:
                return domains, samples, frozen, rules, binding
            frozen.update(newly)

    def bind(self, variable, rules, frozen, base):
        """Where the reference reads each symbol's value: an input dimension whose rule grows with it, the
        symbols bound before it known. [(symbol, input index, dim, expression)], and the unbound."""
        known, binding = set(frozen), []
        progress = True
        while progress:
            progress = False
            for key, rule in rules.items():
                if key[0] != "input":
                    continue
                unknown = [s for s in rule.symbols() if s not in known]
                if len(unknown) == 1 and rule.increasing_in(unknown[0], self.domains[unknown[0]].modulus):
                    binding.append((unknown[0], key[1], key[2], rule.expression(self.symbols)))
                    known.add(unknown[0])
                    progress = True
        return binding, [s for s in variable if s not in known]

    def flops(self, variable, samples, main, base, symbols):
        """The counted products over the symbols, as flop_count.py writes them, or (None, why)."""
        if not base.terms:
            return None, "no matrix product or convolution to count"
        layout = [(c, len(d)) for c, d in base.terms]
        for s in variable:
            if any([(c, len(d)) for c, d in sh.terms] != layout for sh in samples[s].values()):
                return None, "forward() runs other products at other sizes"
        summed = {}
        for t, (coefficient, dims) in enumerate(base.terms):
            factors = []
            for d in range(len(dims)):
                rule, failed = self.dim_rule(("flop", t, d), variable, samples, main, base,
                                             lambda shapes: shapes.flop_dims)
                if rule is None:
                    return None, "a product's dimension follows no rule in %s" % ", ".join(failed)
                if rule.kind == "const":
                    coefficient *= rule.constant
                    continue
                if rule.kind == "product":
                    coefficient *= rule.constant
                    rule = DimRule("product", 1, rule.rules)
                text = rule.expression(symbols)
                factors.append("(%s)" % text if (" + " in text or " - " in text) else text)
            key = tuple(sorted(factors, key=lambda f: (symbols.index(f) if f in symbols else len(symbols), f)))
            summed[key] = summed.get(key, 0) + coefficient
        terms = [" * ".join([str(c)] + list(f)) if f else str(c) for f, c in summed.items() if c]
        expression = " + ".join(terms) or "0"
        if evaluate(expression, main) != base.flops():
            return None, "the fitted expression %s gives %d at the main sizes, the count %d" % (
                expression, evaluate(expression, main), base.flops())
        return expression, None

    def on_the_cpu(self, main, failed):
        """(Shapes, the size set) where forward() runs on the CPU at scaled-down sizes, for a Model that does
        not run on meta tensors; its output shapes must follow the sizes alone (checked first)."""
        torch = self.torch
        self.oracle = Oracle(self.problem, "cpu")
        for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096):
            point = {s: max(1, v // k) for s, v in main.items()}
            try:
                shapes = self.oracle(point)
            except ProbeFailed:
                continue
            _, _, _, again = run_forward(self.problem, point, 1)
            again = [tuple(o.shape) for o in as_output_list(torch, again)]
            if again != [shape for shape, _ in shapes.outputs]:
                first = [list(o) for o, _ in shapes.outputs]
                raise Refusal("data-dependent-shape", "forward()'s output shape depends on the input values (%s, then "
                              "%s at the same sizes)" % (first, [list(o) for o in again]))
            self.notes.append("forward() does not run on meta tensors (%s): its shape rules come from CPU runs at "
                              "small sizes" % failed)
            return shapes, point
        raise Refusal("forward-failed", "Model.forward at KernelBench's own sizes (on meta tensors) raised %s, and "
                      "it ran on the CPU at no smaller size" % failed)

    def analyse(self):
        torch = self.torch
        problem = self.problem
        symbols, main_shapes = problem.find_symbols()
        self.symbols = symbols
        main = {s: problem.main_globals[s] for s in symbols}
        self.oracle = Oracle(problem)
        center = main
        try:
            base = self.oracle(main)
        except ProbeFailed as failed:
            error = getattr(failed, "error", None)
            piece = missing_piece(error) if error is not None else None
            if piece:
                raise piece
            text = str(error if error is not None else failed).lower()
            if not (isinstance(error, NotImplementedError) or "meta" in text or "device" in text):
                raise Refusal("forward-failed", "Model.forward at KernelBench's own sizes raised %s" % failed)
            base, center = self.on_the_cpu(main, failed)
        domains, samples, frozen, rules, binding = self.fit(symbols, center, base)
        if frozen and center is not main:
            raise Refusal("unknown-output-shape", "no size rule for %s, and forward() runs neither on meta tensors "
                          "nor at KernelBench's sizes here, so it cannot be imported at those sizes alone"
                          % "; ".join("%s: %s" % kv for kv in frozen.items()))
        variable = [s for s in symbols if s not in frozen]
        constraints = []
        for s in variable:
            constraints += domains[s].constraints(s)
            if domains[s].why:
                self.notes.append("%s is held to %s (%s)" % (s, " and ".join(domains[s].constraints(s)),
                                                             domains[s].why))
        for s, why in frozen.items():
            self.notes.append("%s stays at %d: %s" % (s, main[s], why))

        def shape_of(kind, which, rank):
            return [rules[(kind, which, d)].expression(symbols) for d in range(rank)]

        taken = set(symbols)
        names = argument_names(problem.model_class, len(base.inputs), taken)
        main_inputs = problem.call("get_inputs", "meta", main)
        tensors, scalars, forward_args = [], [], []
        for index, (name, item, value) in enumerate(zip(names, base.inputs, main_inputs)):
            forward_args.append(name)
            if item is not None:
                shape = shape_of("input", index, len(item[0]))
                tensors.append({"name": name, "dtype": dtype_name(torch, item[1], "input " + name),
                                "shape": shape or ["1"], "zero_dim": not shape, "bool": item[1] == "torch.bool",
                                "index": index})
            elif type(value) in (int, float):
                scalars.append({"name": name, "dtype": "f32" if type(value) is float else "i32", "value": value})
            else:
                raise Refusal("unsupported-input", "input %d (%s) is a %s; tensors, ints and floats are supported"
                              % (index, name, type(value).__name__))
        parameters = []
        for path, (shape, dtype) in base.parameters.items():
            expressions = shape_of("parameter", path, len(shape))
            parameters.append({"name": fresh(path.replace(".", "_"), taken), "parameter": path,
                               "dtype": dtype_name(torch, dtype, "parameter " + path), "shape": expressions or ["1"],
                               "zero_dim": not expressions, "bool": dtype == "torch.bool"})
        outputs = []
        for index, (shape, dtype) in enumerate(base.outputs):
            expressions = shape_of("output", index, len(shape))
            outputs.append({"name": fresh("y" if len(base.outputs) == 1 else "y%d" % index, taken),
                            "dtype": dtype_name(torch, dtype, "output %d" % index), "shape": expressions or ["1"],
                            "zero_dim": not expressions, "bool": dtype == "torch.bool"})
        for t in tensors:
            got = [evaluate(d, main) for d in t["shape"]] if not t["zero_dim"] else []
            if got != list(main_shapes[t["index"]]):
                raise Refusal("unsupported-shape", "input %s: %s gives %s at the main sizes, get_inputs() %s"
                              % (t["name"], t["shape"], got, list(main_shapes[t["index"]])))
        packed = []
        if len(tensors) + len(parameters) > MAX_TENSORS:
            packed = self.pack(parameters, taken)
            self.notes.append("%d parameter tensors packed into %s (more than %d tensors)"
                              % (len(parameters), ", ".join(p["name"] for p in packed), MAX_TENSORS))
        self.binding = [(s, names[i], d, e) for s, i, d, e in binding]
        self.frozen = {s: main[s] for s in frozen}
        fuzz, dropped, probes = self.fuzz_sizes(variable, domains, main, rules, tensors, outputs, symbols)
        fixed = None
        if not variable:
            fixed = "no size rule could be derived (%s)" % "; ".join("%s: %s" % kv for kv in frozen.items())
        elif not fuzz:
            fixed = "no size set but KernelBench's ran within the fuzz limits (%s)" % "; ".join(
                "%s: %s" % (json.dumps(d["sizes"]), d["reason"]) for d in dropped[:3])
        if fixed:
            fuzz = []
        self.check_numerically(probes, tensors, parameters)
        everything = tensors + (packed or parameters)
        reply = {"ok": True, "name": os.path.splitext(os.path.basename(self.path))[0],
                 "symbols": [{"name": s, "main": main[s]} for s in symbols],
                 "inputs": [self.public(t) for t in everything], "scalars": scalars,
                 "outputs": [self.public(o) for o in outputs], "forward_args": forward_args,
                 "init_inputs": _plain(problem.call("get_init_inputs", "cpu", main)),
                 "bytes": bytes_expression(everything + outputs), "constraints": constraints,
                 "frozen": sorted(frozen), "notes": self.notes, "fuzz": fuzz, "dropped_fuzz": dropped}
        if fixed:
            reply["fixed_sizes"] = ("imported at KernelBench's sizes only: %s; verification runs there alone, "
                                    "with fresh values every trial" % fixed)
        reply["flops"], reply["flops_note"] = self.flops(variable, samples, main, base, symbols)
        self.wrapper = {"tensors": tensors, "parameters": parameters, "packed": packed, "outputs": outputs,
                        "scalars": scalars, "forward_args": forward_args}
        problem.set_globals(problem.main_globals)
        return reply

    @staticmethod
    def public(t):
        out = {k: t[k] for k in ("name", "dtype", "shape", "distribution") if k in t}
        if "parameter" in t:
            out["parameter"] = t["parameter"]
        return out

    def pack(self, parameters, taken):
        """The parameters as one flat buffer per dtype (the problem format's 64 tensors): the reference
        views each parameter out of it, in order."""
        buffers = {}
        for p in parameters:
            buffers.setdefault(p["dtype"], []).append(p)
        packed = []
        for dtype, members in buffers.items():
            parts = {}  # each shape's element count, and how many parameters have it
            for p in members:
                factors = ["(%s)" % d if (" + " in d or " - " in d) else d for d in p["shape"]]
                part = " * ".join(factors)
                parts[part] = parts.get(part, 0) + 1
            total = " + ".join(part if n == 1 else "%d * %s" % (n, part) for part, n in parts.items())
            packed.append({"name": fresh("params_%s" % dtype, taken), "dtype": dtype,
                           "shape": [total], "members": members,
                           "distribution": {"kind": "normal", "mean": 0.0, "std": 0.05}})
        return packed

    def fuzz_sizes(self, variable, domains, main, rules, tensors, outputs, symbols):
        """Size sets the Model takes, within the limits, each run on the CPU: (kept, dropped, the probe)."""
        first = next((t for t in tensors if not t["zero_dim"]), None)
        row = first["shape"][-1] if first and first["shape"][-1] in variable else None
        candidates = []
        for plan in fuzz_candidates(variable, row) if variable else []:
            candidates.append(dict(main, **{s: domains[s].snap(v) for s, v in plan.items()}))
        for k in (2, 4, 8, 16, 32, 64, 128, 256):
            candidates.append(dict(main, **{s: domains[s].snap(max(1, main[s] // k)) for s in variable}))
        # The limit on elements: the fuzz limit, or twice the smallest set's where fixed parameters alone
        # (a 4096 x 1024 Linear) pass it, up to four times the fuzz limit.
        smallest = []
        for values in candidates:
            try:
                smallest.append(self.oracle(values).elements())
            except ProbeFailed:
                pass
        limit = max(FUZZ_ELEMENT_LIMIT, min(2 * min(smallest), 4 * FUZZ_ELEMENT_LIMIT) if smallest else 0)
        kept, dropped, ready, seen = [], [], [], []
        for values in candidates:
            if values in seen or values == main:
                continue
            seen.append(values)
            sizes = {s: values[s] for s in symbols}
            try:
                shapes = self.oracle(values)
            except ProbeFailed as failed:
                dropped.append({"sizes": sizes, "reason": "the Model refuses them: %s" % failed})
                continue
            wrong = [key for key, rule in rules.items() if shapes.dims.get(key) != rule(values)]
            if wrong:
                dropped.append({"sizes": sizes, "reason": "%s is %s there, not %d by its rule" % (
                    _name(wrong[0]), shapes.dims.get(wrong[0]), rules[wrong[0]](values))})
                continue
            if shapes.elements() > limit:
                dropped.append({"sizes": sizes, "reason": "%d elements, above the fuzz limit" % shapes.elements()})
                continue
            if shapes.flops() > FUZZ_FLOP_LIMIT:
                dropped.append({"sizes": sizes, "reason": "%.3g FLOPs, above the fuzz limit" % shapes.flops()})
                continue
            ready.append((shapes.elements(), len(ready), values, sizes))
        probes = [r[2] for r in sorted(ready)[:3]] or [self.smallest_point(main)]
        for _, _, values, sizes in ready:
            if len(kept) >= 10:
                break
            try:
                _, _, _, got = run_forward(self.problem, values, 2)
                got = as_output_list(self.torch, got)
                want = [[evaluate(d, values) for d in o["shape"]] for o in outputs]
                have = [list(g.shape) or [1] for g in got]
                if want != have:
                    raise ValueError("outputs %s, expected %s" % (have, want))
                kept.append(sizes)
            except Refusal:
                raise
            except Exception as error:  # noqa: BLE001 - a size the Model cannot take is left out, said why
                dropped.append({"sizes": sizes, "reason": "%s: %s" % (type(error).__name__, str(error)[:200])})
        self.problem.set_globals(self.problem.main_globals)
        return kept, dropped, probes

    def smallest_point(self, main):
        """Where a fixed-size problem is checked on the CPU: each symbol at its smallest value the Model
        takes alone (HingeLoss takes batch_size 1 and 32768 only), else KernelBench's."""
        point = dict(main)
        for s in main:
            for x in range(1, 9):
                try:
                    self.oracle(dict(point, **{s: x}))
                    point[s] = x
                    break
                except ProbeFailed:
                    continue
        for values in (point, main):
            try:
                if self.oracle(values).elements() <= PROBE_ELEMENT_LIMIT:
                    return values
            except ProbeFailed:
                continue
        return None

    def check_numerically(self, probes, tensors, parameters):
        """One small CPU forward pass, twice: random draws, data-dependent output shapes, state drawn in
        __init__; and the values the inputs and parameters are drawn from."""
        torch = self.torch
        if probes[0] is None:
            self.notes.append("not run on the CPU: even the smallest size set the Model takes is above %d "
                              "elements (random draws and data-dependent shapes unchecked)" % PROBE_ELEMENT_LIMIT)
            for t in tensors + parameters:
                t["distribution"] = {"kind": "integers", "low": 0, "high": 1} if t["bool"] else \
                    {"kind": "normal", "mean": 0.0, "std": 1.0}
            return
        failure = None
        for probe in probes:
            try:
                inputs, init, model, outputs = run_forward(self.problem, probe, 0)
                _, _, _, again = run_forward(self.problem, probe, 1)
                break
            except Refusal:
                raise
            except Exception as error:  # noqa: BLE001 - the next smallest size set, else refused
                failure = failure or (probe, error)
        else:
            probe, error = failure
            raise missing_piece(error) or Refusal("forward-failed", "Model.forward at %s raised %s: %s"
                                                  % (probe, type(error).__name__, error))
        outputs, again = as_output_list(torch, outputs), as_output_list(torch, again)
        if [tuple(o.shape) for o in outputs] != [tuple(o.shape) for o in again]:
            raise Refusal("data-dependent-shape", "forward()'s output shape depends on the input values (%s, then "
                          "%s at the same sizes)" % ([list(o.shape) for o in outputs], [list(o.shape) for o in again]))
        self.check_init_state(init, inputs, model, outputs)
        for t in tensors:
            t["distribution"] = distribution(torch, inputs[t["index"]])
        named = dict(model.named_parameters())
        for p in parameters:
            p["distribution"] = distribution(torch, named[p["parameter"]])

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
import math as _kl_math

import torch as _kl_torch

_KL_BINDING = {binding}  # (symbol, input, dimension, rule): the symbol's value is the one that gives it
_KL_FROZEN = {frozen}  # symbols at KernelBench's value in every size set
_KL_PARAMETERS = {parameters}  # input: the Model parameter it is
_KL_PACKED = {packed}  # buffer: [(parameter, shape rules)], viewed out of it in order
_KL_ZERO_DIM_IN = {zero_dim_in}  # 0-d tensors in PyTorch, one element here
_kl_models = {{}}
_kl_last = [None, None]


def _kl_eval(rule, values):
    return int(eval(rule, {{"__builtins__": {{}}, "floor": _kl_math.floor, "ceil": _kl_math.ceil}}, values))


def _kl_solve(symbol, rule, target, values):
    """The smallest value of `symbol` whose rule reaches `target` (each rule grows with its symbol)."""
    low, high = 1, 1 << 41
    while low < high:
        middle = (low + high) // 2
        values[symbol] = middle
        if _kl_eval(rule, values) < target:
            low = middle + 1
        else:
            high = middle
    values[symbol] = low
    return low


def _kl_model(tensors):
    """The Model for these shapes: the size globals set as get_inputs() would have them, then
    Model(*get_init_inputs()), one per shape and device; the parameters are the given inputs."""
    key = tuple((name, tuple(t.shape), str(t.device)) for name, t in tensors.items())
    if _kl_last[0] == key:
        model = _kl_last[1]
    else:
        values = dict(_KL_FROZEN)
        for symbol, name, dim, rule in _KL_BINDING:
            _kl_solve(symbol, rule, tensors[name].shape[dim], values)
        globals().update(values)
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
            model._kl_given = {{}}
            _kl_models[model_key] = model
        model._kl_values = values
        _kl_last[0], _kl_last[1] = key, model
    for owner, leaf, name in model._kl_slots:
        given = tensors[name]
        if model._kl_given.get(name) is not given:
            owner._parameters[leaf] = given.reshape(()) if name in _KL_ZERO_DIM_IN else given
            model._kl_given[name] = given
    for name, members in _KL_PACKED.items():
        flat = tensors[name]
        if model._kl_given.get(name) is flat:
            continue
        offset = 0
        for path, rules in members:
            shape = [_kl_eval(r, model._kl_values) for r in rules]
            count = _kl_math.prod(shape)
            owner, _, leaf = path.rpartition(".")
            owner = model.get_submodule(owner) if owner else model
            owner._parameters[leaf] = flat[offset:offset + count].view(shape)
            offset += count
        model._kl_given[name] = flat
    return model


def reference({signature}):
    model = _kl_model({tensor_dict})
    out = model({call})
    {returns}
'''


def reference_source(source, file_name, importer):
    """The KernelBench file as it is, then the reference(**tensors, **scalars) the runner calls."""
    w = importer.wrapper
    listed = w["tensors"] + (w["packed"] or w["parameters"])
    names = [t["name"] for t in listed] + [s["name"] for s in w["scalars"]]
    by_name = {t["name"]: t for t in w["tensors"]}

    def argument(name):
        t = by_name.get(name)
        if t is None:
            return name
        return name + (".bool()" if t["bool"] else "") + (".reshape(())" if t["zero_dim"] else "")

    def result(text, o):
        return text + (".reshape(1)" if o["zero_dim"] else "") + (".to(_kl_torch.uint8)" if o["bool"] else "")

    outputs = w["outputs"]
    if len(outputs) == 1:
        returns = "return " + result("out", outputs[0])
    else:
        returns = "return (%s)" % ", ".join(result("out[%d]" % i, o) for i, o in enumerate(outputs))
    parameters = {} if w["packed"] else {p["name"]: p["parameter"] for p in w["parameters"]}
    packed = {b["name"]: [(p["parameter"], p["shape"] if not p["zero_dim"] else []) for p in b["members"]]
              for b in w["packed"]}
    zero_dim_in = sorted(p["name"] for p in w["parameters"] if p["zero_dim"])
    wrapper = REFERENCE_WRAPPER.format(
        file=file_name, args=", ".join(w["forward_args"]), binding=repr(importer.binding),
        frozen=repr(importer.frozen), parameters=repr(parameters), packed=repr(packed),
        zero_dim_in=repr(zero_dim_in), signature=", ".join(names),
        tensor_dict="{%s}" % ", ".join("%r: %s" % (t["name"], t["name"]) for t in listed),
        call=", ".join(argument(a) for a in w["forward_args"]), returns=returns)
    return source.rstrip("\n") + "\n" + wrapper


def main(argv=None):
    argv = argv or sys.argv
    request_path, out_dir = argv[1], argv[2]
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
            out.write(reference_source(importer.source, os.path.basename(request["file"]), importer))
    except Refusal as refusal:
        reply = {"ok": False, "error": {"category": refusal.category, "message": refusal.message}}
    except Exception as error:  # noqa: BLE001 - the user's Model failing in a way we did not foresee
        piece = missing_piece(error)
        reply = {"ok": False, "error": {"category": piece.category if piece else "forward-failed",
                                        "message": piece.message if piece else "%s: %s" % (type(error).__name__,
                                                                                            error),
                                        "traceback": traceback.format_exc(limit=8)}}
    with open(os.path.join(out_dir, "reply.json"), "w") as out:
        json.dump(reply, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if sys.argv[1:] == ["--serve"]:  # a folder: one Python, PyTorch imported once, a fork per file
        import warm_tool
        sys.exit(warm_tool.serve(main, ("torch", "torch.nn", "torch.nn.functional", "flop_count")))
    sys.exit(main(sys.argv))
