"""kernelloop-cli model-check's helper: the patched model against the original.

On fresh inputs (get_inputs() under another seed; with "batch", every tensor input's first dimension made
that size by repeating rows, so the kernels' guards must fall back) the patched model's outputs must match
the original's within atol + rtol * |expected|. Then both are timed, and each patched operator's own time
inside the model, through the same wrappers: once running the original PyTorch code (its share of the
original forward), once its kernel (its speedup). Expected = 1 / (1 - sum(share) + sum(share / speedup))
(Amdahl), beside the measured ratio. Where this runs on the CPU every figure is CPU call time.
"""
import importlib.util
import statistics
import time

from model_load import LoadedModel, Refusal, flat_tensors


def _load_patch(path):
    spec = importlib.util.spec_from_file_location("kl_patch_under_check", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001
        raise Refusal("patch-failed", "importing the patch %s raised %s: %s" % (path, type(error).__name__, error))
    return module


def _rebatch(torch, inputs, batch):
    out = []
    for x in inputs:
        if torch.is_tensor(x) and x.dim() >= 1 and x.shape[0] > 0:
            x = x[torch.arange(batch) % x.shape[0]].clone()
        out.append(x)
    return out


def _clone(torch, inputs):
    return [x.clone() if torch.is_tensor(x) else x for x in inputs]


def _compare(torch, want, got, atol, rtol):
    """(max |difference|, where it failed or "")."""
    tw, sw = flat_tensors(torch, want)
    tg, sg = flat_tensors(torch, got)
    if sw != sg or len(tw) != len(tg):
        return float("inf"), "the patched model returns another structure of outputs"
    worst = 0.0
    for index, (w, g) in enumerate(zip(tw, tg)):
        if w.shape != g.shape or w.dtype != g.dtype:
            return float("inf"), "output %d is %s %s, the original's %s %s" % (index, list(g.shape), g.dtype,
                                                                               list(w.shape), w.dtype)
        if not w.numel():
            continue
        wd, gd = w.double(), g.double()
        diff = (wd - gd).abs()
        both_nan = wd.isnan() & gd.isnan()
        diff = torch.where(both_nan, torch.zeros_like(diff), diff)
        worst = max(worst, float(diff.max()))
        bad = diff > atol + rtol * wd.abs()
        if bool(bad.any()):
            return worst, "output %d: %d of %d elements outside atol %g + rtol %g" % (index, int(bad.sum()),
                                                                                     w.numel(), atol, rtol)
    return worst, ""


def _time(loaded, model, inputs, repeats):
    times = []
    for _ in range(repeats + 1):
        given = _clone(loaded.torch, inputs)
        start = time.perf_counter()
        loaded.forward(model, given)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])  # the first call warms up


def _time_counted(loaded, patch, model, inputs, repeats):
    """Mean seconds of a forward after one warm-up, the patch's per-operator clocks reset after it."""
    loaded.forward(model, _clone(loaded.torch, inputs))
    patch.reset_counts()
    total = 0.0
    for _ in range(repeats):
        given = _clone(loaded.torch, inputs)
        start = time.perf_counter()
        loaded.forward(model, given)
        total += time.perf_counter() - start
    return total / repeats


def action_check(torch, request):
    loaded = LoadedModel(torch, request["file"], int(request.get("seed", 0)), request.get("eval"))
    patch = _load_patch(request["patch"])
    try:
        patched = patch.apply(loaded.model)
    except BaseException as error:  # noqa: BLE001
        raise Refusal("patch-failed", "patch.apply(model) raised %s: %s" % (type(error).__name__, error))
    atol, rtol = float(request.get("atol", 1e-4)), float(request.get("rtol", 1e-4))
    repeats = max(1, int(request.get("repeats", 5)))
    seed = int(request.get("input_seed", 1000))
    batch = request.get("batch")
    patch.reset_counts()
    worst, mismatch, trials = 0.0, "", 2
    sets = []
    for trial in range(trials):
        inputs = loaded.example_inputs(seed=seed + trial)
        if batch:
            inputs = _rebatch(torch, inputs, int(batch))
        sets.append(inputs)
        want = loaded.forward(loaded.model, _clone(torch, inputs), seed=seed + 100 + trial)
        try:
            got = loaded.forward(patched, _clone(torch, inputs), seed=seed + 100 + trial)
        except Refusal as refusal:
            raise Refusal("patched-forward-failed", "the patched model: " + refusal.message)
        diff, where = _compare(torch, want, got, atol, rtol)
        worst = max(worst, diff)
        mismatch = mismatch or where
    counts = {r["name"]: r for r in patch.report()}

    inputs = sets[0]
    original_s = _time(loaded, loaded.model, inputs, repeats)
    patched_s = _time(loaded, patched, inputs, repeats)
    # Each operator's own time in the forward, through the same wrappers: the original code (forced), then
    # its kernel; the share is over the forced run's own total, so both sides come from one clock.
    patch._kl_force_fallback[0] = True
    forced_s = _time_counted(loaded, patch, patched, inputs, repeats)
    originals = {r["name"]: r["fallback_seconds"] / repeats for r in patch.report()}
    patch._kl_force_fallback[0] = False
    _time_counted(loaded, patch, patched, inputs, repeats)
    ops, kept, saved = [], 0.0, 0.0
    for r in patch.report():
        entry = dict(counts[r["name"]])
        own = originals.get(r["name"], 0.0)
        entry["share"] = own / forced_s if forced_s > 0 else 0.0
        if r["calls"] and not r["fallbacks"] and r["kernel_seconds"] > 0 and own > 0:
            entry["speedup"] = own / (r["kernel_seconds"] / repeats)
            kept += entry["share"]
            saved += entry["share"] / entry["speedup"]
        else:
            entry["speedup"] = None
        for key in ("kernel_seconds", "fallback_seconds"):
            entry.pop(key, None)
        ops.append(entry)
    expected = 1.0 / (1.0 - kept + saved) if kept > 0 and (1.0 - kept + saved) > 0 else None
    on_gpu = any(torch.is_tensor(x) and x.is_cuda for x in inputs)
    timing = ("GPU call time (wall clock around each forward, synchronised), median of %d" % repeats if on_gpu else
              "CPU call time (wall clock around each forward in Python, median of %d, %d torch threads): not a "
              "GPU figure" % (repeats, torch.get_num_threads()))
    return {"ok": True, "timing": timing, "registration": patch.registration(), "matches": not mismatch,
            "max_abs_diff": worst if worst != float("inf") else -1.0, "mismatch": mismatch, "trials": trials,
            "original_ms": original_s * 1000.0, "patched_ms": patched_s * 1000.0,
            "measured_speedup": original_s / patched_s if patched_s > 0 else 0.0, "expected_speedup": expected,
            "ops": ops,
            "inputs": "get_inputs() under seeds %d and %d (not the captured ones)%s" % (
                seed, seed + 1, ", every tensor's first dimension made %d" % int(batch) if batch else "")}
