"""The kernel torch.compile (Inductor) writes for a problem's PyTorch reference, as a KernelLoop
Triton candidate: its source, its launch grid, and its block sizes, num_warps and num_stages as
`# @kl` tunables, so that the built-in tuner can sweep it and a model can improve it.

    python3 inductor_kernel.py REQUEST.json OUT_DIR

Two stages, kept apart so that the second is tested without a GPU (tests/fixtures/inductor):
- capture(request): compiles the reference with dynamic shapes (sizes and strides become
  arguments, not literals baked into the body), runs it at the problem's first main size and at a
  second size, and records every Triton kernel Inductor wrote with the arguments of its launches
  at both sizes. Needs PyTorch 2 with Inductor, Triton and a CUDA GPU.
- convert(record, request): one kernel → the candidate file; several or none → a refusal that
  names what Inductor did. Integer launch arguments become expressions over the size symbols,
  fitted from the two sizes as import-kernelbench fits shapes.

The request: {"reference": path, "problem": name, "sizes": [{symbol: value}, {symbol: value}],
"tensors": [{"name", "role": "input"|"output", "dtype": "f32", "shapes": [[...], [...]]}],
"scalars": {name: value}}; with "record" (a capture) instead of a GPU run for convert alone.
The reply: {"ok": true, "candidate": text, "notes": [...], "record": {...}} or
{"ok": false, "error": {"category", "message"}, "record": {...}}.
"""
import json
import os
import re
import sys
import traceback


class Refusal(Exception):
    def __init__(self, category, message):
        super().__init__(message)
        self.category = category
        self.message = message


TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8",
                "u8": "uint8", "i32": "int32", "i64": "int64", "bool": "bool"}


# ---------------------------------------------------------------- capture (GPU, PyTorch 2)

def _tensor(torch, spec, shape, device):
    dtype = getattr(torch, TORCH_DTYPES.get(spec["dtype"], "float32"))
    if dtype.is_floating_point:
        return torch.randn(shape, device=device, dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, device=device) > 0.5
    return torch.randint(0, 8, shape, device=device, dtype=dtype)


def _as_list(torch, value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, (list, tuple)):
        return list(value)
    return []


def _load_reference(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("kl_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kl_reference"] = module  # torch.compile looks the function's module up by name
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return module.reference


def _autotuners():
    """Inductor's compiled kernel objects (CachingAutotuner and its subclasses), across versions."""
    import gc
    return [o for o in gc.get_objects()
            if type(o).__name__.endswith("Autotuner") and hasattr(o, "launchers") and hasattr(o, "fn")]


def _kernel_name(tuner):
    meta = getattr(tuner, "inductor_meta", None) or {}
    if isinstance(meta, dict) and meta.get("kernel_name"):
        return meta["kernel_name"]
    for attr in ("__name__", "name"):
        try:
            value = getattr(tuner.fn, attr)
        except Exception:  # noqa: BLE001 - Triton's JITFunction may hold no function any more
            continue
        if isinstance(value, str):
            return value
    return "kernel_%x" % id(tuner)


def _describe_argument(torch, value, names):
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "name": names.get(value.data_ptr()), "dtype": str(value.dtype),
                "shape": list(value.shape), "stride": list(value.stride())}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "int", "value": value}
    if isinstance(value, float):
        return {"kind": "float", "value": value}
    return {"kind": "other", "repr": repr(value)[:80]}


