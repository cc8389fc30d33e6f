#!/usr/bin/env python3
"""The runner's PyTorch worker: evaluates a problem's PyTorch reference on the runner's own inputs.

The runner (runner/python_reference.cpp) starts `python3 torch_reference_worker.py` once and speaks
JSON lines over stdin/stdout. Tensors cross through host shared memory: the runner writes each
input's data region (rows x row_stride elements, padding gaps included) into a file under /dev/shm,
the worker maps it, views each tensor in its shape and strides, runs reference(**inputs, **scalars)
(on the GPU when there is one), and writes the outputs back into their regions of the same file.

Requests (one JSON object a line; every reply has "ok"):
  {"op": "hello"}                                  -> {"ok", "torch", "device"}
  {"op": "reference", "source", "file", "shm", "tensors": [...], "scalars": {...}}
                                                   -> {"ok", "ms": {"map", "to_device", "call", "from_device"}}
  {"op": "time", ... as reference, "warmup", "reps", "flush_bytes", "compile": true}
                                                   -> {"ok", "eager": SUMMARY, "compiled": SUMMARY | null,
                                                       "compile_error": str}
  {"op": "shutdown"}
A tensor: {"name", "role": "input"|"output", "dtype": "f16", "shape": [..], "row_stride", "offset"}.
A failure: {"ok": false, "category": "reference-error" | "bad-request", "message", "traceback"}.
"""
import hashlib
import inspect
import json
import mmap
import os
import sys
import tempfile
import time
import traceback

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8",
          "i32": "int32", "i64": "int64"}
_modules = {}
_compiled = {}
_source_folder = []


def source_folder():
    """One folder per worker for the reference sources, removed when the worker exits. The files stay
    while it runs so that a traceback can quote the offending line; a worker killed with SIGKILL leaves
    its folder behind (the system's tmp cleaning takes it)."""
    if not _source_folder:
        import atexit
        import shutil
        _source_folder.append(tempfile.mkdtemp(prefix="kl-reference-"))
        atexit.register(shutil.rmtree, _source_folder[0], True)
    return _source_folder[0]


def torch_dtype(torch, name):
    return getattr(torch, DTYPES[name])


def load_reference(source, file_name):
    """The module's reference function, cached by the source's hash (one import per source)."""
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _modules:
        import importlib.util
        folder = os.path.join(source_folder(), key[:12])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, os.path.basename(file_name or "reference.py"))
        with open(path, "w") as out:
            out.write(source)
        spec = importlib.util.spec_from_file_location("kl_reference_" + key[:12], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not callable(getattr(module, "reference", None)):
            raise ValueError("%s defines no function reference(**tensors, **scalars)" % file_name)
        _modules[key] = module.reference
    return key, _modules[key]


def strided_views(torch, memory, tensors):
    """Each tensor as a view of its region: shape as the problem says, the runner's row stride."""
    views = {}
    for t in tensors:
        shape = [int(d) for d in t["shape"]]
        row_stride = int(t["row_stride"])
        elements = 1
        for d in shape[:-1]:
            elements *= d
        count = elements * row_stride if shape else 1
        flat = torch.frombuffer(memory, dtype=torch_dtype(torch, t["dtype"]), count=max(count, 1),
                                offset=int(t["offset"]))
        strides = []
        step = 1
        for index in range(len(shape) - 1, -1, -1):
            strides.insert(0, step)
            step *= row_stride if index == len(shape) - 1 else shape[index]
        views[t["name"]] = flat.as_strided(shape, strides) if shape else flat[:1].view([])
    return views


def call_arguments(function, inputs, outputs, scalars):
    """reference(**inputs, **scalars); output tensors too where it names them (written in place)."""
    kwargs = dict(inputs)
    kwargs.update(scalars)
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        parameters = {}
    for name, tensor in outputs.items():
        if name in parameters:
            kwargs[name] = tensor
    accepts_any = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
    if parameters and not accepts_any:
        kwargs = {k: v for k, v in kwargs.items() if k in parameters}
    return kwargs


def results_by_name(result, outputs, kwargs):
    names = list(outputs)
    if result is None:
        return {name: kwargs[name] for name in names if name in kwargs}
    if isinstance(result, dict):
        return result
    if isinstance(result, (tuple, list)):
        return dict(zip(names, result))
    return {names[0]: result}


def prepare(torch, request):
    started = time.perf_counter()
    device = request.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
    handle = open(request["shm"], "r+b")
    memory = mmap.mmap(handle.fileno(), 0)
    views = strided_views(torch, memory, request["tensors"])
    roles = {t["name"]: t["role"] for t in request["tensors"]}
    mapped = time.perf_counter()
    inputs = {n: v.to(device) for n, v in views.items() if roles[n] == "input"}
    outputs = {n: torch.empty(v.shape, dtype=v.dtype, device=device) for n, v in views.items() if roles[n] == "output"}
    if device == "cuda":
        torch.cuda.synchronize()
    moved = time.perf_counter()
    ms = {"map": (mapped - started) * 1e3, "to_device": (moved - mapped) * 1e3}
    return device, handle, memory, views, roles, inputs, outputs, ms


def run_reference(torch, request):
    _, function = load_reference(request["source"], request.get("file"))
    device, handle, memory, views, roles, inputs, outputs, ms = prepare(torch, request)
    try:
        kwargs = call_arguments(function, inputs, outputs, request.get("scalars", {}))
        started = time.perf_counter()
        with torch.no_grad():
            result = function(**kwargs)
        if device == "cuda":
            torch.cuda.synchronize()
        called = time.perf_counter()
        produced = results_by_name(result, outputs, kwargs)
        for name in outputs:
            if name not in produced:
                raise ValueError("the reference gave no output %s (return it, or take %s and write it)" % (name, name))
            got = produced[name]
            if not torch.is_tensor(got):
                raise ValueError("output %s is a %s, not a tensor" % (name, type(got).__name__))
            if list(got.shape) != list(views[name].shape):
                raise ValueError("output %s has shape %s; the problem says %s"
                                 % (name, list(got.shape), list(views[name].shape)))
            views[name].copy_(got.detach().to("cpu", views[name].dtype))
        memory.flush()
        ms.update(call=(called - started) * 1e3, from_device=(time.perf_counter() - called) * 1e3)
        return {"ok": True, "ms": ms, "device": device}
    finally:
        del views
        memory.close()
        handle.close()


def summary(samples_us):
    ordered = sorted(samples_us)
    count = len(ordered)

    def quantile(q):
        return ordered[min(count - 1, int(q * (count - 1) + 0.5))]

    mean = sum(ordered) / count
    spread = (sum((s - mean) ** 2 for s in ordered) / count) ** 0.5
    return {"median_us": quantile(0.5), "p20_us": quantile(0.2), "p80_us": quantile(0.8), "min_us": ordered[0],
            "mean_us": mean, "cv": spread / mean if mean else 0.0, "reps": count, "samples_us": ordered}


def time_function(torch, function, kwargs, flush, warmup, reps):
    """The runner's protocol: a cold L2 (the flush buffer written) before each run, CUDA events
    around the run alone, the median of the repetitions."""
    for _ in range(warmup):
        function(**kwargs)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for index in range(reps):
        flush.zero_()
        starts[index].record()
        function(**kwargs)
        ends[index].record()
    torch.cuda.synchronize()
    return summary([s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)])


