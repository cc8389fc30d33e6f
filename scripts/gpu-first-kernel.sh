#!/usr/bin/env bash
# Issue 24 on a GPU machine: KernelBench level-1 files imported with no hand-written kernel, each run
# end to end by the real CLI from torch.compile's kernel (--start inductor) with the tuner alone, and,
# with KL_FIRST_KERNEL_REPLIES=DIR, again with a model's first kernel replayed from DIR/NAME.md over
# loopback (kl-llm-replay). Prints a table LAST; logs and stores under $OUT.
#
#   scripts/gpu-first-kernel.sh DIR [BUDGET]     DIR: KernelBench .py files (not committed: carry them)
#
# KL_MAX_ELEMENTS (default 0: KernelBench's sizes) caps each main size's largest tensor: the biggest
# size symbol is divided by a power of two until it fits, and the table names the size that ran.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KB=${1:?a folder of KernelBench .py files}
BUDGET=${2:-4}
OUT=${OUT:-$ROOT/gpu-first-kernel-out}
mkdir -p "$OUT"
WORK=$(mktemp -d)
source "$ROOT/scripts/gpu-env.sh"
echo "date $(date -u +%Y-%m-%dT%H:%MZ) commit $(cat .gpu/COMMIT 2>/dev/null) budget $BUDGET" | tee "$OUT/first-kernel.log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader >>"$OUT/first-kernel.log" 2>&1

"$BIN/kernelloop-cli" import-kernelbench "$KB" -o "$WORK/p" >>"$OUT/first-kernel.log" 2>&1
python3 scripts/cap-problem-size.py "${KL_MAX_ELEMENTS:-0}" "$WORK"/p/*/problem.json >>"$OUT/first-kernel.log" 2>&1

summarise() { # DB LABEL -> one line per session: iteration 1 and the best, with their figures
    python3 - "$1" "$2" <<'EOF'
import json, sqlite3, sys
db, label = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db)
rows = c.execute("""SELECT s.id, s.label, p.name, s.summary_json, s.started_ms FROM sessions s JOIN problems p ON p.hash = s.problem_hash
                    WHERE s.label LIKE ? ORDER BY s.id""", (label + "%",)).fetchall()
def figures(sid, idx):
    r = c.execute("""SELECT r.category, r.timing_json FROM results r JOIN iterations i ON i.id = r.iteration_id
                     WHERE i.session_id = ? AND i.idx = ?""", (sid, idx)).fetchone()
    if not r or not r[1]:
        return r[0] if r else "-", None
    case = json.loads(r[1])["cases"][0]
    return r[0], case
for sid, lab, name, summary, _ in rows:
    s = json.loads(summary or "{}")
    first_cat, first = figures(sid, 1)
    best_cat, best = figures(sid, s.get("best_iteration", 0))
    def cols(case):
        if not case:
            return "-", "-", "-", "-"
        return ("%.1f" % case["candidate"]["median_us"], "%.2f" % (case.get("speedup_vs_eager") or 0),
                "%.2f" % (case.get("speedup_vs_compile") or 0), "%.1f" % (case.get("pct_of_copy") or 0))
    a, b = cols(first), cols(best)
    print("| %s | %s | %s | %s | %s us, %sx eager, %sx compile, %s%% copy | %s us, %sx eager, %sx compile, %s%% copy | %s | %.1f | %s |" % (
        name, lab.split(":")[-1], first_cat, "ok" if first else "-", a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3],
        s.get("evaluated", 0), s.get("candidates_per_minute", 0), s.get("stop_reason", "")))
EOF
}

# The store lives under $OUT from the start: a call cut at its time limit still brings back every finished session.
DB=$OUT/first-kernel.db
for dir in "$WORK"/p/*/; do
    name=$(basename "$dir")
    size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sizes"]["main"][0].get("label","?"))' "$dir/problem.json")
    echo "== $name ($size): --start inductor" | tee -a "$OUT/first-kernel.log"
    timeout 420 "$BIN/kernelloop-cli" tune "$dir/problem.json" --start inductor --budget "$BUDGET" -k 4 \
        --profile-candidates promising --db "$DB" --label "inductor:$size" >>"$OUT/first-kernel.log" 2>&1
    echo "rc=$?" | tee -a "$OUT/first-kernel.log"
    replies=${KL_FIRST_KERNEL_REPLIES:-}
    if [[ -n "$replies" && -f "$replies/$name.md" && -x "$BIN/kl-llm-replay" ]]; then
        echo "== $name ($size): --proposer llm (replayed first kernel)" | tee -a "$OUT/first-kernel.log"
        # The first-kernel request gets the recorded reply; later requests (planner, coder) a reply without code.
        printf '{"routes": [{"when": "no kernel has been written for it yet", "replies": ["%s"]}, {"when": "", "replies": []}]}\n' \
            "$(realpath "$replies/$name.md")" >"$WORK/$name.scenario.json"
        "$BIN/kl-llm-replay" --scenario "$WORK/$name.scenario.json" --port 18765 --log "$OUT/replay.log" \
            >>"$OUT/first-kernel.log" 2>&1 &
        replay=$!
        sleep 1
        timeout 300 "$BIN/kernelloop-cli" tune "$dir/problem.json" --proposer llm --provider openai \
            --base-url http://127.0.0.1:18765/v1 --model replay --budget 2 --db "$DB" --label "llm:$size" \
            >>"$OUT/first-kernel.log" 2>&1
        echo "rc=$?" | tee -a "$OUT/first-kernel.log"
        kill $replay 2>/dev/null
    fi
done
{
    echo
    echo "| problem | size | iteration 1 | | its kernel | after tuning (best) | candidates | per min | stop |"
    echo "|---|---|---|---|---|---|---|---|---|"
    summarise "$DB" "inductor:"
    summarise "$DB" "llm:"
} | tee -a "$OUT/first-kernel.log"
