#!/usr/bin/env python3
"""The tables of scripts/gpu-throughput.sh from its work folder: runner_bench reports (bench-NAME.json),
tuner runs (tune-NAME.jsonl, .stderr with KL_LOOP_TRACE lines, .wall) and pool runs (pool-N.*).
Usage: throughput_summary.py WORK_DIR"""
import json
import os
import re
import sys

W = sys.argv[1]
# The tuner run recorded in docs/measurements.md (2026-12-02 00:56Z): keeps and best.
RECORDED_KEEPS = [1, 4, 6]
RECORDED_BEST = "CACHE=2 TANH=1 THREADS=256 VEC=8"


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        return None


def names(prefix, suffix):
    out = []
    for f in sorted(os.listdir(W)):
        if f.startswith(prefix) and f.endswith(suffix):
            out.append(f[len(prefix):-len(suffix)])
    order = {"before": 0, "fixed": 1, "adaptive": 2, "after": 3, "after-warm": 4, "after-user-replay": 5, "after-pageable": 6,
             "promising": 7, "promising-warm": 8}
    return sorted(out, key=lambda n: (order.get(n, 9), n))


def tunables(j):
    t = j.get("tunables") or {}
    return " ".join(f"{k}={v}" for k, v in sorted(t.items())) if isinstance(t, dict) else str(t)


print("== summary")
SPLITS = ["parse", "load", "verify", "verify_prepare", "verify_reference", "verify_reference_restore",
          "verify_reference_store", "verify_candidate", "verify_checks", "time", "profile", "profile_setup",
          "profile_init", "profile_enable", "profile_config", "profile_replay", "profile_decode", "profile_disable"]
benches = names("bench-", ".json")
if benches:
    print("\nrunner_bench (layernorm_gelu 8192x4096, sweep of 12 tunables, adaptive unless named fixed), per candidate ms (mean)")
    rows = {}
    for name in benches:
        b = load(f"{W}/bench-{name}.json")
        if not b:
            print(f"  {name}: no report")
            continue
        for prof, s in b.get("throughput", {}).items():
            rows[(name, prof)] = s
        for cname, c in b.get("configs", {}).items():
            runs = c.get("runs", [])
            print(f"  {name:10s} {cname:8s} median of {len(runs)} jobs {c.get('median_of_medians_us', 0):7.2f} us  "
                  f"spread {c.get('spread_pct', 0):5.2f}%  reps {[r.get('reps') for r in runs]}  "
                  f"profile {c.get('profile_status', '?')} ({c.get('profile_passes', 0)} passes)")
    for prof in ("none", "default"):
        present = [n for n in benches if (n, prof) in rows]
        if not present:
            continue
        print(f"\n  profile {prof}:" + " " * 20 + "".join(f"{n:>18s}" for n in present))
        for key in ["total", "compile", "request", "evaluate_wall"] + SPLITS:
            cells = [rows[(n, prof)]["per_candidate_ms"].get(key) for n in present]
            if all(c is None for c in cells):
                continue
            print(f"    {key:26s}" + "".join(f"{c:18.1f}" if c is not None else f"{'-':>18s}" for c in cells))
        for name in benches:
            s = rows.get((name, prof))
            if not s:
                continue
            p = s["per_candidate_ms"]
            bound = p["total"] - p.get("compile", 0) - p.get("request", 0)
            print(f"  {name:10s} {prof:7s}: {s['per_minute']:6.1f}/min sequential ({s['passed']}/{s['candidates']} passed); "
                  f"runner-bound (total - compile - request = {bound:.1f} ms) {60000 / bound if bound > 0 else 0:6.1f}/min")
    # The counters each way of replaying gives for the same kernels (the bench's profiled job per config).
    reports = {n: load(f"{W}/bench-{n}.json") or {} for n in benches}
    base = reports.get("after") or reports.get("before") or {}
    for other in [n for n in benches if n not in ("after", "before")] + (["before"] if "after" in reports else []):
        for cname, c in base.get("configs", {}).items():
            a, b = c.get("cupti") or {}, ((reports[other].get("configs") or {}).get(cname) or {}).get("cupti") or {}
            if not a or not b:
                continue
            ratios = [f"{k.split('.')[0].split('__')[-1]} {100 * (b[k] / a[k] - 1):+.1f}%" for k in sorted(a)
                      if k in b and a[k]]
            print(f"  counters {other} vs {'after' if 'after' in reports else 'before'}, {cname}: " + ", ".join(ratios))
    for prof in ("none", "default"):
        sweeps = {n: [(c["tunables"], c["median_us"]) for c in rows[(n, prof)].get("sweep", [])]
                  for n in benches if (n, prof) in rows}
        if "before" in sweeps and "after" in sweeps and len(sweeps["before"]) == len(sweeps["after"]):
            f, a = sweeps["before"], sweeps["after"]
            diffs = [100 * (am / fm - 1) for (_, fm), (_, am) in zip(f, a) if fm > 0]
            same = [t for t, _ in sorted(f, key=lambda x: x[1])][0] == [t for t, _ in sorted(a, key=lambda x: x[1])][0]
            print(f"  sweep {prof}: after vs before median per tunable {min(diffs):+.2f}%..{max(diffs):+.2f}%; "
                  f"same fastest: {'yes' if same else 'no'}")


