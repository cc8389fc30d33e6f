#!/usr/bin/env bash
# Issue 29 on a GPU machine: the memory-bound KernelBench files of DIR as one campaign, each problem started
# from torch.compile's kernel (--start inductor) and tuned, one problem per GPU (--runner local:all), then
# the campaign's report: its Markdown printed last; report (Markdown, CSV, JSON), distribution plot (SVG),
# log, store and the winners (a .tar.gz of standalone kernels) under $OUT (7 files).
#
#   scripts/gpu-campaign.sh DIR [BUDGET]     DIR: KernelBench .py files (not committed: carry them)
#
# Memory-bound: a file whose import counts FLOPs (matmul, convolution, attention) is left out; a file that
# does not import stays in, so that its refusal is a row of the report. The campaign lives in
# build-campaign/ (kept between runs on a warm machine): KL_CAMPAIGN_SECONDS (default 540, under a 10-minute
# command limit) bounds the whole script; when it runs out the campaign is stopped, its report printed, and
# running the script again resumes it without repeating a finished problem. KL_CAMPAIGN_TIME (default 90s)
# caps each problem's tuning, KL_CAMPAIGN_K (default 4) is its candidates a round; KL_CAMPAIGN_FRESH=1 starts
# over.
set -uo pipefail
START=$(date +%s)
cd "$(dirname "$0")/.."
ROOT=$PWD
KB=${1:?a folder of KernelBench .py files}
BUDGET=${2:-4}
OUT=${OUT:-$ROOT/gpu-campaign-out}
STATE=$ROOT/build-campaign
mkdir -p "$OUT" "$STATE"
source "$ROOT/scripts/gpu-env.sh"
LOG=$OUT/campaign.log
DB=$STATE/kl.db
[[ "${KL_CAMPAIGN_FRESH:-0}" == 1 ]] && rm -rf "$STATE" && mkdir -p "$STATE"
echo "date $(date -u +%Y-%m-%dT%H:%MZ) commit $(cat .gpu/COMMIT 2>/dev/null) budget $BUDGET" | tee -a "$LOG"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader >>"$LOG" 2>&1

# The campaign's problems, chosen once: each file imported (in parallel) and kept unless it counts FLOPs;
# a file that does not import is kept as the .py, so that the campaign records its refusal as a row.
if [[ ! -f "$STATE/problems.txt" ]]; then
    mkdir -p "$STATE/probe"
    probe() { # FILE -> the problem to run, or nothing when it counts FLOPs
        local name
        name=$(basename "$1" .py)
        if "$BIN/kernelloop-cli" import-kernelbench "$1" -o "$STATE/probe/$name" >"$STATE/probe/$name.log" 2>&1; then
            if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("flops") else 1)' \
                "$STATE/probe/$name/problem.json"; then
                echo "left out (counts FLOPs): $name" >&2
            else
                echo "$STATE/probe/$name/problem.json"
            fi
        else
            cp "$1" "$STATE/probe/$name.py" && echo "$STATE/probe/$name.py"
        fi
    }
    export -f probe
    export BIN STATE
    ls "$KB"/*.py | xargs -P "$(nproc)" -I{} bash -c 'probe "$@"' _ {} 2>>"$LOG" | sort >"$STATE/problems.txt"
    # KL_MAX_ELEMENTS (default 0: KernelBench's sizes) caps each imported problem's main size.
    grep 'problem.json$' "$STATE/problems.txt" | xargs -r python3 scripts/cap-problem-size.py "${KL_MAX_ELEMENTS:-0}" \
        | tee -a "$LOG"
fi
echo "problems: $(wc -l <"$STATE/problems.txt")" | tee -a "$LOG"
left=$((${KL_CAMPAIGN_SECONDS:-540} - ($(date +%s) - START)))
(( left < 60 )) && left=60

mapfile -t problems <"$STATE/problems.txt"
timeout -s INT -k 20 "$left" "$BIN/kernelloop-cli" campaign --name kernelbench "${problems[@]}" \
    --db "$DB" --runner "$BIN/kernelloop-runner" --runner local:all --start inductor --budget "$BUDGET" \
    --time "${KL_CAMPAIGN_TIME:-90s}" -k "${KL_CAMPAIGN_K:-4}" --profile-candidates promising >>"$LOG" 2>&1
echo "campaign rc=$?" | tee -a "$LOG"

report() { "$BIN/kernelloop-cli" campaign-report kernelbench --db "$DB" "$@"; }
report --format csv -o "$OUT/campaign.csv" 2>>"$LOG"
report --format json -o "$OUT/campaign.json" --svg "$OUT/campaign.svg" --kernels "$STATE/winners" 2>>"$LOG"
mkdir -p "$STATE/winners"
tar -C "$STATE" -czf "$OUT/winners.tar.gz" winners 2>>"$LOG"
cp "$DB" "$OUT/campaign.db" 2>/dev/null
report --format table >>"$LOG" 2>&1
report --format markdown -o "$OUT/campaign.md" 2>>"$LOG"
cat "$OUT/campaign.md"
