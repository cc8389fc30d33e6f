#!/usr/bin/env bash
# Issue 27 on a GPU machine: a real-size KernelBench problem (default .kb/23_Softmax.py: 4096 x 393216 fp32,
# 12.9 GB moved a call) with the bundled naive Triton softmax as its baseline, the PyTorch reference by
# host copies and on the GPU (KL_REFERENCE_ON_GPU=1, CUDA IPC) in one run:
#   evaluate  kernelloop-cli evaluate --json of the baseline (iteration 1: the baseline's job, 2: the same
#             kernel as a candidate, with the worker and torch.compile warm), GPU path then host path; the
#             runner's phases per job, the verdicts and medians side by side;
#   tune      kernelloop-cli tune --time $KL_TUNE_TIME (default 60s) --profile-candidates promising, GPU then
#             host path: candidates per minute, every keep/revert, "decisions equal" between the two.
# KL_EVAL_TIMEOUT (default 240) caps each evaluate, in seconds.
# Steps in the order given (default: evaluate). Uses the bundle of scripts/gpu-check.sh --bundle (carried
# .gpu-pack) and needs the ignored .kb/ folder carried. Writes $OUT/reference-check.txt and
# $OUT/reference-check.tgz (stores, JSON lines, stderr).
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

PROBLEM=$WORK/problem
start=$(date +%s.%N)
timeout 120 "$BIN/kernelloop-cli" import-kernelbench "$KB" -o "$PROBLEM" --baseline "$BASELINE" >"$WORK/import.txt" 2>&1
say "import $(basename "$KB"): rc=$? in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
tail -n 5 "$WORK/import.txt" | tee -a "$TXT"
[[ -f "$PROBLEM/problem.json" ]] || { tar -C "$WORK" -czf "$OUT/reference-check.tgz" . ; exit 1; }

# One path's run: NAME then the command's words; the path's environment comes from the caller.
evaluate() { # NAME ENV...
    local name=$1; shift
    local db=$WORK/$name.db
    local start; start=$(date +%s.%N)
    # The baseline as the import copied it in (problem.json's "baseline", baseline.py).
    local candidate
    candidate=$PROBLEM/$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["baseline"])' "$PROBLEM/problem.json")
    env "$@" timeout "${KL_EVAL_TIMEOUT:-240}" "$BIN/kernelloop-cli" evaluate "$PROBLEM/problem.json" "$candidate" \
        --json --db "$db" --runner "$KL_RUNNER" --label "issue 27 $name" >"$WORK/$name.jsonl" 2>"$WORK/$name.stderr"
    local rc=$?
    say "$name: evaluate rc=$rc wall $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
    [[ $rc -eq 0 ]] || tail -n 20 "$WORK/$name.stderr" | tee -a "$TXT"
}
tune() { # NAME ENV...
    local name=$1; shift
    local start; start=$(date +%s.%N)
    env "$@" timeout 300 "$BIN/kernelloop-cli" tune "$PROBLEM/problem.json" --time "${KL_TUNE_TIME:-60s}" \
        --profile-candidates promising --json --db "$WORK/$name.db" --runner "$KL_RUNNER" --label "issue 27 $name" \
        >"$WORK/$name.jsonl" 2>"$WORK/$name.stderr"
    local rc=$?
    say "$name: tune rc=$rc wall $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
    [[ $rc -eq 0 ]] || tail -n 20 "$WORK/$name.stderr" | tee -a "$TXT"
}

# Per job: verdict, median, the phases that matter here, in ms.
report() { # NAMES...
    python3 - "$WORK" "$@" <<'PY' | tee -a "$TXT"
import json, os, sys
work, names = sys.argv[1], sys.argv[2:]
keys = ["load", "memory_plan", "verify", "verify_reference_transfer", "verify_reference_open", "verify_reference_worker",
        "reference_worker_start", "reference_worker_start_wait", "contenders_compile", "time", "time_contenders",
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
            if isinstance(j, dict) and "iteration" in j:
                rows.append(j)
    runs[name] = rows
    print(f"## {name}: {len(rows)} jobs")
    for r in rows:
        p = r.get("phases_ms") or {}
        wall = sum(v for k, v in p.items() if k in ("load", "memory_plan", "verify", "time", "profile", "parse"))
        print(f"iter {r['iteration']} {r['status']}/{r['category']} median {r.get('median_us')} us kept={r.get('kept')} "
              f"runner-phases {wall:.0f} ms; time/wall {p.get('time', 0) / wall if wall else 0:.2f}")
        print("   " + ", ".join(f"{k} {p[k]:.0f}" for k in keys if k in p))
        print("   detail: " + str(r.get("detail", ""))[:400])
for a, b in zip(names[::2], names[1::2]):
    da = [(r["iteration"], r["category"], r.get("kept")) for r in runs[a]]
    db = [(r["iteration"], r["category"], r.get("kept")) for r in runs[b]]
    n = min(len(da), len(db))
    print(f"decisions {a} vs {b}: {'equal' if da[:n] == db[:n] else 'DIFFER'} over the first {n} jobs "
          f"({len(da)} vs {len(db)})")
PY
}

for step in "${STEPS[@]}"; do
    case $step in
    evaluate)
        evaluate eval-gpu KL_REFERENCE_ON_GPU=1
        evaluate eval-host KL_REFERENCE_ON_GPU=0
        report eval-gpu eval-host
        ;;
    tune)
        tune tune-gpu KL_REFERENCE_ON_GPU=1
        tune tune-host KL_REFERENCE_ON_GPU=0
        report tune-gpu tune-host
        for n in tune-gpu tune-host; do
            python3 - "$WORK/$n.jsonl" "$n" "${KL_TUNE_TIME:-60s}" <<'PY' | tee -a "$TXT"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and '"iteration"' in l]
t = sys.argv[3]
seconds = float(t[:-1]) * (60 if t.endswith("m") else 1) if t[-1] in "sm" else float(t)
print(f"{sys.argv[2]}: {len(rows)} jobs in {t}: {len(rows) / seconds * 60:.1f} candidates/min")
PY
        done
        ;;
    *) say "unknown step $step" ;;
    esac
done
cp "$TXT" "$WORK/"
tar -C "$WORK" -czf "$OUT/reference-check.tgz" --exclude='*.db-wal' --exclude='*.db-shm' . 2>/dev/null
ls -la "$OUT"
