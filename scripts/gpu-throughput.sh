#!/usr/bin/env bash
# Runner throughput on a GPU machine (issue 14), the old timing protocol against the new in one run:
#   1. kl_runner_bench with KERNELLOOP_TIMING=fixed (the budget-filling protocol) and =adaptive
#      (stop on the median's interval, the copy ceiling reused per size), profiled and unprofiled;
#   2. kernelloop-cli tune (the built-in tuner, layernorm_gelu) once per protocol: both keep/revert
#      lists, the kept best, and "decisions unchanged: yes/no";
#   3. a pool of two local runners on GPU 0 (KL_POOL_SHARE_GPUS=1) against one runner, candidates/min.
# Uses the bundle of scripts/gpu-check.sh --bundle (.gpu/, or the pack in $KL_PACK, default
# .gpu-pack/gpu.tar.xz). Writes $OUT/throughput.txt (the table) and $OUT/throughput-details.tgz.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-throughput-out}
mkdir -p "$OUT"
WORK=$(mktemp -d)
PACK=${KL_PACK:-.gpu-pack/gpu.tar.xz}
CUDA_LIBS=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
if [[ ! -x .gpu/bin/kernelloop-runner && -f "$PACK" ]]; then
    xz -dc "$PACK" | tar -xf - || exit 1
fi
[[ -x .gpu/bin/kernelloop-runner ]] || { echo "no bundle (.gpu/ or $PACK)" >&2; exit 2; }
BIN=$ROOT/.gpu/bin
export LD_LIBRARY_PATH=$ROOT/.gpu/lib:$CUDA_LIBS:${LD_LIBRARY_PATH:-}
COMMIT=$(cat .gpu/COMMIT)
TXT=$OUT/throughput.txt
: >"$TXT"
say() { echo "$*" | tee -a "$TXT"; }
say "KernelLoop runner throughput  $(date -u +%Y-%m-%dT%H:%MZ)  commit $COMMIT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>/dev/null \
    | sed 's/^/device /' | tee -a "$TXT" || true
problem=resources/examples/layernorm_gelu/problem.json

# 1. runner_bench under each protocol; each with its own empty compile cache, so that compile
# figures are NVRTC's (the bench's second sweep recompiles the first's tunables: those are hits).
for mode in fixed adaptive; do
    KERNELLOOP_COMPILE_CACHE=$(mktemp -d) KERNELLOOP_TIMING=$mode timeout 200 "$BIN/kl_runner_bench" \
        --runner "$BIN/kernelloop-runner" --source . --out "$WORK/bench-$mode" --repeats 5 --sweep 12 \
        >"$WORK/bench-$mode.json" 2>"$WORK/bench-$mode.log"
    say "runner_bench $mode rc=$?"
done

# 2. The tuning loop once per protocol: the same problem, budget and seed.
CACHE=$(mktemp -d)
for mode in fixed adaptive; do
    db=$WORK/tune-$mode.db
    start=$(date +%s%N)
    KERNELLOOP_COMPILE_CACHE=$CACHE KERNELLOOP_TIMING=$mode timeout 150 "$BIN/kernelloop-cli" tune "$problem" --db "$db" \
        --runner "$BIN/kernelloop-runner" --budget "${KL_TUNE_ROUNDS:-8}" -k 4 --patience 0 --metrics default --json \
        >"$WORK/tune-$mode.jsonl" 2>"$WORK/tune-$mode.stderr"
    rc=$?
    echo $(( ($(date +%s%N) - start) / 1000000 )) >"$WORK/tune-$mode.wall"
    say "tune $mode rc=$rc in $(cat "$WORK/tune-$mode.wall") ms"
done

# 3. Two local runners on GPU 0 against one (adaptive protocol, the same budget).
for runners in 1 2; do
    args=(--runner local:0)
    [[ $runners == 2 ]] && args+=(--runner local:0)
    start=$(date +%s%N)
    KL_POOL_SHARE_GPUS=1 KERNELLOOP_COMPILE_CACHE=$(mktemp -d) timeout 120 "$BIN/kernelloop-cli" tune "$problem" \
        --db "$WORK/pool-$runners.db" "${args[@]}" --budget 6 -k 4 --patience 0 --metrics default --json \
        >"$WORK/pool-$runners.jsonl" 2>"$WORK/pool-$runners.stderr"
    rc=$?
    echo $(( ($(date +%s%N) - start) / 1000000 )) >"$WORK/pool-$runners.wall"
    say "pool of $runners runner(s) on GPU 0 rc=$rc in $(cat "$WORK/pool-$runners.wall") ms"
done

python3 - "$WORK" >>"$TXT" 2>&1 <<'EOF'
import json, sys, os
w = sys.argv[1]
def load(p):
    try:
        return json.load(open(p))
    except Exception as e:
        return None
