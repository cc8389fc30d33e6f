#!/usr/bin/env python3
"""The runner's PyTorch worker: evaluates a problem's PyTorch reference on the runner's own inputs.

The runner (runner/python_reference.cpp) starts `python3 torch_reference_worker.py` once and speaks
JSON lines over stdin/stdout. Tensors cross through host shared memory: the runner writes each
input's data region (rows x row_stride elements, padding gaps included) into a file under /dev/shm,
the worker maps it, views each tensor in its shape and strides, runs reference(**inputs, **scalars)
(on the GPU when there is one), and writes the outputs back into their regions of the same file.

On the GPU (issue 27) the tensors need not cross the host at all: a request whose tensors carry "ipc"
(the runner's cuIpcGetMemHandle of the tensor's allocation, hex) and "offset" (of the data region in that
allocation) has no "shm"; the worker opens each handle (cuIpcOpenMemHandle through ctypes on
libcuda.so.1), wraps the device memory as a tensor without a copy (__cuda_array_interface__), reads the
inputs there and writes the reference's outputs into the runner's reference-output buffers.

Requests (one JSON object a line; every reply has "ok"):
  {"op": "hello"}                                  -> {"ok", "torch", "device"}
  {"op": "reference", "source", "file", "shm", "tensors": [...], "scalars": {...}}
                                                   -> {"ok", "ms": {"map", "to_device", "call", "from_device"}}
  {"op": "time", ... as reference, "flush_bytes", "compile": true, and either "warmup", "reps" (fixed) or
   "adaptive": {"warmup_ms", "min_reps", "max_reps", "half_width", "time_cap_ms"} (the runner's rule)}
                                                   -> {"ok", "eager": SUMMARY, "compiled": SUMMARY | null,
                                                       "compile_error": str, "ms": {...}}
  {"op": "warm", "source", "file", "tensors" (no shm, no ipc), "scalars"}: torch.compile's compilation for
   these shapes on inputs of the worker's own, outside any timing -> {"ok", "compile_ms", "compile_error"}
  {"op": "shutdown"}
A tensor: {"name", "role": "input"|"output", "dtype": "f16", "shape": [..], "row_stride", "offset"[, "ipc"]}.
A failure: {"ok": false, "category": "reference-error" | "bad-request" | "ipc-unavailable", "message",
"traceback"}.
"""
import ctypes
import hashlib
import inspect
import math
import json
import mmap
import os
import struct
import sys
import tempfile
import time
import traceback

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8",
          "i32": "int32", "i64": "int64"}
_modules = {}
_compiled = {}
_warmed = set()
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


def element_strides(shape, row_stride):
    """Strides in elements of a tensor of `shape` whose rows (the last dimension) are row_stride apart."""
    strides = []
    step = 1
    for index in range(len(shape) - 1, -1, -1):
        strides.insert(0, step)
        step *= row_stride if index == len(shape) - 1 else shape[index]
    return strides


class IpcUnavailable(Exception):
    """The runner's device memory cannot be opened here: the runner falls back to host copies."""


class CudaIpc:
    """cuIpcOpenMemHandle / cuIpcCloseMemHandle from libcuda.so.1 through ctypes (no CuPy needed).

    The 64-byte handle is passed by value as eight 64-bit words: declared as a char array inside a
    Structure, ctypes classifies the by-value argument wrongly on x86-64 and the driver reads garbage
    (CUDA_ERROR_INVALID_VALUE on an H200 while a C program opened the same handle)."""

    class Handle(ctypes.Structure):
        _fields_ = [("word%d" % i, ctypes.c_uint64) for i in range(8)]

    def __init__(self):
        try:
            lib = ctypes.CDLL(os.environ.get("KL_CUDA_DRIVER") or "libcuda.so.1")
            self._open = getattr(lib, "cuIpcOpenMemHandle_v2")
            self._close = lib.cuIpcCloseMemHandle
        except (OSError, AttributeError) as error:
            raise IpcUnavailable("libcuda.so.1 has no CUDA IPC here: %s" % error)
        self._open.argtypes = [ctypes.POINTER(ctypes.c_uint64), CudaIpc.Handle, ctypes.c_uint]
        self._open.restype = ctypes.c_int
        self._close.argtypes = [ctypes.c_uint64]
        self._close.restype = ctypes.c_int

    def open(self, handle_hex):
        raw = bytes.fromhex(handle_hex)
        if len(raw) != 64:
            raise IpcUnavailable("an IPC handle of %d bytes, not 64" % len(raw))
        pointer = ctypes.c_uint64(0)
        handle = CudaIpc.Handle(*struct.unpack("<8Q", raw))
        result = self._open(ctypes.byref(pointer), handle, 1)  # lazy peer access
        if result != 0:
            raise IpcUnavailable("cuIpcOpenMemHandle failed with CUresult %d" % result)
        return pointer.value

    def close(self, pointer):
        return self._close(pointer)


