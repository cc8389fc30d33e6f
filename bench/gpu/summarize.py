#!/usr/bin/env python3
"""The table scripts/gpu-check.sh prints last, from the files it left in its work folder."""
import csv
import io
import json
import os
import re
import sqlite3
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


def mean(values):
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def ms(value, width=9):
    return f"{value:{width}.1f}" if value is not None else f"{'-':>{width}s}"


def lines_evaluate_rows():
    """The gpu-check's `evaluate --metrics lines` step: the loop's phases per candidate (its --json
    lines) and the stored PC samples (the store's pc_sampling_json: the runner's phase time, CUPTI's counts)."""
    outcomes = []
    try:
        for line in open(os.path.join(work, "multisize", "lines-evaluate.jsonl")):
            try:
                outcome = json.loads(line)
            except ValueError:
                continue
            if isinstance(outcome, dict) and isinstance(outcome.get("phases_ms"), dict):
                outcomes.append(outcome["phases_ms"])
    except OSError:
        pass
    stored = []
    db = os.path.join(work, "multisize", "lines.db")
    if os.path.exists(db):
        try:
            for (text,) in sqlite3.connect(db).execute(
                    "SELECT pc_sampling_json FROM results WHERE pc_sampling_json IS NOT NULL"):
                value = json.loads(text)
                if isinstance(value, dict):
                    stored.append(value)
        except (sqlite3.Error, ValueError):
            pass
    if not outcomes and not stored:
        return []
    sampled = [v for v in stored if v.get("status") == "ok"]
    note = f"{len(sampled)}/{len(stored)} sampled"
    if sampled:
        note += (f", {mean([v.get('total_samples') for v in sampled]):.0f} samples, "
                 f"{mean([v.get('runs') for v in sampled]):.0f} runs, runner {mean([v.get('ms') for v in sampled]):.1f} ms")
    elif stored:
        note += f" ({stored[0].get('status')} {stored[0].get('reason', '')})"
    label = f"evaluate --metrics lines ({max(len(outcomes), len(stored))} cand.)"
    # The loop's phase (request to reply) where the runner reported it, else the runner's own wall time.
    sampling = mean([o.get("pc_sampling") for o in outcomes])
    if sampling is None:
        sampling = mean([v.get("ms") for v in sampled])
    return [(label, sampling, mean([o.get("profile") for o in outcomes]),
             mean([o.get("time") for o in outcomes]), mean([o.get("total") for o in outcomes]), note)]


def test_gpu_lines_rows():
    """test_gpu_lines' own lines: each planted kernel's phase, and the bundled example under `deep`
    (sampling beside the range profile of the same candidate)."""
    try:
        log = open(os.path.join(work, "test_gpu_lines.log")).read()
    except OSError:
        return []
    rows = []
    for m in re.finditer(r"QINFO\s*:\s*\S+\s+(\w+): (\d+) runs, (\d+) samples \((\d+) dropped, (\d+) elsewhere\), "
                         r"phase ([\d.]+) ms \(runner ([\d.]+) ms\)", log):
        rows.append((f"test_gpu_lines {m.group(1)}", float(m.group(6)), None, None, None,
                     f"{m.group(3)} samples, {m.group(2)} runs, {m.group(4)} dropped, runner {m.group(7)} ms"))
    for m in re.finditer(r"QINFO\s*:\s*\S+\s+(\w+) deep: phases_ms(.*)", log):
        phases = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(2))}
        rows.append((f"test_gpu_lines {m.group(1)} deep", phases.get("pc_sampling"), phases.get("profile"),
                     phases.get("time"), None, "stall counters, then sampling, one runner job"))
    return rows


print("\nPC-sampling phase (ms per candidate; the range profile and timing beside it for scale)")
rows = lines_evaluate_rows() + test_gpu_lines_rows()
if not rows:
    print("  (no evaluate --metrics lines output and no test_gpu_lines log)")
else:
    print(f"  {'':36s} {'sampling':>9s} {'profile':>9s} {'time':>9s} {'total':>9s}")
    for label, sampling, profile, timed, total, note in rows:
        print(f"  {label:36s} {ms(sampling)} {ms(profile)} {ms(timed)} {ms(total)}  {note}")
