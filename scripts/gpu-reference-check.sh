#!/usr/bin/env bash
# Issue 27 on a GPU machine: real-size KernelBench problems, the PyTorch reference on the runner's device
# buffers (CUDA IPC, the default) against host copies (KL_REFERENCE_ON_GPU=0) in one run.
#   evaluate  23_Softmax (KL_KB_FILE, 4096 x 393216 fp32, 12.9 GB a call) with the bundled naive Triton softmax:
#             kernelloop-cli evaluate --json of the baseline, GPU path then host path; phases, verdicts, medians.
#   tune      the same problem: tune --time $KL_TUNE_TIME (default 90s) --patience 0 --profile-candidates promising
#             on the GPU path (candidates per minute), then --budget $KL_HOST_ROUNDS (default 2) on the host path;
#             decisions and verdicts compared over the jobs both ran (same seed).
#   problems  each file of $KL_KB_FILES (names in .kb/, default 19_ReLU 24_LogSoftmax 26_GELU_ 39_L2Norm_) at its
#             real size from torch.compile's kernel (--start inductor): GPU path --time $KL_PROBLEM_TIME (default
#             40s), host path --budget 1 -k 1; one table row each. KL_COMPARE_COLD=1: also the GPU path with
#             every Triton compile in a fresh Python (KL_TRITON_WARM=0, as before the warm helper).
# Uses the bundle of scripts/gpu-check.sh --bundle (carried .gpu-pack) and the ignored .kb/ folder (carried).
# Writes $OUT/reference-check.txt and $OUT/reference-check.tgz (stores, JSON lines with wall-clock stamps, stderr).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-reference-out}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu-env.sh"
WORK=$(mktemp -d)
TXT=$OUT/reference-check.txt
: >"$TXT"
say() { echo "$*" | tee -a "$TXT"; }
STEPS=("$@")
[[ ${#STEPS[@]} -gt 0 ]] || STEPS=(evaluate)
KB=${KL_KB_FILE:-$ROOT/.kb/23_Softmax.py}
BASELINE=${KL_KB_BASELINE:-$ROOT/resources/examples/kernelbench_triton/softmax.py}
say "KernelLoop issue 27 reference check  $(date -u +%Y-%m-%dT%H:%MZ)  commit $(cat .gpu/COMMIT 2>/dev/null)  steps: ${STEPS[*]}"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader 2>/dev/null | sed 's/^/device /' | tee -a "$TXT"
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__)' 2>&1 | tee -a "$TXT"
export KL_VERIFY_HOST_CHECK=${KL_VERIFY_HOST_CHECK:-0}

seconds() { python3 -c "print(round($(date +%s.%N)-$1,1))"; }
# JSON lines stamped with the wall clock as they arrive ("t_wall"), for candidates per minute past start-up.
stamp() { python3 -u -c '
import json, sys, time
for line in sys.stdin:
    try:
        j = json.loads(line)
    except ValueError:
        sys.stdout.write(line); continue
    if isinstance(j, dict):
        j["t_wall"] = time.time()
    print(json.dumps(j), flush=True)'; }

import_problem() { # FILE DIR [BASELINE]
    local start; start=$(date +%s.%N)
    local extra=(); [[ -n "${3:-}" ]] && extra=(--baseline "$3")
    timeout 180 "$BIN/kernelloop-cli" import-kernelbench "$1" -o "$2" "${extra[@]}" >"$2.import.txt" 2>&1
    say "import $(basename "$1"): rc=$? in $(seconds "$start") s"
    [[ -f "$2/problem.json" ]]
}

evaluate() { # PROBLEM_DIR NAME ENV...
    local problem=$1 name=$2; shift 2
    local start; start=$(date +%s.%N)
    local candidate
    candidate=$problem/$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["baseline"])' "$problem/problem.json")
    env "$@" timeout "${KL_EVAL_TIMEOUT:-240}" "$BIN/kernelloop-cli" evaluate "$problem/problem.json" "$candidate" \
        --json --db "$WORK/$name.db" --runner "$KL_RUNNER" --label "issue 27 $name" 2>"$WORK/$name.stderr" | stamp >"$WORK/$name.jsonl"
    local rc=${PIPESTATUS[0]}
    say "$name: evaluate rc=$rc wall $(seconds "$start") s"
    [[ $rc -eq 0 ]] || tail -n 20 "$WORK/$name.stderr" | tee -a "$TXT"
}

tune() { # PROBLEM_DIR NAME LIMIT... -- ENV...   (LIMIT: --time 90s | --budget 2 ...)
    local problem=$1 name=$2; shift 2
    local limits=()
    while [[ $# -gt 0 && $1 != -- ]]; do limits+=("$1"); shift; done
    shift || true
    local start; start=$(date +%s.%N)
    env "$@" timeout 400 "$BIN/kernelloop-cli" tune "$problem/problem.json" "${limits[@]}" --patience 0 --seed 7 \
        --profile-candidates promising --json --db "$WORK/$name.db" --runner "$KL_RUNNER" --label "issue 27 $name" \
        2>"$WORK/$name.stderr" | stamp >"$WORK/$name.jsonl"
    local rc=${PIPESTATUS[0]}
    echo "$start $(date +%s.%N)" >"$WORK/$name.wall"
    say "$name: tune ${limits[*]} rc=$rc wall $(seconds "$start") s"
    [[ $rc -eq 0 ]] || tail -n 20 "$WORK/$name.stderr" | tee -a "$TXT"
}

# Per job: verdict, median, the phases that matter; candidates per minute; decisions compared in pairs.
report() { # NAMES...
    python3 - "$WORK" "$@" <<'PY' | tee -a "$TXT"
import json, os, sys
work, names = sys.argv[1], sys.argv[2:]
keys = ["compile", "load", "memory_plan", "verify", "verify_prepare", "verify_reference", "verify_reference_transfer",
        "verify_reference_open", "verify_reference_worker", "verify_candidate", "verify_checks", "reference_worker_start",
        "reference_worker_start_wait", "contenders_warm_wait", "contenders_compile", "time", "time_contenders",
        "time_contenders_transfer", "time_contenders_to_device", "time_contenders_open", "time_contenders_eager",
        "time_contenders_compile", "time_contenders_compiled", "profile"]
runs = {}
for name in names:
    path = os.path.join(work, name + ".jsonl")
    rows = []
    if os.path.exists(path):
        for line in open(path):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if isinstance(j, dict) and "iteration" in j and "summary" not in j:
                rows.append(j)
    runs[name] = rows
    print(f"## {name}: {len(rows)} jobs")
    for r in rows[:6] + ([] if len(rows) <= 8 else [None]) + (rows[-2:] if len(rows) > 8 else rows[6:]):
        if r is None:
            print("   ..."); continue
        p = r.get("phases_ms") or {}
        wall = sum(v for k, v in p.items() if k in ("load", "memory_plan", "verify", "time", "profile", "parse"))
        bytes_ = (r.get("gbps") or 0) * (r.get("median_us") or 0) * 1e3
        print(f"iter {r['iteration']} {r['status']}/{r['category']} median {r.get('median_us')} us ({bytes_/1e9:.2f} GB a call) "
              f"kept={r.get('kept')} runner-phases {wall:.0f} ms; time/wall {p.get('time', 0) / wall if wall else 0:.2f}")
        print("   " + ", ".join(f"{k} {p[k]:.0f}" for k in keys if k in p))
        if r.get("category") != "passed":
            print("   detail: " + str(r.get("detail", ""))[:300])
    wall_file = os.path.join(work, name + ".wall")
    if rows and os.path.exists(wall_file):
        start, end = map(float, open(wall_file).read().split())
        stamps = [r["t_wall"] for r in rows if "t_wall" in r]
        whole = len(rows) / (end - start) * 60
        past = (len(stamps) - 1) / (stamps[-1] - stamps[0]) * 60 if len(stamps) > 2 else float("nan")
        print(f"{name}: {len(rows)} jobs in {end - start:.1f} s: {whole:.1f} candidates/min whole session, "
              f"{past:.1f}/min past the first job")
for a, b in zip(names[::2], names[1::2]):
    da = [(r["iteration"], r["category"], r.get("kept")) for r in runs[a]]
    db = [(r["iteration"], r["category"], r.get("kept")) for r in runs[b]]
    n = min(len(da), len(db))
    va = [x[:2] for x in da[:n]]
    vb = [x[:2] for x in db[:n]]
    print(f"{a} vs {b} over the first {n} jobs: verdicts {'equal' if va == vb else 'DIFFER'}, "
          f"decisions {'equal' if da[:n] == db[:n] else 'DIFFER'}")
PY
}

for step in "${STEPS[@]}"; do
    case $step in
    evaluate|tune)
        P=$WORK/softmax
        [[ -f $P/problem.json ]] || import_problem "$KB" "$P" "$BASELINE" || continue
        if [[ $step == evaluate ]]; then
            evaluate "$P" eval-gpu
            evaluate "$P" eval-host KL_REFERENCE_ON_GPU=0
            report eval-gpu eval-host
        else
            tune "$P" tune-gpu --time "${KL_TUNE_TIME:-90s}" --
            tune "$P" tune-host --budget "${KL_HOST_ROUNDS:-2}" -- KL_REFERENCE_ON_GPU=0
            report tune-gpu tune-host
        fi
        ;;
    problems)
        for f in ${KL_KB_FILES:-19_ReLU 24_LogSoftmax 26_GELU_ 39_L2Norm_}; do
            P=$WORK/$f
            import_problem "$ROOT/.kb/$f.py" "$P" || continue
            tune "$P" "$f-gpu" --start inductor --time "${KL_PROBLEM_TIME:-40s}" --
            tune "$P" "$f-host" --start inductor --budget 1 -k 1 -- KL_REFERENCE_ON_GPU=0
            report "$f-gpu" "$f-host"
            if [[ -n ${KL_COMPARE_COLD:-} ]]; then # Triton compiles in a fresh Python each (before the warm helper)
                tune "$P" "$f-gpu-cold" --start inductor --time "${KL_PROBLEM_TIME:-40s}" -- KL_TRITON_WARM=0
                report "$f-gpu-cold"
            fi
        done
        ;;
    *) say "unknown step $step" ;;
    esac
done
cp "$TXT" "$WORK/"
tar -C "$WORK" -czf "$OUT/reference-check.tgz" --exclude='*.db-wal' --exclude='*.db-shm' . 2>/dev/null
ls -la "$OUT"