def capture(request):
    try:
        import torch
        import triton
        from torch._inductor.utils import run_and_get_code
    except Exception as error:  # noqa: BLE001
        raise Refusal("needs-inductor", "needs PyTorch 2 with Inductor and Triton: %s" % error)
    if not torch.cuda.is_available():
        raise Refusal("needs-gpu", "torch.compile writes its Triton kernels for a CUDA device; none is visible")
    reference = _load_reference(request["reference"])
    scalars = request.get("scalars", {})
    torch._dynamo.reset()
    # A candidate is one kernel. Inductor splits a long reduction into a partial and a final kernel when
    # the reduced rows are few (softmax at 4096x6144 came back as two kernels, refused); with the split
    # off it writes one looped reduction kernel, which the tuner can then retile.
    try:
        import torch._inductor.config as inductor_config
        inductor_config.split_reductions = False
    except Exception:  # noqa: BLE001 - an Inductor without the switch splits as before; refusals say so
        pass
    compiled = torch.compile(reference, dynamic=True)
    record = {"torch": torch.__version__, "triton": triton.__version__, "code": "", "kernels": [],
              "sizes": request["sizes"]}
    calls = {}
    owners = {}  # kernel name -> the autotuner that launched it in this capture
    wrapped = set()
    current = {"at": 0}
    for at, _ in enumerate(request["sizes"]):
        current["at"] = at
        tensors = {}
        for spec in request["tensors"]:
            if spec["role"] == "input":
                tensors[spec["name"]] = _tensor(torch, spec, spec["shapes"][at], "cuda")
        kwargs = dict(tensors)
        kwargs.update(scalars)
        # The first call at a size may compile (the reference's Python can make Dynamo recompile at a
        # new shape); the kernels it launches are wrapped after it and recorded on a second call.
        _, codes = run_and_get_code(compiled, **kwargs)
        if at == 0:
            record["code"] = "\n\n".join(codes)
        elif codes:
            record.setdefault("recompiled", []).append("\n\n".join(codes))
        # The kernels' launches at this size, with their real arguments (wrapping each kernel's run).
        for tuner in _autotuners():
            if id(tuner) in wrapped:
                continue
            wrapped.add(id(tuner))
            name = _kernel_name(tuner)

            def recording(*args, _run=tuner.run, _name=name, _tuner=tuner, **kw):
                # Per size: a recompile at the second size makes a tuner of its own, tuned for that size.
                owners.setdefault(_name, {}).setdefault(current["at"], _tuner)
                calls.setdefault(_name, {}).setdefault(current["at"], []).append((args, kw))
                return _run(*args, **kw)
            tuner.run = recording
        result = compiled(**kwargs)
        torch.cuda.synchronize()
        names = {t.data_ptr(): n for n, t in tensors.items()}
        outputs = [s["name"] for s in request["tensors"] if s["role"] == "output"]
        for name, tensor in zip(outputs, _as_list(torch, result)):
            names.setdefault(tensor.data_ptr(), name)
        for kernel, by_size in calls.items():
            for args, kw in by_size.get(at, []):
                entry = next((k for k in record["kernels"] if k["name"] == kernel), None)
                if entry is None:
                    entry = {"name": kernel, "calls": [[] for _ in request["sizes"]]}
                    record["kernels"].append(entry)
                described = [_describe_argument(torch, a, names) for a in args]
                described += [dict(_describe_argument(torch, v, names), keyword=k) for k, v in kw.items()
                              if k not in ("stream",)]
                entry["calls"][at].append(described)
    for name, by_size in owners.items():
        entry = next((k for k in record["kernels"] if k["name"] == name), None)
        if entry is not None:
            # The configuration tuned at the main size, the one that is timed.
            _describe_tuner(by_size.get(0) or next(iter(by_size.values())), entry)
            entry["recompiled_at_second_size"] = len({id(t) for t in by_size.values()}) > 1
    for kernel in record["kernels"]:
        kernel["source"] = kernel_sources(record["code"]).get(kernel["name"], "")
    return record


def _describe_tuner(tuner, entry):
    """What the autotuner chose and could have chosen; each part is best effort (versions differ)."""
    def attempt(key, make):
        try:
            entry[key] = json.loads(json.dumps(make(), default=str))
        except Exception as error:  # noqa: BLE001
            entry.setdefault("unreadable", []).append("%s: %s" % (key, error))
    configs = getattr(tuner, "configs", None) or [getattr(r, "config", None)
                                                  for r in (getattr(tuner, "compile_results", None) or [])]
    attempt("configs", lambda: [_config(c) for c in configs if c is not None])
    attempt("chosen", lambda: _config(tuner.launchers[0].config))
    attempt("triton_meta", lambda: _string_keys(getattr(tuner, "triton_meta", {})))
    attempt("inductor_meta", lambda: getattr(tuner, "inductor_meta", {}))
    attempt("size_hints", lambda: getattr(tuner, "size_hints", None))
    attempt("heuristic", lambda: str(getattr(tuner, "heuristic_type", "")))
    attempt("grid_mode", lambda: str(getattr(tuner, "grid_mode", "")))


def _string_keys(value):
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_string_keys(v) for v in value]
    return value


def _config(config):
    return {"kwargs": dict(getattr(config, "kwargs", {})), "num_warps": getattr(config, "num_warps", None),
            "num_stages": getattr(config, "num_stages", None)}


# ---------------------------------------------------------------- convert (pure Python)

def kernel_sources(code):
    """Inductor's output code holds each kernel as async_compile.triton('name', '''source''', ...)."""
    out = {}
    for match in re.finditer(r"async_compile\.triton\(\s*'(\w+)'\s*,\s*'''(.*?)'''", code, re.S):
        out[match.group(1)] = match.group(2)
    return out