def tune_run(prefix, name):
    its, summary = [], None
    try:
        for line in open(f"{W}/{prefix}-{name}.jsonl"):
            try:
                j = json.loads(line)
            except Exception:
                continue
            if j.get("summary"):
                summary = j
            elif "iteration" in j:
                its.append(j)
    except FileNotFoundError:
        pass
    try:
        wall = int(open(f"{W}/{prefix}-{name}.wall").read()) / 1000.0
    except Exception:
        wall = 0.0
    trace = []
    try:
        for line in open(f"{W}/{prefix}-{name}.stderr"):
            m = re.match(r"\[trace\]\s+([\d.]+) ms (.*)", line)
            if m:
                trace.append((float(m.group(1)), m.group(2).strip()))
    except FileNotFoundError:
        pass
    return its, summary, wall, trace


def trace_report(trace):
    """Where the wall time went: start-up, the runner's busy and idle time between jobs."""
    if not trace:
        return "no trace"
    t = dict()
    for ms, what in trace:
        t.setdefault(what, ms)
    starts = [(ms, w) for ms, w in trace if w.startswith("job ") and " starts on " in w]
    ends = [(ms, w) for ms, w in trace if w.startswith("job ") and " ends on " in w]
    busy = sum(e - s for (s, _), (e, _) in zip(starts, ends))
    idle = sum(starts[i + 1][0] - ends[i][0] for i in range(min(len(starts) - 1, len(ends))))
    last = trace[-1][0]
    first_job = starts[0][0] if starts else 0
    described = next((ms for ms, w in trace if w.startswith("described ")), 0)
    hello = next((ms for ms, w in trace if w.startswith("hello from ")), 0)
    base_end = ends[0][0] if ends else 0
    return (f"hello {hello:.0f} ms, described {described:.0f} ms, first job starts {first_job:.0f} ms, baseline job "
            f"{base_end - first_job:.0f} ms; {len(starts)} jobs busy {busy / 1000:.2f} s, runner idle between jobs "
            f"{idle / 1000:.2f} s; last step {last / 1000:.2f} s")