_ipc = []


def cuda_ipc():
    if not _ipc:
        _ipc.append(CudaIpc())
    return _ipc[0]


class DeviceArray:
    """Device memory as __cuda_array_interface__ (v2) describes it, for torch.as_tensor without a copy."""

    TYPESTR = {"f16": "<f2", "bf16": "<i2", "f32": "<f4", "f64": "<f8", "i8": "|i1", "u8": "|u1", "i32": "<i4",
               "i64": "<i8"}
    SIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i32": 4, "i64": 8}

    def __init__(self, pointer, dtype, shape, strides):
        size = DeviceArray.SIZE[dtype]
        self.__cuda_array_interface__ = {"shape": tuple(shape), "strides": tuple(s * size for s in strides),
                                         "typestr": DeviceArray.TYPESTR[dtype], "data": (pointer, False),
                                         "version": 2}


class DeviceViews:
    """The runner's tensors opened in this process: `views` by name; close() unmaps them (after a
    synchronize: nothing may still read or write them when the runner goes on)."""

    def __init__(self, torch, tensors):
        self.torch = torch
        self.pointers = []
        self.views = {}
        ipc = cuda_ipc()
        torch.cuda.init()
        torch.empty(1, device="cuda")  # the primary context current on this thread for the driver calls
        try:
            for t in tensors:
                base = ipc.open(t["ipc"])
                self.pointers.append(base)
                shape = [int(d) for d in t["shape"]]
                strides = element_strides(shape, int(t["row_stride"]))
                array = DeviceArray(base + int(t["offset"]), t["dtype"], shape, strides)
                view = torch.as_tensor(array, device="cuda")
                if t["dtype"] == "bf16":
                    view = view.view(torch.bfloat16)
                self.views[t["name"]] = view
        except Exception:
            self.close()
            raise

    def close(self):
        if self.pointers:
            self.torch.cuda.synchronize()
        self.views = {}
        for pointer in self.pointers:
            cuda_ipc().close(pointer)
        self.pointers = []


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
        strides = element_strides(shape, row_stride)
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


class Tensors:
    """A request's tensors where the worker computes: by the host path copies of the shared file's regions
    on the device (inputs) and fresh outputs; on the GPU the runner's own buffers (inputs read in place,
    outputs written into the runner's reference-output buffers)."""

    def __init__(self, torch, request, device):
        started = time.perf_counter()
        self.device = device
        self.on_gpu = any("ipc" in t for t in request["tensors"])
        self.handle = self.memory = self.device_views = None
        roles = {t["name"]: t["role"] for t in request["tensors"]}
        if self.on_gpu:
            if device != "cuda":
                raise IpcUnavailable("the runner's device buffers need CUDA; this worker has none")
            self.device_views = DeviceViews(torch, request["tensors"])
            self.views = self.device_views.views
            self.inputs = {n: v for n, v in self.views.items() if roles[n] == "input"}
        else:
            self.handle = open(request["shm"], "r+b")
            self.memory = mmap.mmap(self.handle.fileno(), 0)
            self.views = strided_views(torch, self.memory, request["tensors"])
            self.inputs = {n: v.to(device) for n, v in self.views.items() if roles[n] == "input"}
        self.outputs = {n: torch.empty(v.shape, dtype=v.dtype, device=device) for n, v in self.views.items()
                        if roles[n] == "output"}
        if device == "cuda":
            torch.cuda.synchronize()
        self.ms = {("open" if self.on_gpu else "to_device"): (time.perf_counter() - started) * 1e3}

    def close(self):
        self.inputs = self.outputs = self.views = {}
        if self.device_views:
            self.device_views.close()
        if self.memory:
            self.memory.close()
            self.handle.close()