print("\nrunner_bench (layernorm_gelu 8192x4096; sweep of 12 tunables; per candidate ms, mean)")
for mode in ("fixed", "adaptive"):
    b = load(f"{w}/bench-{mode}.json")
    if not b:
        print(f"  {mode}: no report"); continue
    for name, c in b.get("configs", {}).items():
        runs = c.get("runs", [])
        reps = [r.get("reps") for r in runs]
        print(f"  {mode:8s} {name:8s} median of 5 jobs {c.get('median_of_medians_us', 0):7.2f} us  spread {c.get('spread_pct', 0):5.2f}%  "
              f"reps {reps}  copy {[round(r.get('copy_us', 0), 2) for r in runs]}  baseline {[round(r.get('baseline_us', 0), 2) for r in runs]}")
    for prof, s in b.get("throughput", {}).items():
        p = s["per_candidate_ms"]
        gpu = p["total"] - p.get("compile", 0) - p.get("request", 0)
        print(f"  {mode:8s} profile {prof:7s} total {p['total']:6.1f} compile {p.get('compile', 0):6.1f} load {p.get('load', 0):4.1f} "
              f"verify {p.get('verify', 0):5.1f} time {p.get('time', 0):6.1f} profile {p.get('profile', 0):6.1f} -> {s['per_minute']:6.1f}/min "
              f"({s['passed']}/{s['candidates']} passed); runner-bound (compile overlapped) {60000 / gpu if gpu > 0 else 0:6.1f}/min")
    best = None
    for prof, s in b.get("throughput", {}).items():
        for c in s.get("sweep", []):
            if c["median_us"] > 0 and (best is None or c["median_us"] < best[1]):
                best = (c["tunables"], c["median_us"])
    if best:
        print(f"  {mode:8s} fastest in the sweep: {best[0]} at {best[1]:.2f} us")
    if mode == "fixed":
        fixed_sweep = {pr: [(c['tunables'], c['median_us']) for c in s.get('sweep', [])] for pr, s in b.get('throughput', {}).items()}
    else:
        for pr, s in b.get("throughput", {}).items():
            a = [(c['tunables'], c['median_us']) for c in s.get('sweep', [])]
            f = fixed_sweep.get(pr, []) if 'fixed_sweep' in dir() else []
            if f and len(f) == len(a):
                rank_f = [t for t, _ in sorted(f, key=lambda x: x[1])]
                rank_a = [t for t, _ in sorted(a, key=lambda x: x[1])]
                diffs = [100 * (am / fm - 1) for (_, fm), (_, am) in zip(f, a) if fm > 0]
                print(f"  sweep {pr}: adaptive vs fixed median per tunable: {', '.join(f'{d:+.2f}%' for d in diffs)}; "
                      f"same fastest: {'yes' if rank_f[0] == rank_a[0] else 'no'}; same order: {'yes' if rank_f == rank_a else 'no'}")

def tune(path):
    its, summary = [], None
    try:
        for line in open(path):
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
    return its, summary
def tun(j):
    t = j.get("tunables") or {}
    return " ".join(f"{k}={v}" for k, v in sorted(t.items())) if isinstance(t, dict) else str(t)
print("\ntuning loop (kernelloop-cli tune, budget 8, k 4): every keep/revert decision")
lists = {}
for mode in ("fixed", "adaptive"):
    its, s = tune(f"{w}/tune-{mode}.jsonl")
    lists[mode] = [(tun(j), j.get("category"), bool(j.get("kept"))) for j in its]
    try:
        wall = int(open(f"{w}/tune-{mode}.wall").read()) / 1000.0
    except Exception:
        wall = 0
    print(f"  {mode}: {len(its)} iterations in {wall:.1f} s wall = {60.0 * len(its) / wall if wall else 0:.1f}/min")
    for j in its:
        med = j.get("median_us")
        print(f"    {j['iteration']:3d} {j.get('proposer',''):8s} {j.get('category',''):14s} {'kept ' if j.get('kept') else 'revert'} "
              f"{(f'{med:8.2f} us' if med else '       -   ')}  {tun(j)}")
    if s and s.get("best"):
        b = s["best"]
        print(f"    best: iteration {b.get('iteration')} {tun(b)} {b.get('median_us') or 0:.2f} us, {b.get('speedup') or 0:.2f}x")
        lists[mode + "-best"] = tun(b)
    if s:
        print(f"    {s.get('stop_reason', '')}")
same = bool(lists.get("fixed")) and lists.get("fixed") == lists.get("adaptive") and lists.get("fixed-best") == lists.get("adaptive-best")
print(f"  decisions unchanged: {'yes' if same else 'no'}  (best: fixed {lists.get('fixed-best')} / adaptive {lists.get('adaptive-best')}; "
      f"kept lists equal: {'yes' if [x[2] for x in lists.get('fixed', [])] == [x[2] for x in lists.get('adaptive', [])] else 'no'})")
print("\npool on GPU 0 (adaptive, budget 6, k 4)")
for n in (1, 2):
    try:
        tail = [l.strip() for l in open(f"{w}/pool-{n}.stderr") if "/min" in l or "candidates" in l]
    except FileNotFoundError:
        tail = []
    its, s = tune(f"{w}/pool-{n}.jsonl")
    try:
        wall = int(open(f"{w}/pool-{n}.wall").read()) / 1000.0
    except Exception:
        wall = 0
    rate = 60.0 * len(its) / wall if wall > 0 else 0
    print(f"  {n} runner(s): {len(its)} candidates in {wall:.1f} s wall (process start included) = {rate:.1f}/min; "
          + ("; ".join(tail[-2:]) if tail else "no summary line"))
EOF
cat "$TXT" | sed -n '/^runner_bench (/,$p'
tar -C "$WORK" -czf "$OUT/throughput-details.tgz" --exclude='*.cubin' --exclude='*.db*' . 2>/dev/null
echo "details: $OUT/throughput-details.tgz"
