#!/usr/bin/env bash
# Triton candidates and PyTorch references on a GPU machine (issue 13), from the repository root.
#
#   scripts/gpu-triton.sh --bundle [BUILD_DIR]   here: build the binaries this script needs (in
#       BUILD_DIR, default build/ci, under /tmp/kl-build.lock), strip them with the libraries the GPU
#       machine lacks into .gpu-h7/ and pack .gpu-h7-pack/gpu.tar.xz (carry [".gpu-h7-pack"]).
#   scripts/gpu-triton.sh [STEP...]              on the GPU machine; STEPs (default: layernorm hostile):
#     layernorm   the helper on the example and on broken variants (replies + cubins become CPU
#                 fixtures, tests/fixtures/triton/), the PTX's vector loads with and without the
#                 specialisation, `check`, `evaluate` beside eager and torch.compile, a tuner session
#                 from the naive baseline, then the LLM+tuner hybrid with a scripted model
#                 (tests/fixtures/llm/scenarios/layernorm_gelu_triton, kl-llm-replay over loopback)
#     hostile     tests/gpu/test_gpu_triton_hostile (the runner's hostile suite in Triton)
#     kernelbench import-kernelbench on resources/kernelbench/*.py (KL_KB_ONLY="softmax gelu": those only), then each problem verified and
#                 tuned from its naive Triton candidate (resources/examples/kernelbench_triton/)
# Writes under $OUT: gpu-triton.log, summary.txt (the table), triton-out.tgz (fixtures, sessions,
# logs). Each step has its own timeout; a failing step says so and the next one runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
TARGETS=(kernelloop-runner kernelloop-cli kl-llm-replay test_gpu_triton_hostile)

