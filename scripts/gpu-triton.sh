#!/usr/bin/env bash
# Triton candidates and PyTorch references on a GPU machine (issue 13), from the repository root:
#   1. the Triton helper (python/kernelloop/triton_aot.py) on the example and on broken variants:
#      its replies and cubin become CPU fixtures (tests/fixtures/triton/)
#   2. `check` (static report of the Triton baseline), `evaluate` (verify against the PyTorch
#      reference through the runner's worker, time beside eager and torch.compile) at a few points
#   3. a short tuner session from the naive Triton baseline
# Uses a carried bundle (BUNDLE, default .gpu-h7: scripts/gpu-check.sh --bundle, then copied).
# Writes $OUT/triton-fixtures.tgz, $OUT/gpu-triton.log and prints a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-triton-out}
BUNDLE=${BUNDLE:-$ROOT/.gpu-h7}
mkdir -p "$OUT/fixtures"
LOG=$OUT/gpu-triton.log
export LD_LIBRARY_PATH=$BUNDLE/lib:${LD_LIBRARY_PATH:-}
export KL_PYTHON=${KL_PYTHON:-python3} KERNELLOOP_DB=$OUT/kl.db PYTHONUNBUFFERED=1
export KL_TRITON_HELPER=$ROOT/python/kernelloop/triton_aot.py KL_REFERENCE_WORKER=$ROOT/python/kernelloop/torch_reference_worker.py
CLI=$BUNDLE/bin/kernelloop-cli
EX=resources/examples/layernorm_gelu_triton
FX=$OUT/fixtures
say() { echo "$*" | tee -a "$LOG"; }

say "== versions"
python3 -c "import sys, torch, triton; print(sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)" 2>&1 | tee -a "$LOG"

say "== 1. helper fixtures"
python3 - "$EX/baseline.py" "$FX" <<'EOF' 2>&1 | tee -a "$LOG"
import json, os, subprocess, sys, time
base = open(sys.argv[1]).read()
fx = sys.argv[2]
sig = ["*fp16", "*fp16", "*fp16", "*fp16", "i32", "i32", "i32", "fp32"]
line = next(i for i, l in enumerate(base.splitlines(), 1) if "@kl launch" in l)
variants = {
    "ok": (base, {"BLOCK_N": 1024}, 4, 1),
    "ok_wide": (base, {"BLOCK_N": 4096}, 8, 2),
    "syntax": (base.replace("mask=cols < N, other=0.0)", "mask=cols < N other=0.0)"), {"BLOCK_N": 1024}, 4, 1),
    "undefined": (base.replace("rstd = 1.0 / tl.sqrt(var + eps)", "rstd = 1.0 / tl.sqrt(var + epsilon)"), {"BLOCK_N": 1024}, 4, 1),
    "type": (base.replace("tl.store(y_row + cols,", "tl.store(y_row + cols.to(tl.float32),"), {"BLOCK_N": 1024}, 4, 1),
    "not_pow2": (base, {"BLOCK_N": 1000}, 4, 1),
    "missing": (base, {"BLOCK_N": 1024}, 4, 1, "ln_gelu_missing"),
    "args": (base, {"BLOCK_N": 1024, "BLOCK_M": 2}, 4, 1),
}
for name, v in variants.items():
    src, cx, w, s = v[:4]
    kernel = v[4] if len(v) > 4 else "ln_gelu"
    req = {"source": src, "file": "candidate.py", "kernel": kernel, "signature": sig, "constexprs": cx,
           "num_warps": w, "num_stages": s, "capability": 90, "line": line}
    d = os.path.join(fx, name)
    os.makedirs(d, exist_ok=True)
    json.dump(req, open(os.path.join(d, "request.json"), "w"), indent=1)
    t = time.time()
    p = subprocess.run([sys.executable, "python/kernelloop/triton_aot.py", os.path.join(d, "request.json"), d],
                       capture_output=True, text=True, timeout=60)
    reply = json.load(open(os.path.join(d, "reply.json")))
    print("%-10s rc=%d %.2fs ok=%s exc=%s line=%s shared=%s regs-in-log=%s dropped=%s msg=%s" % (
        name, p.returncode, time.time() - t, reply.get("ok"), reply.get("exception"), reply.get("line"),
        (reply.get("metadata") or {}).get("shared"), "registers" in reply.get("ptxas_log", ""),
        reply.get("attrs_dropped"), (reply.get("message") or "")[:160].replace("\n", " | ")))
    if p.stderr.strip():
        open(os.path.join(d, "stderr.txt"), "w").write(p.stderr[-4000:])
EOF

say "== 2. check, evaluate"
timeout 60 "$CLI" check "$EX/problem.json" 2>&1 | tee "$FX/check_baseline.txt" | tail -25 | tee -a "$LOG"
timeout 60 "$CLI" check "$EX/problem.json" --json > "$FX/check_baseline.json" 2>>"$LOG"
first=1
for sets in "" "--set BLOCK_N=1024 --set W=4" "--set BLOCK_N=4096 --set W=8 --set S=2"; do
    # torch.compile once (it costs tens of seconds in each new runner); eager in every job
    if [[ $first == 1 ]]; then unset KL_CONTENDERS; first=0; else export KL_CONTENDERS=eager; fi
    tag=$(echo "eval $sets" | tr ' =' '__')
    say "-- evaluate $sets"
    # shellcheck disable=SC2086
    timeout 90 "$CLI" evaluate --json --no-cache $sets "$EX/problem.json" "$EX/baseline.py" > "$FX/$tag.jsonl" 2>"$FX/$tag.err"
    say "rc=$?"; tail -c 3000 "$FX/$tag.jsonl" | tee -a "$LOG"; tail -5 "$FX/$tag.err" | tee -a "$LOG"
done

say "== 3. tuner from the naive Triton baseline"
unset KL_CONTENDERS
timeout 100 "$CLI" tune "$EX/problem.json" --proposer tuner --budget 5 --time 70s -k 4 --metrics none \
    --label triton-tuner > "$FX/tune.txt" 2>&1
say "rc=$?"; tail -30 "$FX/tune.txt" | tee -a "$LOG"
timeout 60 "$CLI" history > "$FX/history.txt" 2>&1; tail -5 "$FX/history.txt" | tee -a "$LOG"

tar czf "$OUT/triton-fixtures.tgz" -C "$OUT" fixtures
cp "$OUT/kl.db" "$OUT/kl-triton.db" 2>/dev/null
say "== done"