def _strip_decorators(source):
    """Inductor's heuristics decorators (autotuning at run time) go; @triton.jit stays."""
    lines = source.split("\n")
    out, depth, skipping = [], 0, False
    for line in lines:
        stripped = line.strip()
        if not skipping and stripped.startswith("@") and not stripped.startswith("@triton.jit"):
            skipping = True
            depth = 0
        if skipping:
            depth += line.count("(") - line.count(")")
            if depth <= 0:
                skipping = False
            continue
        out.append(line)
    return "\n".join(out)


def _signature(source, name):
    match = re.search(r"def\s+%s\s*\((.*?)\)\s*:" % re.escape(name), source, re.S)
    if not match:
        raise Refusal("no-kernel-def", "Inductor's kernel %s has no def line that could be read" % name)
    params = []
    for part in match.group(1).split(","):
        part = part.strip()
        if not part:
            continue
        pname = part.split(":")[0].strip()
        params.append({"name": pname, "constexpr": "constexpr" in part})
    return params


def _fit(values, sizes):
    """An expression over the size symbols equal to values[i] at sizes[i]: a constant, or c times a product
    of up to three symbols (a flattened 3-D tensor's numel; kernelbench_import's dim_expression fits one
    dimension, at most two). None when nothing fits."""
    if all(v == values[0] for v in values):
        return str(values[0])
    import itertools
    symbols = sorted(sizes[0].keys())
    for count in range(1, min(len(symbols), 3) + 1):
        for combo in itertools.combinations_with_replacement(symbols, count):
            products = [_product(s, combo) for s in sizes]
            if 0 in products or values[0] % products[0]:
                continue
            factor = values[0] // products[0]
            if factor and all(v == factor * p for v, p in zip(values, products)):
                text = " * ".join(combo)
                return text if factor == 1 else "%d * %s" % (factor, text)
    return None


def _product(sizes, symbols):
    p = 1
    for symbol in symbols:
        p *= sizes[symbol]
    return p


def _pow2_values(chosen, configs, key, low, high):
    """The powers of two from low to high, with the chosen value and every autotuning config's."""
    values = {c["kwargs"].get(key) for c in configs} | {chosen} | {1 << i for i in range(64) if low <= 1 << i <= high}
    return sorted(v for v in values if v)