def release_cached_memory(torch):
    """The caching allocator's free blocks back to the driver: the runner's next job plans its memory
    against what cuMemGetInfo says is free, and a multi-gigabyte problem needs all of it."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def run_reference(torch, request):
    _, function = load_reference(request["source"], request.get("file"))
    device = request.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
    tensors = Tensors(torch, request, device)
    try:
        kwargs = call_arguments(function, tensors.inputs, tensors.outputs, request.get("scalars", {}))
        started = time.perf_counter()
        with torch.no_grad():
            result = function(**kwargs)
        if device == "cuda":
            torch.cuda.synchronize()
        called = time.perf_counter()
        produced = results_by_name(result, tensors.outputs, kwargs)
        for name in tensors.outputs:
            if name not in produced:
                raise ValueError("the reference gave no output %s (return it, or take %s and write it)" % (name, name))
            got = produced[name]
            if not torch.is_tensor(got):
                raise ValueError("output %s is a %s, not a tensor" % (name, type(got).__name__))
            view = tensors.views[name]
            if list(got.shape) != list(view.shape):
                raise ValueError("output %s has shape %s; the problem says %s"
                                 % (name, list(got.shape), list(view.shape)))
            # Into the runner's buffer on the GPU, else into the shared file; padding gaps keep their poison.
            view.copy_(got.detach().to(view.device, view.dtype))
        if tensors.memory:
            tensors.memory.flush()
        elif device == "cuda":
            torch.cuda.synchronize()
        ms = dict(tensors.ms)
        ms.update(call=(called - started) * 1e3, from_device=(time.perf_counter() - called) * 1e3)
        return {"ok": True, "ms": ms, "device": device, "on_gpu": tensors.on_gpu}
    finally:
        tensors.close()
        release_cached_memory(torch)


def summary(samples_us, stopped_by=""):
    ordered = sorted(samples_us)
    count = len(ordered)

    def quantile(q):
        return ordered[min(count - 1, int(q * (count - 1) + 0.5))]

    mean = sum(ordered) / count
    spread = (sum((s - mean) ** 2 for s in ordered) / count) ** 0.5
    result = {"median_us": quantile(0.5), "p20_us": quantile(0.2), "p80_us": quantile(0.8), "min_us": ordered[0],
              "mean_us": mean, "cv": spread / mean if mean else 0.0, "reps": count, "samples_us": ordered}
    if stopped_by:
        result["stopped_by"] = stopped_by
    return result


def median_interval(samples, confidence=0.95):
    """core/verify/median_interval.cpp's interval, the same arithmetic: (median, low, high) or None below
    the sample count that gives `confidence` (exact binomial tail over order statistics)."""
    n = len(samples)
    if n == 0:
        return None
    ordered = sorted(samples)
    median = ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] + ordered[n // 2])
    tail = (1.0 - confidence) / 2.0
    log_half = -n * math.log(2.0)
    cdf = 0.0
    rank = 0
    for k in range(1, n // 2 + 1):
        cdf += math.exp(math.lgamma(n + 1.0) - math.lgamma(k) - math.lgamma(n - k + 2.0) + log_half)
        if cdf > tail:
            break
        rank = k
    if rank < 1:
        return None
    return median, ordered[rank - 1], ordered[n - rank]


def should_stop(samples, elapsed_ms, rule):
    """core/verify's StopRule: "max-reps", "interval", "time-cap", or None to repeat more."""
    n = len(samples)
    if n >= max(int(rule["max_reps"]), 1):
        return "max-reps"
    if n >= max(int(rule["min_reps"]), 1):
        interval = median_interval(samples)
        if interval and interval[0] > 0 and (interval[2] - interval[1]) / 2.0 / interval[0] <= rule["half_width"]:
            return "interval"
    if n >= 1 and elapsed_ms >= rule["time_cap_ms"]:
        return "time-cap"
    return None


