#!/usr/bin/env python3
"""The table scripts/gpu-check.sh prints last, from the files it left in its work folder."""
import csv
import io
import json
import os
import re
import statistics
import sys

work, date, commit = sys.argv[1], sys.argv[2], sys.argv[3]


def load_json(name):
    try:
        return json.load(open(os.path.join(work, name)))
    except (OSError, ValueError):
        return None


def ncu_rows(name):
    """Rows of an ncu --csv file (ncu prints its own ==PROF== lines before the CSV)."""
    try:
        text = open(os.path.join(work, name)).read()
    except OSError:
        return []
    start = text.find('"ID"')
    if start < 0:
        return []
    return list(csv.DictReader(io.StringIO(text[start:])))


def number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def pct(a, b):
    return f"{100.0 * (a - b) / b:+.1f}%" if a and b else "n/a"


bench = load_json("bench/runner_bench.json") or load_json("runner_bench.json") or {}
device = bench.get("device", {})
print()
print(f"KernelLoop GPU check  {date}  commit {commit}")
print(f"device {device.get('name', '?')}  driver {device.get('driver_version', '?')}  "
      f"{device.get('sm_count', '?')} SMs  copy {device.get('copy_bandwidth_gbps', 0):.0f} GB/s (2 GiB)")

print("\nsuites")
try:
    for line in open(os.path.join(work, "suites.txt")):
        print("  " + line.rstrip())
except OSError:
    print("  (none ran)")

print("\nhostile candidates (layernorm_gelu)")
try:
    log = open(os.path.join(work, "test_gpu_hostile.log")).read()
    for m in re.finditer(r"QINFO\s*:\s*\S+\((\S+)\)\s+(\S+) -> (\w+) / ([\w-]+)", log):
        print(f"  {m.group(2):30s} {m.group(4):22s} ({m.group(3)})")
    fails = re.findall(r"FAIL!\s*:\s*(.*)", log)
    for f in fails:
        print("  FAIL " + f[:150])
except OSError:
    print("  (no log)")

print("\ntiming, layernorm_gelu 8192x4096 (us)")
print(f"  {'config':9s} {'runner':>8s} {'spread':>7s} {'ncu':>8s} {'vs ncu':>7s} {'do_bench':>9s} {'vs dob':>7s} "
      f"{'copy':>7s} {'%copy':>6s} {'clock':>6s}")
for name in ("baseline", "best"):
    c = bench.get("configs", {}).get(name)
    if not c:
        continue
    runner = c.get("median_of_medians_us")
    durations = [number(r.get("Metric Value")) for r in ncu_rows(f"{name}.ncu_time.csv")
                 if r.get("Metric Name") == "gpu__time_duration.sum"]
    durations = [d for d in durations if d]
    ncu_us = statistics.median(durations) / 1000.0 if durations else None
    dob = load_json(f"{name}.dobench.json") or {}
    dob_us = dob.get("median_us")
    run0 = (c.get("runs") or [{}])[0]
    print(f"  {name:9s} {runner:8.2f} {c.get('spread_pct', 0):6.2f}% "
          f"{(f'{ncu_us:8.2f}' if ncu_us else '     n/a')} {pct(runner, ncu_us):>7s} "
          f"{(f'{dob_us:9.2f}' if dob_us else '      n/a')} {pct(runner, dob_us):>7s} "
          f"{run0.get('copy_us', 0):7.2f} {run0.get('pct_of_copy', 0):5.1f}% {run0.get('sm_clock_mhz', 0):6.0f}")
    print(f"  {'':9s} tunables {c.get('tunables')}; 5 job medians " +
          " ".join(f"{r['median_us']:.2f}" for r in c.get("runs", [])))

print("\nper candidate (ms, mean over the sweep) and throughput")
for mode, t in (bench.get("throughput") or {}).items():
    p = t.get("per_candidate_ms", {})
    print(f"  profile {mode:8s} total {p.get('total', 0):7.1f}  compile {p.get('compile', 0):6.1f}  "
          f"load {p.get('load', 0):5.1f}  verify {p.get('verify', 0):6.1f} (ref {p.get('verify_reference', 0):.0f}, "
          f"cand {p.get('verify_candidate', 0):.0f}, checks {p.get('verify_checks', 0):.0f})  time {p.get('time', 0):6.1f}  "
          f"profile {p.get('profile', 0):6.1f}  -> {t.get('per_minute', 0):5.1f}/min ({t.get('passed')}/{t.get('candidates')} passed)")

sweep = (bench.get("throughput") or {}).get("none", {}).get("sweep", [])
timed = [c for c in sweep if c.get("median_us")]
if timed:
    fastest = min(timed, key=lambda c: c["median_us"])
    print(f"  fastest in the sweep: {fastest['tunables']} at {fastest['median_us']:.2f} us")

print("\nCUPTI (runner) vs ncu, baseline")
c = bench.get("configs", {}).get("baseline", {})
cupti = c.get("cupti", {})
if not cupti:
    print(f"  CUPTI: {c.get('profile_status', '?')} {c.get('profile_reason', '')} {c.get('profile_detail', '')}")
ncu = {r.get("Metric Name"): number(r.get("Metric Value")) for r in ncu_rows("baseline.ncu_metrics.csv")}
for metric in sorted(cupti):
    ours, theirs = cupti[metric], ncu.get(metric)
    print(f"  {metric:58s} {ours:14.4g} {(f'{theirs:14.4g}' if theirs is not None else '           n/a')} "
          f"{pct(ours, theirs) if theirs else '':>8s}")
print(f"  passes: {c.get('profile_passes')}, profiled job wall {c.get('profiled_wall_ms', 0):.0f} ms")
