#!/usr/bin/env python3
"""PyTorch eager vs the naive baseline vs the tuner's best for LayerNorm+GELU, side by side.

One process, the same fp16 tensors for all three, each timed the same way: L2 flushed (256 MiB
zeroed) before every run, CUDA events around the call only, 200 runs, median. The baseline and the
best are compiled from their .cu files with the tunables the session chose (cupy.RawModule, NVRTC),
checked against a float64 reference first, and launched with the grid/block the @kl lines give.
Also a same-size device copy, the bandwidth ceiling. Prints a table; reads the session's JSON lines
for iterations and wall time.
"""
import argparse, json, math, re, statistics, sys

import cupy as cp
import torch
import torch.nn.functional as F

M, N, EPS = 8192, 4096, 1e-5


def tunables_of(source):
    defaults = {m.group(1): int(m.group(2)) for m in re.finditer(r"//\s*@kl tunable (\w+)\s*=\s*(-?\d+)", source)}
    fixed = {}
    for m in re.finditer(r"#define (\w+) (-?\d+)\n#endif", source):  # export-kernel's come first
        fixed.setdefault(m.group(1), int(m.group(2)))
    defaults.update(fixed)
    return defaults


def kernel_from(path, tunables_override=None):
    source = open(path).read()
    t = tunables_of(source)
    if tunables_override:
        t.update(tunables_override)
    options = ("-std=c++17", "--gpu-architecture=sm_90") + tuple(f"-D{k}={v}" for k, v in t.items())
    module = cp.RawModule(code=source, options=options, name_expressions=None)
    return module.get_function("layernorm_gelu"), t


def launch(fn, t, x, g, b, y):
    fn((M,), (t["THREADS"],), (x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(),
                                cp.int32(M), cp.int32(N), cp.int32(N), cp.int32(N), cp.float32(EPS)),
       stream=cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream))


def timed(call, flush, reps=200):
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); call(); e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1000.0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem-dir", required=True)
    ap.add_argument("--best", required=True)
    ap.add_argument("--tune", required=True)
    ap.add_argument("--wall", type=float, default=0.0)
    a = ap.parse_args()

    torch.manual_seed(0)
    x = (torch.randn(M, N, device="cuda") * 2 + 0.5).half()
    g = (torch.rand(N, device="cuda") + 0.5).half()
    b = (torch.rand(N, device="cuda") - 0.5).half()
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    ref = F.gelu(F.layer_norm(x.double(), (N,), g.double(), b.double(), EPS), approximate="tanh")

    rows = []
    eager = lambda: F.gelu(F.layer_norm(x, (N,), g, b, EPS), approximate="tanh")
    err = (eager().double() - ref).abs().max().item()
    rows.append(("pytorch eager", timed(eager, flush), err, ""))
    for label, path in (("naive baseline", f"{a.problem_dir}/baseline.cu"), ("tuner best", a.best)):
        fn, t = kernel_from(path)
        y = torch.empty_like(x)
        launch(fn, t, x, g, b, y)
        torch.cuda.synchronize()
        err = (y.double() - ref).abs().max().item()
        rows.append((label, timed(lambda: launch(fn, t, x, g, b, y), flush), err,
                     " ".join(f"{k}={v}" for k, v in sorted(t.items()))))
    src = torch.empty(M * N + N, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(src)
    copy_us = timed(lambda: dst.copy_(src), flush)
    nbytes = 2 * M * N * 2 + 2 * N * 2

    iterations, best_line, summary = 0, None, None
    for line in open(a.tune):
        j = json.loads(line)
        if j.get("summary"):
            summary = j
        else:
            iterations += 1
    by = {r[0]: r for r in rows}
    print(f"\nLayerNorm+GELU fp16 {M}x{N}, {nbytes/1e6:.1f} MB, same tensors, cold L2, median of 200 (us)")
    print(f"{'kernel':16} {'median us':>10} {'GB/s':>7} {'%copy':>6} {'vs naive':>9} {'vs eager':>9} {'max err':>9}  tunables")
    for name, us, e, tun in rows + [("same-size copy", copy_us, 0.0, "")]:
        gbps = nbytes / us / 1e3
        print(f"{name:16} {us:10.2f} {gbps:7.0f} {100*copy_us/us:6.1f} {by['naive baseline'][1]/us:8.2f}x "
              f"{by['pytorch eager'][1]/us:8.2f}x {e:9.2e}  {tun}")
    if summary:
        best = summary.get("best") or {}
        base = summary.get("baseline") or {}
        print(f"\nrunner (same job, cold L2): baseline {base.get('median_us', float('nan')):.2f} us, best "
              f"{best.get('median_us', float('nan')):.2f} us at iteration {best.get('iteration')}, "
              f"{best.get('speedup', float('nan')):.2f}x, {best.get('pct_of_copy', float('nan')):.1f}% of copy; "
              f"{summary.get('evaluated')} candidates ({summary.get('passed')} passed) in {summary.get('wall_seconds', 0):.0f} s "
              f"= {summary.get('candidates_per_minute', 0):.1f}/min; stop: {summary.get('stop_reason')}")


if __name__ == "__main__":
    main()