def convert(record, request):
    notes = []
    kernels = record.get("kernels", [])
    written = kernel_sources(record.get("code", ""))
    if not written and not kernels:
        what = "an extern call" if "extern_kernels" in record.get("code", "") else "no Triton kernel"
        raise Refusal("inductor-no-kernel", "torch.compile wrote %s for this reference (%s): there is no Triton "
                                            "kernel to start from; ask a model for the first kernel (--proposer llm)"
                      % (what, ", ".join(sorted(set(re.findall(r"extern_kernels\.(\w+)", record.get("code", "")))))
                            or "nothing launched"))
    names = sorted(set(written) | {k["name"] for k in kernels})
    if len(names) != 1:
        raise Refusal("inductor-several-kernels", "torch.compile wrote %d Triton kernels for this reference (%s); a "
                                                  "candidate has one launch: start from a model's kernel instead "
                                                  "(--proposer llm)" % (len(names), ", ".join(names)))
    kernel = next((k for k in kernels if k["name"] == names[0]), {"name": names[0], "calls": []})
    source = kernel.get("source") or written.get(names[0], "")
    calls = kernel.get("calls", [])
    if len(calls) < 2 or any(len(c) != 1 for c in calls):
        raise Refusal("inductor-launches", "Inductor's kernel %s was not launched exactly once at each of the two "
                                           "sizes: the launch could not be read" % names[0])
    params = _signature(source, names[0])
    positional = [p for p in params if not p["constexpr"]]
    main_args, second_args = calls[0][0], calls[1][0]
    main_args = [a for a in main_args if "keyword" not in a]
    second_args = [a for a in second_args if "keyword" not in a]
    if len(main_args) < len(positional):
        raise Refusal("inductor-launches", "the launch of %s passed %d arguments for %d parameters"
                      % (names[0], len(main_args), len(positional)))
    signature = (kernel.get("triton_meta") or {}).get("signature", {})
    args, numels = [], {}
    for param, a, b in zip(positional, main_args, second_args):
        if a["kind"] == "tensor":
            if not a.get("name"):
                raise Refusal("inductor-scratch", "Inductor's kernel %s uses a buffer (%s) that is neither an input "
                                                  "nor an output of the reference" % (names[0], param["name"]))
            args.append(a["name"])
        elif a["kind"] in ("int", "bool"):
            expression = _fit([a["value"], b["value"]], request["sizes"])
            if expression is None:
                raise Refusal("inductor-specialised", "the argument %s of %s (%d, then %d) is no product of the "
                                                      "size symbols" % (param["name"], names[0], a["value"],
                                                                        b["value"]))
            wide = str(signature.get(param["name"], "")).startswith("i64") or a["value"] >= 2 ** 31
            args.append(expression + (" as i64" if wide else ""))
            numels[param["name"]] = expression
        else:
            raise Refusal("inductor-launches", "the argument %s of %s is a %s" % (param["name"], names[0], a["kind"]))
    if kernel.get("recompiled_at_second_size"):
        notes.append("torch.compile compiled %s again at the second size: the configuration is the one tuned at the "
                     "main size" % names[0])
    for literal in re.findall(r"^\s*(\w+numel)\s*=\s*(\d+)\s*$", source, re.M):
        notes.append("Inductor specialised %s = %s in the kernel's body: other sizes may fail verification"
                     % literal)

    chosen = kernel.get("chosen") or {"kwargs": {}, "num_warps": 4, "num_stages": 1}
    configs = kernel.get("configs", [])
    tunables, constexprs = [], []
    for param in [p for p in params if p["constexpr"]]:
        value = chosen["kwargs"].get(param["name"])
        if value is None:
            constant = ((kernel.get("triton_meta") or {}).get("constants") or {}).get(param["name"])
            if constant is None:
                raise Refusal("inductor-constexpr", "the constexpr %s of %s has no value in the chosen config"
                              % (param["name"], names[0]))
            constexprs.append("%s=%s" % (param["name"], constant))
            continue
        if re.fullmatch(r"[XYZR]0?_?BLOCK|R0_BLOCK|RBLOCK|[XYZ]BLOCK", param["name"]) and value & (value - 1) == 0:
            values = _pow2_values(value, configs, param["name"], 1 if value < 8 else 8, max(4096, value))
            tunables.append("# @kl tunable %s = %d in %s" % (param["name"], value, ", ".join(map(str, values))))
            constexprs.append("%s=%s" % (param["name"], param["name"]))
        else:
            constexprs.append("%s=%d" % (param["name"], value))
    warps = chosen.get("num_warps") or 4
    stages = chosen.get("num_stages") or 1
    warp_values = sorted({1, 2, 4, 8, 16, warps} | {c.get("num_warps") for c in configs if c.get("num_warps")})
    tunables.append("# @kl tunable W = %d in %s" % (warps, ", ".join(map(str, warp_values))))
    tunables.append("# @kl tunable S = %d in %s" % (stages, ", ".join(map(str, sorted({1, 2, 3, stages})))))
    grid = []
    for axis, block in (("x", "XBLOCK"), ("y", "YBLOCK"), ("z", "ZBLOCK")):
        numel = numels.get(axis + "numel")
        if numel is None:
            continue
        if any(p["name"] == block for p in params):
            grid.append("cdiv(%s, %s)" % (numel, block))
        else:
            grid.append(numel)
    if not grid:
        raise Refusal("inductor-grid", "Inductor's kernel %s takes no xnumel argument: its grid could not be "
                                       "derived" % names[0])
    body = _strip_decorators(source).strip("\n")
    header = ("# The kernel torch.compile (Inductor, torch %s, Triton %s) wrote for %s, with dynamic shapes, taken\n"
              "# by kernelloop-cli as the starting candidate: its block sizes, num_warps and num_stages are tunables.\n"
              % (record.get("torch", "?"), record.get("triton", "?"), request.get("problem", "the problem")))
    launch = "# @kl launch %s grid=(%s) num_warps=(W) num_stages=(S) args=(%s)" % (
        names[0], ", ".join(grid), ", ".join(args + constexprs))
    candidate = header + "\n".join(tunables) + "\n" + launch + "\n\n" + body + "\n"
    return candidate, notes


def main():
    request_path, out_dir = sys.argv[1], sys.argv[2]
    record = None
    try:
        with open(request_path) as handle:
            request = json.load(handle)
        record = request.get("record") or capture(request)
        candidate, notes = convert(record, request)
        reply = {"ok": True, "candidate": candidate, "notes": notes, "record": record}
    except Refusal as refusal:
        reply = {"ok": False, "error": {"category": refusal.category, "message": refusal.message}, "record": record}
    except Exception as error:  # noqa: BLE001 - Inductor failing in a way we did not foresee
        reply = {"ok": False, "error": {"category": "inductor-failed", "message": "%s: %s" % (type(error).__name__,
                                                                                          error),
                                        "traceback": traceback.format_exc(limit=8)}, "record": record}
    with open(os.path.join(out_dir, "reply.json"), "w") as out:
        json.dump(reply, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