tunes = names("tune-", ".jsonl")
lists = {}
if tunes:
    print(f"\ntuning loop (kernelloop-cli tune layernorm_gelu, k 4, --metrics default): every keep/revert decision")
    for name in tunes:
        its, s, wall, trace = tune_run("tune", name)
        lists[name] = ([(tunables(j), j.get("category"), bool(j.get("kept"))) for j in its],
                       tunables(s["best"]) if s and s.get("best") else None)
        rate = 60.0 * len(its) / wall if wall else 0
        print(f"  {name}: {len(its)} iterations in {wall:.1f} s wall (process start included) = {rate:.1f}/min")
        print(f"    {trace_report(trace)}")
        keys = ["compile", "request", "listings", "job_queued", "job_wall", "parse", "load", "verify",
                "verify_reference", "verify_reference_restore", "time", "profile", "profile_init", "profile_enable",
                "profile_config", "profile_replay", "profile_decode", "profile_disable", "record", "total"]
        later = [j.get("phases_ms", {}) for j in its[1:]]
        if later:
            means = {k: sum(p.get(k, 0) for p in later) / len(later) for k in keys}
            print("    mean per candidate after the baseline (ms): "
                  + ", ".join(f"{k} {v:.1f}" for k, v in means.items() if v))
        if its:
            print("    baseline job (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in its[0].get("phases_ms", {}).items()
                                                      if k in keys and v))
        for j in its:
            med = j.get("median_us")
            print(f"    {j['iteration']:3d} {j.get('proposer', ''):8s} {j.get('category', ''):14s} "
                  f"{'kept ' if j.get('kept') else 'revert'} {(f'{med:8.2f} us' if med else '       -   ')}  {tunables(j)}")
        if s and s.get("best"):
            b = s["best"]
            print(f"    best: iteration {b.get('iteration')} {tunables(b)} {b.get('median_us') or 0:.2f} us, "
                  f"{b.get('speedup') or 0:.2f}x; {s.get('stop_reason', '')}")
        first_round = next((ms for ms, w in trace if w == "round 1 proposing"), None)
        if first_round is not None and trace and len(its) > 1:
            span = (trace[-1][0] - first_round) / 1000.0
            print(f"    past start-up (round 1 proposing to the end): {len(its) - 1} candidates in {span:.2f} s = "
                  f"{60.0 * (len(its) - 1) / span:.1f}/min")
        if s and s.get("compile_ahead"):
            ahead = s["compile_ahead"]
            print(f"    compiled ahead: {ahead.get('compiled', 0)} guesses, {ahead.get('used', 0)} of "
                  f"{len(its) - 1} proposals taken from them")
        profiled = sum(1 for j in its if (j.get("phases_ms") or {}).get("profile", 0) > 0)
        print(f"    profiled {profiled} of {len(its)} iterations")
        keeps = [j["iteration"] for j in its if j.get("kept")]
        if len(its) == 25:  # the recorded session's length: 6 rounds of 4 after the baseline
            ok = keeps == RECORDED_KEEPS and lists[name][1] == RECORDED_BEST
            print(f"    keeps {keeps}; as recorded (keeps {RECORDED_KEEPS}, best {RECORDED_BEST}): "
                  f"{'yes' if ok else 'no'}")
        else:
            print(f"    keeps {keeps}")
    # Compiling ahead must change nothing: each X-ahead against its X-noahead, tunable by tunable.
    for name, value in lists.items():
        if name.endswith("-ahead") and name[:-len("-ahead")] + "-noahead" in lists:
            twin = name[:-len("-ahead")] + "-noahead"
            print(f"  decisions of {name} equal to {twin}'s (every tunable, verdict, keep; best): "
                  f"{'yes' if value == lists[twin] else 'no'}")
    ref = lists.get("before")
    for name, value in lists.items():
        if ref and value is not ref and len(value[0]) == len(ref[0]):
            print(f"  decisions of {name} equal to before's (every tunable, verdict, keep; best): "
                  f"{'yes' if value == ref else 'no'}")

pools = names("pool-", ".jsonl")
if pools:
    print("\npool on GPU 0 (adaptive, budget 6, k 4)")
    for n in pools:
        its, s, wall, _ = tune_run("pool", n)
        rate = 60.0 * len(its) / wall if wall > 0 else 0
        print(f"  {n} runner(s): {len(its)} candidates in {wall:.1f} s wall (process start included) = {rate:.1f}/min")
