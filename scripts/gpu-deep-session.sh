#!/usr/bin/env bash
# The bundled session with every metric (issue 28): the built-in tuner on the LayerNorm+GELU example under
# --metrics deep (CUPTI stall reasons and PC sampling per source line for every candidate), exported as
# $OUT/layernorm_gelu-deep-h200.klsession for resources/sessions/, so that the stall chart, the Lines tab
# and source|SASS show real data out of the box. Run on a GPU machine after scripts/gpu-check.sh --bundle
# (carried .gpu-pack) or from a build-gpu tree; scripts/gpu-check.sh runs it too.
#   KL_DEEP_ROUNDS (default 3) rounds of -k 4 after the baseline.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-deep-out}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu-env.sh"
DB=$(mktemp -d)/deep.db
problem=resources/examples/layernorm_gelu/problem.json
start=$(date +%s)
timeout 300 "$BIN/kernelloop-cli" tune "$problem" --db "$DB" --runner "$KL_RUNNER" --budget "${KL_DEEP_ROUNDS:-3}" -k 4 \
    --patience 0 --metrics deep --label "H200 tuner, --metrics deep" >"$OUT/deep-tune.txt" 2>"$OUT/deep-tune.stderr"
echo "deep session: tune rc=$? in $(($(date +%s) - start)) s"
"$BIN/kernelloop-cli" history --db "$DB" 2>&1 | tee "$OUT/deep-history.txt"
"$BIN/kernelloop-cli" show 1 --lines --db "$DB" 2>&1 | head -40
"$BIN/kernelloop-cli" export "$OUT/layernorm_gelu-deep-h200.klsession" --db "$DB" && ls -la "$OUT/layernorm_gelu-deep-h200.klsession"