def time_contenders(torch, request):
    if not torch.cuda.is_available():
        return {"ok": False, "category": "bad-request", "message": "timing needs a GPU; this worker has none"}
    key, function = load_reference(request["source"], request.get("file"))
    device, handle, memory, views, roles, inputs, outputs, ms = prepare(torch, dict(request, device="cuda"))
    try:
        kwargs = call_arguments(function, inputs, outputs, request.get("scalars", {}))
        flush = torch.empty(max(int(request.get("flush_bytes", 0)) // 4, 1 << 20), dtype=torch.int32, device="cuda")
        warmup, reps = int(request.get("warmup", 5)), int(request.get("reps", 50))
        reply = {"ok": True, "compiled": None, "compile_error": ""}
        with torch.no_grad():
            reply["eager"] = time_function(torch, function, kwargs, flush, warmup, reps)
            if request.get("compile", True):
                try:
                    started = time.perf_counter()
                    if key not in _compiled:
                        _compiled[key] = torch.compile(function)
                    _compiled[key](**kwargs)  # the compile itself, outside the timing
                    torch.cuda.synchronize()
                    reply["compile_ms"] = (time.perf_counter() - started) * 1e3
                    reply["compiled"] = time_function(torch, _compiled[key], kwargs, flush, warmup, reps)
                except Exception as error:  # noqa: BLE001 - a contender that does not compile says why
                    reply["compile_error"] = "%s: %s" % (type(error).__name__, str(error).splitlines()[0][:300]
                                                         if str(error) else "")
        return reply
    finally:
        del views
        memory.close()
        handle.close()


def answer(torch, request):
    op = request.get("op")
    if op == "hello":
        return {"ok": True, "torch": torch.__version__, "python": sys.version.split()[0],
                "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}
    if op == "reference":
        return run_reference(torch, request)
    if op == "time":
        return time_contenders(torch, request)
    return {"ok": False, "category": "bad-request", "message": "unknown op %r" % op}


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # the reference's prints must never reach the protocol
    try:
        import torch
    except Exception as error:  # noqa: BLE001
        out.write(json.dumps({"ok": False, "category": "needs-pytorch",
                              "message": "needs PyTorch: %s cannot import torch (%s)" % (sys.executable, error)})
                  + "\n")
        out.flush()
        return 3
    for line in sys.stdin:
        if not line.strip():
            continue
        request = None
        try:
            request = json.loads(line)
            if request.get("op") == "shutdown":
                out.write(json.dumps({"ok": True}) + "\n")
                out.flush()
                return 0
            reply = answer(torch, request)
        except Exception as error:  # noqa: BLE001 - the reference's failure is a reply, not a crash
            reply = {"ok": False, "category": "reference-error", "message": "%s: %s" % (type(error).__name__, error),
                     "traceback": traceback.format_exc(limit=6)}
        reply["id"] = request.get("id") if isinstance(request, dict) else None
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
