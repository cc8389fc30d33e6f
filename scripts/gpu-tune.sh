#!/usr/bin/env bash
# The tuning loop on a GPU, as evidence for the loop issue: the built-in tuner alone from the
# LayerNorm+GELU naive baseline, then PyTorch eager, the seed-style naive kernel (seed_naive.cu),
# the naive baseline and the tuner's best timed side by side in one Python process on the same
# tensors (cold L2, CUDA events), and the recorded session exported for resources/sessions/.
# Called by scripts/gpu-check.sh with BIN (folder of kernelloop-cli and kernelloop-runner) and OUT
# set; prints a short table.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:?folder of kernelloop-cli and kernelloop-runner}
OUT=${OUT:-$PWD/gpu-check-out}
ROUNDS=${KL_TUNE_ROUNDS:-10}
K=${KL_TUNE_K:-4}
DB=$OUT/tune-session.db
rm -f "$DB" "$DB-wal" "$DB-shm"
problem=resources/examples/layernorm_gelu/problem.json

start=$(date +%s)
"$BIN/kernelloop-cli" tune "$problem" --db "$DB" --runner "$BIN/kernelloop-runner" --budget "$ROUNDS" -k "$K" \
    --patience "${KL_TUNE_PATIENCE:-0}" --metrics default --label "H200 tuner evidence" --json >"$OUT/tune.jsonl" 2>"$OUT/tune.stderr"
rc=$?
end=$(date +%s)
echo "tune rc=$rc in $((end - start)) s"
tail -3 "$OUT/tune.stderr"
"$BIN/kernelloop-cli" history --db "$DB" >"$OUT/tune-history.txt" 2>&1
"$BIN/kernelloop-cli" export-kernel --db "$DB" -o "$OUT/best.cu" >/dev/null 2>&1
"$BIN/kernelloop-cli" export "$OUT/layernorm_gelu-h200.klsession" --db "$DB" >/dev/null 2>&1
cat "$OUT/tune-history.txt"

# The seed-style naive kernel through the runner as well: verified at every size of the problem
# (main, fuzz, padded rows) and timed in its own job beside the baseline (iteration 1 there).
SEED_DB=$OUT/seed-session.db
rm -f "$SEED_DB" "$SEED_DB-wal" "$SEED_DB-shm"
"$BIN/kernelloop-cli" evaluate "$problem" resources/examples/layernorm_gelu/seed_naive.cu --db "$SEED_DB" \
    --runner "$BIN/kernelloop-runner" --metrics none --label "seed-style naive" --json >"$OUT/seed.jsonl" 2>"$OUT/seed.stderr"
echo "seed-style naive evaluate rc=$?"
tail -3 "$OUT/seed.stderr"
rm -f "$SEED_DB" "$SEED_DB-wal" "$SEED_DB-shm"

PYTHONUNBUFFERED=1 python3 scripts/compare_torch.py --problem-dir resources/examples/layernorm_gelu \
    --best "$OUT/best.cu" --tune "$OUT/tune.jsonl" --wall "$((end - start))" --seed-runner "$OUT/seed.jsonl" \
    | tee "$OUT/tune-table.txt"
