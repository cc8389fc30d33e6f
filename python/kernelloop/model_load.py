"""Loads a model file for kernelloop-cli model / model-check (docs/formats.md, "Model files").

Two shapes of file are accepted:
  KernelBench's: class Model(nn.Module), get_inputs(), get_init_inputs() (optional); the model is
      Model(*get_init_inputs()) built under torch.manual_seed(seed): its weights are seeded random.
  A module with example inputs: get_model() returning the nn.Module (its weights are its own, real
      when the function loads them) and get_inputs() giving the example inputs.
Either may set KL_EVAL = True to be captured in eval mode; otherwise the model runs in the mode it is
built in (training for a fresh nn.Module, as KernelBench runs it).
"""
import importlib.util
import inspect
import sys

MODULE_NAME = "kl_model"  # the name the file runs under here and in every reference written from it


class Refusal(Exception):
    def __init__(self, category, message):
        super().__init__(message)
        self.category = category
        self.message = message


def read_source(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise Refusal("unreadable", "cannot read %s: %s" % (path, error))


def load_module(path):
    """The file as a module named MODULE_NAME; its own failures are the user's, named as such."""
    source = read_source(path)
    try:
        code = compile(source, path, "exec")
    except SyntaxError as error:
        raise Refusal("syntax-error", "%s:%s: %s" % (path, error.lineno, error.msg))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = path
    sys.modules[MODULE_NAME] = module  # fx and pickle look functions up by their module
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the user's model is the point
    except ModuleNotFoundError as error:
        raise Refusal("missing-package", "%s imports %s, which this Python (%s) does not have"
                      % (path, error.name, sys.executable))
    except BaseException as error:  # noqa: BLE001 - sys.exit() at import is the file's failure too
        raise Refusal("import-failed", "importing %s raised %s: %s" % (path, type(error).__name__, error))
    return source, module


class LoadedModel:
    """The model, its example inputs and what the capture says about them."""

    def __init__(self, torch, path, seed=0, eval_mode=None):
        self.torch = torch
        self.path = path
        self.seed = seed
        self.source, self.module = load_module(path)
        module = self.module
        get_inputs = getattr(module, "get_inputs", None)
        if not callable(get_inputs):
            raise Refusal("no-inputs", "%s defines no get_inputs(): the model's example inputs" % path)
        if callable(getattr(module, "get_model", None)):
            self.spec = "module"
            self.weights = "the model's own (get_model())"
        elif inspect.isclass(getattr(module, "Model", None)) and issubclass(module.Model, torch.nn.Module):
            self.spec = "kernelbench"
            self.weights = "seeded random (Model(*get_init_inputs()) under torch.manual_seed(%d))" % seed
        else:
            raise Refusal("no-model", "%s defines neither class Model(torch.nn.Module) (KernelBench) nor "
                                      "get_model()" % path)
        self.init_inputs = []
        try:
            self.model = self.build()
        except Refusal:
            raise
        except BaseException as error:  # noqa: BLE001
            raise Refusal("init-failed", "building the model raised %s: %s" % (type(error).__name__, error))
        if not isinstance(self.model, torch.nn.Module):
            raise Refusal("no-model", "get_model() returned %s, not a torch.nn.Module" % type(self.model).__name__)
        wants_eval = getattr(module, "KL_EVAL", False) if eval_mode is None else eval_mode
        if wants_eval:
            self.model.eval()
        self.mode = "training" if self.model.training else "eval"
        self.inputs = self.example_inputs()

    def build(self):
        torch = self.torch
        torch.manual_seed(self.seed)
        if self.spec == "module":
            return self.module.get_model()
        get_init = getattr(self.module, "get_init_inputs", None)
        self.init_inputs = list(get_init()) if callable(get_init) else []
        return self.module.Model(*self.init_inputs)

    def example_inputs(self, seed=None):
        """get_inputs() under a seed: fresh inputs for model-check come from another seed."""
        torch = self.torch
        torch.manual_seed(self.seed + 1 if seed is None else seed)
        try:
            inputs = self.module.get_inputs()
        except BaseException as error:  # noqa: BLE001
            raise Refusal("inputs-failed", "get_inputs() raised %s: %s" % (type(error).__name__, error))
        if not isinstance(inputs, (list, tuple)):
            raise Refusal("bad-inputs", "get_inputs() must return a list, not %s" % type(inputs).__name__)
        for index, item in enumerate(inputs):
            if not (torch.is_tensor(item) or type(item) in (int, float, bool) or item is None):
                raise Refusal("bad-inputs", "input %d is a %s; tensors, numbers and None are supported"
                              % (index, type(item).__name__))
        return list(inputs)

    def forward(self, model, inputs, seed=None):
        """One forward pass; the RNG is seeded first so that two runs draw the same numbers."""
        torch = self.torch
        torch.manual_seed(self.seed + 2 if seed is None else seed)
        with torch.no_grad():
            try:
                return model(*inputs)
            except BaseException as error:  # noqa: BLE001
                raise Refusal("forward-failed", "the model's forward raised %s: %s" % (type(error).__name__, error))

    def concrete_args(self):
        """forward's parameters that get_inputs() does not give, at their defaults (fx bakes them in)."""
        try:
            parameters = list(inspect.signature(self.model.forward).parameters.values())
        except (TypeError, ValueError):
            return {}
        concrete = {}
        for index, p in enumerate(parameters):
            if index >= len(self.inputs) and p.default is not inspect.Parameter.empty:
                concrete[p.name] = p.default
        return concrete


def flat_tensors(torch, value):
    """The tensors of a nested output, in order, and the structure to rebuild it (lists of indices)."""
    tensors = []

    def walk(v):
        if torch.is_tensor(v):
            tensors.append(v)
            return len(tensors) - 1
        if isinstance(v, (tuple, list)):
            return [walk(x) for x in v]
        return None

    structure = walk(value)
    return tensors, structure