if [[ "${1:-}" == "--bundle" ]]; then
    BUILD=${2:-$ROOT/build/ci}
    set -e
    flock /tmp/kl-build.lock cmake --build "$BUILD" --target "${TARGETS[@]}" -j2
    rm -rf .gpu-h7 && mkdir -p .gpu-h7/bin .gpu-h7/lib
    for t in "${TARGETS[@]}"; do
        f=$(find "$BUILD" -type f -name "$t" -perm -u+x | head -1)
        [[ -n "$f" ]] || { echo "missing $t" >&2; exit 1; }
        strip -o ".gpu-h7/bin/$t" "$f"
    done
    # The same library rule as scripts/gpu-check.sh --bundle.
    for f in .gpu-h7/bin/*; do ldd "$f"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
        case "$(basename "$lib")" in
            libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
            libcuda.so*|libnvrtc*|libcupti*|libnvperf*|libnvidia*) ;;
            libcurl*|libssl*|libcrypto*|libgnutls*|libnghttp2*|libidn2*|librtmp*|libssh*|libpsl*|libgssapi*|libkrb5*|libk5crypto*|libcom_err*|libldap*|liblber*|libsasl2*|libbrotli*|libunistring*|libhogweed*|libnettle*|libgmp*|libp11-kit*|libtasn1*|libkeyutils*|libffi*|libresolv*) ;;
            *) cp -L "$lib" .gpu-h7/lib/ ;;
        esac
    done
    git rev-parse --short HEAD > .gpu-h7/COMMIT
    mkdir -p .gpu-h7-pack && tar -C "$ROOT" -cf - .gpu-h7 | xz -T0 -6 >.gpu-h7-pack/gpu.tar.xz
    du -sh .gpu-h7 .gpu-h7-pack/gpu.tar.xz
    exit 0
fi

STEPS=("$@")
[[ ${#STEPS[@]} -gt 0 ]] || STEPS=(fixtures layernorm llm hostile)
OUT=${OUT:-$ROOT/gpu-triton-out}
# Everything but the log, the table and one tarball stays outside $OUT (a device call brings back
# few files); the tarball is written on any exit, a timeout's included.
WORK=$(mktemp -d)/triton
mkdir -p "$WORK/fixtures" "$WORK/sessions"
trap 'tar -C "$(dirname "$WORK")" -czf "$OUT/triton-out.tgz" triton; exit 143' TERM INT
LOG=$OUT/gpu-triton.log
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
if [[ ! -x .gpu-h7/bin/kernelloop-runner && -f .gpu-h7-pack/gpu.tar.xz ]]; then
    xz -dc .gpu-h7-pack/gpu.tar.xz | tar -xf -
fi
BIN=$ROOT/.gpu-h7/bin
export LD_LIBRARY_PATH=$ROOT/.gpu-h7/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export KL_PYTHON=${KL_PYTHON:-python3} PYTHONUNBUFFERED=1 KL_SOURCE_DIR=$ROOT KL_RUNNER=$BIN/kernelloop-runner
export KL_TRITON_HELPER=$ROOT/python/kernelloop/triton_aot.py KL_REFERENCE_WORKER=$ROOT/python/kernelloop/torch_reference_worker.py
CLI=$BIN/kernelloop-cli
EX=resources/examples/layernorm_gelu_triton
FX=$WORK/fixtures
say() { echo "$*" | tee -a "$LOG"; }
table() { echo "$*" | tee -a "$SUMMARY" "$LOG"; }
has_step() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }

# One finished session of a store: best iteration, its median, % of copy, eager and torch.compile.
session_line() { # DB LABEL
    python3 - "$1" "$2" <<'PY'
import json, sqlite3, sys
db, label = sys.argv[1], sys.argv[2]
try:
    c = sqlite3.connect(db)
    sid = c.execute("select max(id) from sessions").fetchone()[0]
    rows = c.execute("select i.idx, c.proposer, r.median_us, r.pct_of_copy, r.timing_json, c.tunables_json "
                     "from iterations i join candidates c on c.id = i.candidate_id join results r on r.iteration_id = i.id "
                     "where i.session_id = ? and r.median_us is not null order by r.median_us", (sid,)).fetchall()
except Exception as error:  # noqa: BLE001 - the schema moved: say so, do not crash the step
    print("%-28s (no table: %s)" % (label, error)); sys.exit(0)
if not rows:
    print("%-28s no timed iteration" % label); sys.exit(0)
idx, who, med, pct, timing, tun = rows[0]
first = (json.loads(timing or "{}").get("cases") or [{}])[0]
eager = (first.get("eager") or {}).get("median_us")
comp = (first.get("torch_compile") or {}).get("median_us")
base = [r for r in rows if r[0] == 1]
print("%-28s best it %-3s %-8s %8.2f us %5.1f%% of copy | baseline %s | eager %s | torch.compile %s | %s" % (
    label, idx, who, med, pct or 0, "%.2f us" % base[0][2] if base else "-",
    "%.2f us" % eager if eager else "-", "%.2f us" % comp if comp else (first.get("torch_compile_error") or "-")[:60], tun))
PY
}

say "== versions ($(cat .gpu-h7/COMMIT 2>/dev/null))"
python3 -c "import sys, torch, triton; print(sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)" 2>&1 | tee -a "$LOG"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1 | tee -a "$LOG"

if has_step fixtures; then
    say "== helper fixtures"
    timeout 120 python3 - "$EX/baseline.py" "$FX" <<'EOF' 2>&1 | tee -a "$LOG"
import json, os, re, subprocess, sys, time
base = open(sys.argv[1]).read()
fx = sys.argv[2]
hinted = ["*fp16:16"] * 4 + ["i32:16"] * 3 + ["fp32"]
plain = ["*fp16"] * 4 + ["i32"] * 3 + ["fp32"]
line = next(i for i, l in enumerate(base.splitlines(), 1) if "@kl launch" in l)
DOT = """import triton
import triton.language as tl


@triton.jit
def big_dot(a, b, c, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None] * BLOCK
    cols = tl.arange(0, BLOCK)[None, :]
    x = tl.load(a + rows + cols)
    y = tl.load(b + rows + cols)
    tl.store(c + rows + cols, tl.dot(x, y))
"""
variants = {
    "ok": (base, {"BLOCK_N": 1024}, 4, 1),
    "ok_wide": (base, {"BLOCK_N": 4096}, 8, 2),
    "ok_plain": (base, {"BLOCK_N": 1024}, 4, 1, "ln_gelu", plain),
    "syntax": (base.replace("mask=cols < N, other=0.0)", "mask=cols < N other=0.0)"), {"BLOCK_N": 1024}, 4, 1),
    "undefined": (base.replace("rstd = 1.0 / tl.sqrt(var + eps)", "rstd = 1.0 / tl.sqrt(var + epsilon)"), {"BLOCK_N": 1024}, 4, 1),
    "type": (base.replace("tl.store(y_row + cols,", "tl.store(y_row + cols.to(tl.float32),"), {"BLOCK_N": 1024}, 4, 1),
    "not_pow2": (base, {"BLOCK_N": 1000}, 4, 1),
    "missing": (base, {"BLOCK_N": 1024}, 4, 1, "ln_gelu_missing"),
    "args": (base, {"BLOCK_N": 1024, "BLOCK_M": 2}, 4, 1),
    # Python that Triton's code generator has no rule for (a lambda): the "unsupported" category.
    "unsupported": (base.replace("rstd = 1.0 / tl.sqrt(var + eps)", "rstd = (lambda v: 1.0 / tl.sqrt(v))(var + eps)"),
                    {"BLOCK_N": 1024}, 4, 1),
    # A 256x256 fp16 tile product: its operands in shared memory pass the H200's 227 KiB ("resources").
    "resources": (DOT, {"BLOCK": 256}, 8, 3, "big_dot", ["*fp16:16", "*fp16:16", "*fp32:16"]),
}
only = os.environ.get("KL_FIXTURES", "").split()
for name, v in variants.items():
    if only and name not in only:
        continue
    src, cx, w, s = v[:4]
    kernel = v[4] if len(v) > 4 else "ln_gelu"
    sig = v[5] if len(v) > 5 else hinted
    req = {"source": src, "file": "candidate.py", "kernel": kernel, "signature": sig, "constexprs": cx,
           "num_warps": w, "num_stages": s, "capability": 90, "line": line}
    d = os.path.join(fx, name)
    os.makedirs(d, exist_ok=True)
    json.dump(req, open(os.path.join(d, "request.json"), "w"), indent=1)
    t = time.time()
    p = subprocess.run([sys.executable, "python/kernelloop/triton_aot.py", os.path.join(d, "request.json"), d],
                       capture_output=True, text=True, timeout=60)
    reply = json.load(open(os.path.join(d, "reply.json")))
    ptx = reply.get("ptx", "")
    vec = {k: len(re.findall(r"\b" + re.escape(k) + r"\b", ptx)) for k in
           ("ld.global.v4.b32", "ld.global.v2.b32", "ld.global.b16", "st.global.v4.b32", "st.global.v2.b32", "st.global.b16")}
    print("%-10s rc=%d %.2fs ok=%s exc=%s line=%s shared=%s spec=%s msg=%s" % (
        name, p.returncode, time.time() - t, reply.get("ok"), reply.get("exception"), reply.get("line"),
        (reply.get("metadata") or {}).get("shared"), reply.get("specialisation"),
        (reply.get("message") or "")[-200:].replace("\n", " | ")))
    if ptx:
        print("           ptx: %s" % " ".join("%s=%d" % kv for kv in vec.items() if kv[1]))
    if p.stderr.strip():
        open(os.path.join(d, "stderr.txt"), "w").write(p.stderr[-4000:])
EOF
fi

if has_step layernorm; then

    say "== check"
    timeout 60 "$CLI" check "$EX/problem.json" 2>&1 | tee "$FX/check_baseline.txt" | tail -12 | tee -a "$LOG"
    timeout 60 "$CLI" check "$EX/problem.json" --set BLOCK_N=1024 --set W=4 2>&1 > "$FX/check_1024.txt"
    timeout 60 "$CLI" check "$EX/problem.json" --json > "$FX/check_baseline.json" 2>>"$LOG"

    say "== evaluate (the naive baseline)"
    for sets in "${KL_TRITON_EVAL_SETS:-}"; do
        tag=$(echo "eval $sets" | tr ' =' '__')
        # shellcheck disable=SC2086
        timeout 120 "$CLI" evaluate --json --no-cache --db "$WORK/eval.db" $sets "$EX/problem.json" "$EX/baseline.py" \
            >"$FX/$tag.jsonl" 2>"$FX/$tag.err"
        say "evaluate $sets rc=$?: $(grep -m1 -o '"detail":"[^"]*"' "$FX/$tag.jsonl" | tail -1 | cut -c1-200)"
        tail -3 "$FX/$tag.err" | tee -a "$LOG"
    done

    say "== tuner from the naive Triton baseline"
    TDB=$WORK/tuner.db
    timeout 120 "$CLI" tune "$EX/problem.json" --db "$TDB" --runner "$BIN/kernelloop-runner" --proposer tuner \
        --budget 8 -k 4 --patience 0 --time 75s --metrics none --label "layernorm_gelu_triton tuner (H200)" \
        >"$WORK/tuner.txt" 2>&1
    say "tune rc=$?"; tail -12 "$WORK/tuner.txt" | tee -a "$LOG"
    timeout 60 "$CLI" history --db "$TDB" >"$WORK/tuner-history.txt" 2>&1
    timeout 60 "$CLI" export "$WORK/sessions/layernorm_gelu_triton-tuner-h200.klsession" --db "$TDB" >>"$LOG" 2>&1
    table "$(session_line "$TDB" "tuner alone")"
fi

if has_step llm; then
    say "== LLM + tuner (scripted model over loopback: an honest hybrid, the reply is ours)"
    KL_LLM_PROBLEM=$EX/problem.json KL_LLM_SCENARIO=$ROOT/tests/fixtures/llm/scenarios/layernorm_gelu_triton/scenario.json \
        KL_LLM_ROLES=single KL_LLM_PROPOSER=llm+tuner KL_LLM_K=1 KL_LLM_TUNER_ROUNDS=${KL_LLM_TUNER_ROUNDS:-6} \
        KL_LLM_BUDGET=${KL_LLM_BUDGET:-20} KL_LLM_DIR=triton/llm KL_LLM_TIMEOUT=${KL_LLM_TIMEOUT:-230} \
        BIN=$BIN OUT=$(dirname "$WORK") timeout $((${KL_LLM_TIMEOUT:-230} + 20)) scripts/gpu-llm.sh >>"$LOG" 2>&1
    say "gpu-llm rc=$?"; cat "$WORK/llm/llm-summary.txt" 2>/dev/null | tee -a "$LOG"
    [[ -f $WORK/llm/layernorm_gelu-llm-replay.klsession ]] &&
        cp "$WORK/llm/layernorm_gelu-llm-replay.klsession" "$WORK/sessions/layernorm_gelu_triton-llm-tuner-replay-h200.klsession"
    [[ -f $WORK/llm/layernorm_gelu-llm-replay.klsession ]] &&
        "$CLI" import "$WORK/llm/layernorm_gelu-llm-replay.klsession" --db "$WORK/llm-import.db" >/dev/null 2>&1 &&
        table "$(session_line "$WORK/llm-import.db" "llm+tuner (scripted model)")"
fi

if has_step hostile; then
    say "== hostile Triton candidates"
    # shellcheck disable=SC2086
    timeout 150 "$BIN/test_gpu_triton_hostile" -v1 ${KL_HOSTILE_ROWS:-} >"$WORK/test_gpu_triton_hostile.log" 2>&1
    say "test_gpu_triton_hostile rc=$?"
    grep -E " -> |^PASS|^FAIL|^SKIP|Totals|good.py:" "$WORK/test_gpu_triton_hostile.log" | cut -c1-220 | tee -a "$LOG"
    grep -E "Totals" "$WORK/test_gpu_triton_hostile.log" | sed 's/^/hostile triton: /' >>"$SUMMARY"
fi

if has_step kernelbench; then
    say "== KernelBench"
    for f in resources/kernelbench/*.py; do
        [[ -z ${KL_KB_ONLY:-} || " $KL_KB_ONLY " == *" $(basename "$f" .py) "* ]] || continue
        [[ -f $f ]] || continue
        name=$(basename "$f" .py)
        cand=resources/examples/kernelbench_triton/$name.py
        dir=$WORK/kernelbench/$name
        KDB=$WORK/kernelbench/$name.db
        mkdir -p "$(dirname "$dir")"
        [[ -f $cand ]] || { say "$name: no naive Triton candidate at $cand"; continue; }
        # The naive Triton kernel is the imported problem's baseline: iteration 1 is it, verified
        # against the PyTorch reference and timed beside eager and torch.compile; the tuner goes on.
        timeout 120 "$CLI" import-kernelbench "$f" -o "$dir" --baseline "$cand" --force >"$dir-import.txt" 2>&1
        say "$name: import rc=$? $(tail -1 "$dir-import.txt" | cut -c1-160)"
        [[ -f $dir/problem.json ]] || { say "$name: the import wrote no problem.json"; continue; }
        timeout 60 "$CLI" check "$dir/problem.json" >"$dir/check.txt" 2>&1
        say "$name: check rc=$?"
        timeout 150 "$CLI" tune "$dir/problem.json" --db "$KDB" --runner "$BIN/kernelloop-runner" \
            --proposer tuner --budget 4 -k 4 --patience 0 --time ${KL_KB_TIME:-45s} --metrics none --label "$name Triton tuner (H200)" \
            >"$dir/tune.txt" 2>&1
        say "$name: tune rc=$?"; tail -6 "$dir/tune.txt" | tee -a "$LOG"
        timeout 60 "$CLI" history --db "$KDB" >"$dir/history.txt" 2>&1
        timeout 60 "$CLI" export "$WORK/sessions/kernelbench-$name-triton-h200.klsession" --db "$KDB" >>"$LOG" 2>&1
        table "$(session_line "$KDB" "$name")"
    done
fi

tar -C "$(dirname "$WORK")" -czf "$OUT/triton-out.tgz" triton
say "== done"
cat "$SUMMARY"