def adaptive_samples(run_batch, rule, clock=time.perf_counter):
    """As the runner's Timer: the minimum first, then a quarter more (at least 10) at a time until the
    rule stops it. run_batch(n) times n runs and returns their microseconds."""
    samples = []
    started = clock()
    wanted = min(max(int(rule["min_reps"]), 1), max(int(rule["max_reps"]), 1))
    while True:
        while len(samples) < wanted:
            samples.extend(run_batch(min(128, wanted - len(samples))))
        stop = should_stop(samples, (clock() - started) * 1e3, rule)
        if stop:
            return samples, stop
        wanted = min(int(rule["max_reps"]), wanted + max(10, wanted // 4))


def time_function(torch, function, kwargs, flush, warmup, reps, adaptive=None):
    """The runner's protocol: a cold L2 (the flush buffer written) before each run, CUDA events around the
    run alone, the median of the repetitions: `reps` of them (fixed), or as the runner's adaptive rule
    says (warm-up for warmup_ms, then until the median's interval is narrow enough)."""

    def batch(count):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        for index in range(count):
            flush.zero_()
            starts[index].record()
            function(**kwargs)
            ends[index].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]

    if adaptive is None:
        for _ in range(warmup):
            function(**kwargs)
        torch.cuda.synchronize()
        return summary(batch(reps))
    started = time.perf_counter()
    runs = 0
    while runs < 3 or (time.perf_counter() - started) * 1e3 < float(adaptive.get("warmup_ms", 0.0)):
        flush.zero_()
        function(**kwargs)
        runs += 1
        if runs % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    samples, stopped_by = adaptive_samples(batch, adaptive)
    return summary(samples, stopped_by)


def compiled_function(torch, key, function, kwargs):
    """torch.compile's version, compiled once per source and size in this worker; the milliseconds the
    compilation took when it happened now, else 0."""
    shapes = tuple((name, tuple(v.shape), tuple(v.stride()), str(v.dtype)) for name, v in sorted(kwargs.items())
                   if hasattr(v, "shape"))
    if key not in _compiled:
        _compiled[key] = torch.compile(function)
    if (key, shapes) in _warmed:
        return _compiled[key], 0.0
    started = time.perf_counter()
    _compiled[key](**kwargs)
    torch.cuda.synchronize()
    _warmed.add((key, shapes))
    return _compiled[key], (time.perf_counter() - started) * 1e3


def compile_error_text(error):
    return "%s: %s" % (type(error).__name__, str(error).splitlines()[0][:300] if str(error) else "")


def time_contenders(torch, request):
    if not torch.cuda.is_available():
        return {"ok": False, "category": "bad-request", "message": "timing needs a GPU; this worker has none"}
    key, function = load_reference(request["source"], request.get("file"))
    tensors = Tensors(torch, request, "cuda")
    try:
        kwargs = call_arguments(function, tensors.inputs, tensors.outputs, request.get("scalars", {}))
        flush = torch.empty(max(int(request.get("flush_bytes", 0)) // 4, 1 << 20), dtype=torch.int32, device="cuda")
        warmup, reps = int(request.get("warmup", 5)), int(request.get("reps", 50))
        adaptive = request.get("adaptive")
        reply = {"ok": True, "compiled": None, "compile_error": "", "on_gpu": tensors.on_gpu}
        ms = dict(tensors.ms)
        with torch.no_grad():
            started = time.perf_counter()
            reply["eager"] = time_function(torch, function, kwargs, flush, warmup, reps, adaptive)
            ms["eager"] = (time.perf_counter() - started) * 1e3
            if request.get("compile", True):
                try:
                    compiled, ms["compile"] = compiled_function(torch, key, function, kwargs)
                    started = time.perf_counter()
                    reply["compiled"] = time_function(torch, compiled, kwargs, flush, warmup, reps, adaptive)
                    ms["compiled"] = (time.perf_counter() - started) * 1e3
                except Exception as error:  # noqa: BLE001 - a contender that does not compile says why
                    reply["compile_error"] = compile_error_text(error)
        reply["ms"] = ms
        return reply
    finally:
        tensors.close()
        release_cached_memory(torch)


def own_inputs(torch, request):
    """Inputs of the worker's own with the request's shapes, dtypes and row strides (torch.compile guards on
    strides too), for compiling before the runner's buffers exist."""
    inputs = {}
    for t in request["tensors"]:
        if t["role"] != "input":
            continue
        shape = [int(d) for d in t["shape"]]
        dtype = torch_dtype(torch, t["dtype"])
        count = 1
        for d in shape[:-1]:
            count *= d
        count = count * int(t["row_stride"]) if shape else 1
        flat = torch.empty(max(count, 1), dtype=dtype, device="cuda")
        if dtype.is_floating_point:
            flat.normal_()
        else:
            flat.random_(0, 8)
        inputs[t["name"]] = flat.as_strided(shape, element_strides(shape, int(t["row_stride"]))) if shape \
            else flat[:1].view([])
    return inputs


def warm(torch, request):
    """torch.compile's compilation for this source and these shapes, outside any job's timing."""
    if not torch.cuda.is_available():
        return {"ok": False, "category": "bad-request", "message": "torch.compile's warm-up needs a GPU"}
    key, function = load_reference(request["source"], request.get("file"))
    try:
        inputs = own_inputs(torch, request)
        outputs = {t["name"]: torch.empty([int(d) for d in t["shape"]], dtype=torch_dtype(torch, t["dtype"]),
                                          device="cuda") for t in request["tensors"] if t["role"] == "output"}
        kwargs = call_arguments(function, inputs, outputs, request.get("scalars", {}))
        reply = {"ok": True, "compile_ms": 0.0, "compile_error": ""}
        with torch.no_grad():
            try:
                _, reply["compile_ms"] = compiled_function(torch, key, function, kwargs)
            except Exception as error:  # noqa: BLE001 - the timing job reports it again
                reply["compile_error"] = compile_error_text(error)
        return reply
    finally:
        release_cached_memory(torch)


def answer(torch, request):
    op = request.get("op")
    if op == "hello":
        return {"ok": True, "torch": torch.__version__, "python": sys.version.split()[0],
                "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}
    try:
        if op == "reference":
            return run_reference(torch, request)
        if op == "time":
            return time_contenders(torch, request)
        if op == "warm":
            return warm(torch, request)
    except IpcUnavailable as error:
        return {"ok": False, "category": "ipc-unavailable", "message": str(error)}
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
