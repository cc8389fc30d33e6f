#!/usr/bin/env bash
# The GPU check: run on a GPU machine from the repository root. It runs every GPU suite (and the
# runner's CPU-side suites), then the runner benchmarks, the tuner loop (gpu-tune.sh: PyTorch eager,
# the seed-style naive kernel, the baseline and the best side by side), real sol/stalls metric
# dumps for the findings fixtures ($OUT/findings-dumps/) and the LLM loop against the replay server
# (gpu-llm.sh, $OUT/llm/), writes logs under $OUT (default ./gpu-check-out) and prints a short
# table LAST, then one line of the suites' verdicts: passed, skipped (which) and failed (which). It
# exits non-zero when a suite failed (a non-zero exit, or no QtTest totals line); a suite that skipped
# everything is no failure. The other steps' results stay in the table.
#
#   scripts/gpu-check.sh             use a carried bundle in .gpu/ if there is one, else configure
#                                    and build here (needs the Debian packages of install-deps.sh)
#   scripts/gpu-check.sh --bundle [BUILD_DIR]
#                                    on a build machine: build the GPU targets without the GUI and
#                                    put stripped binaries and the shared libraries a bare CUDA
#                                    machine lacks (Qt Core/Test, ICU, muparser, ...) into .gpu/
#
# GPU machines of this project have the CUDA toolkit, ncu, Python with CuPy, PyTorch and Triton,
# but no Qt and none of our Debian packages: hence the bundle.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGETS=(kernelloop-runner kernelloop-cli test_verify_maths test_runner_no_device test_gpu_examples test_gpu_hostile test_gpu_triton_hostile test_gpu_lines test_code_listings test_triton_sandbox test_warm_python_tool kl_runner_bench bench_triton_sandbox)
# Built and carried when the tree has them; the steps that use them say so when they are missing.
OPTIONAL_TARGETS=(kl-llm-replay)

if [[ "${1:-}" == "--bundle" ]]; then
    BUILD=${2:-$ROOT/build-gpu}
    set -e
    [[ -f "$BUILD/CMakeCache.txt" ]] || cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKL_BUILD_GUI=OFF >/dev/null
    cmake --build "$BUILD" --target "${TARGETS[@]}" -j "$(nproc)"
    built=("${TARGETS[@]}")
    for t in "${OPTIONAL_TARGETS[@]}"; do
        if cmake --build "$BUILD" --target "$t" -j "$(nproc)"; then built+=("$t"); else echo "optional $t not built: left out of the bundle" >&2; fi
    done
    rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
    for t in "${built[@]}"; do
        f=$(find "$BUILD" -type f -name "$t" -perm -u+x | head -1)
        [[ -n "$f" ]] || { echo "missing $t" >&2; exit 1; }
        strip -o ".gpu/bin/$t" "$f"
    done
    # bubblewrap, for the sandbox of model-written Python (core/compile/confinement.h): the GPU image may
    # have none; the check uses the machine's own where there is one.
    if command -v bwrap >/dev/null; then cp "$(command -v bwrap)" .gpu/bin/bwrap; fi
    # Every shared library the binaries need except the C runtime and the CUDA toolkit's own.
    for f in .gpu/bin/*; do ldd "$f"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
        case "$(basename "$lib")" in
            libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
            libcuda.so*|libnvrtc*|libcupti*|libnvperf*|libnvidia*) ;;
            # libcurl and its TLS/auth stack (kernelloop-cli only): the GPU image has its own, and
            # carrying them would push the bundle past the 64 MiB a call may carry.
            libcurl*|libssl*|libcrypto*|libgnutls*|libnghttp2*|libidn2*|librtmp*|libssh*|libpsl*|libgssapi*|libkrb5*|libk5crypto*|libcom_err*|libldap*|liblber*|libsasl2*|libbrotli*|libunistring*|libhogweed*|libnettle*|libgmp*|libp11-kit*|libtasn1*|libkeyutils*|libffi*|libresolv*) ;;
            *) cp -L "$lib" .gpu/lib/ ;;
        esac
    done
    git rev-parse --short HEAD > .gpu/COMMIT 2>/dev/null || echo unknown > .gpu/COMMIT
    du -sh .gpu
    # Compressed for the trip (ICU's data alone is 31 MB; the device carries 64 MiB with the tree):
    # carry .gpu-pack and the check unpacks it.
    mkdir -p .gpu-pack && tar -C "$ROOT" -cf - .gpu | xz -T0 -6 >.gpu-pack/gpu.tar.xz
    du -sh .gpu-pack/gpu.tar.xz
    exit 0
fi

OUT=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUT"
LOG=$OUT/gpu-check.log
WORK=$(mktemp -d)
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

CUDA_LIBS=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
if [[ ! -x .gpu/bin/kernelloop-runner && -f .gpu-pack/gpu.tar.xz ]]; then
    xz -dc .gpu-pack/gpu.tar.xz | tar -xf - && say "unpacked the carried bundle .gpu-pack/gpu.tar.xz"
fi
if [[ -x .gpu/bin/kernelloop-runner ]]; then
    BIN=$ROOT/.gpu/bin
    export LD_LIBRARY_PATH=$ROOT/.gpu/lib:$CUDA_LIBS:${LD_LIBRARY_PATH:-}
    COMMIT=$(cat .gpu/COMMIT)
    say "using the carried bundle .gpu/ (commit $COMMIT)"
else
    BUILD=$ROOT/build-gpu
    say "no bundle: building in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKL_BUILD_GUI=OFF >>"$LOG" 2>&1 \
        && cmake --build "$BUILD" --target "${TARGETS[@]}" -j "$(nproc)" >>"$LOG" 2>&1 \
        || { say "build failed: see $LOG"; tail -30 "$LOG"; exit 1; }
    BIN=$WORK/bin && mkdir -p "$BIN"
    for t in "${TARGETS[@]}"; do ln -s "$(find "$BUILD" -type f -name "$t" -perm -u+x | head -1)" "$BIN/$t"; done
    for t in "${OPTIONAL_TARGETS[@]}"; do
        cmake --build "$BUILD" --target "$t" -j "$(nproc)" >>"$LOG" 2>&1 || { say "optional $t not built"; continue; }
        ln -s "$(find "$BUILD" -type f -name "$t" -perm -u+x | head -1)" "$BIN/$t"
    done
    export LD_LIBRARY_PATH=$CUDA_LIBS:${LD_LIBRARY_PATH:-}
    COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
fi
export KL_RUNNER=$BIN/kernelloop-runner KL_SOURCE_DIR=$ROOT QT_QPA_PLATFORM=offscreen
if ! command -v bwrap >/dev/null && [[ -x $BIN/bwrap ]]; then
    export KL_BWRAP=$BIN/bwrap
    say "bubblewrap: the carried $BIN/bwrap (the machine has none)"
fi
# Triton candidates and PyTorch references (test_gpu_triton_hostile): the machine's python3 has both.
# Every helper by its variable: the carried binaries are outside a build tree, so they never look in
# the source tree on their own (python_tool.cpp).
export KL_PYTHON=${KL_PYTHON:-python3} PYTHONUNBUFFERED=1 KL_TRITON_HELPER=$ROOT/python/kernelloop/triton_aot.py \
    KL_REFERENCE_WORKER=$ROOT/python/kernelloop/torch_reference_worker.py \
    KL_KERNELBENCH_HELPER=$ROOT/python/kernelloop/kernelbench_import.py \
    KL_INDUCTOR_HELPER=$ROOT/python/kernelloop/inductor_kernel.py
DATE=$(date -u +%Y-%m-%dT%H:%MZ)
say "date $DATE commit $COMMIT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >>"$LOG" 2>&1
missing=$(for f in "$BIN"/*; do ldd "$f" | grep "not found"; done | sort -u)
[[ -z "$missing" ]] || say "missing libraries: $missing"

# 1. Suites. One log for all; a QtTest "Totals:" line per suite.
SUITES=(test_verify_maths test_runner_no_device test_gpu_examples test_gpu_hostile test_gpu_triton_hostile test_gpu_lines test_code_listings test_triton_sandbox test_warm_python_tool)
# test_gpu_lines writes the PC-sampling goldens (reply, cubin, PTX per planted kernel) here; they are
# disassembled below into the SASS fixtures of tests/fixtures/lines/.
export KL_LINES_DUMP_DIR=$WORK/lines-dumps
mkdir -p "$KL_LINES_DUMP_DIR"
# Each suite's verdict as ctest gives it (tests/CMakeLists.txt): failed on a non-zero exit or without a
# totals line (it crashed or hung), skipped when it skipped everything, else passed. The check exits
# non-zero when a suite failed; a skip is no failure, but the last lines say which skipped.
SUITES_FAILED=()
SUITES_SKIPPED=()
for s in "${SUITES[@]}"; do
    say "== $s"
    start=$(date +%s%N)
    timeout 300 "$BIN/$s" >"$WORK/$s.log" 2>&1
    rc=$?
    cat "$WORK/$s.log" >>"$LOG"
    totals=$(grep -h '^Totals:' "$WORK/$s.log" | tail -1)
    if [[ $rc -ne 0 || -z $totals ]]; then
        verdict=FAILED
        SUITES_FAILED+=("$s")
    elif [[ $totals =~ ^Totals:\ [02]\ passed,\ 0\ failed,\ [1-9][0-9]*\ skipped ]]; then
        verdict=skipped
        SUITES_SKIPPED+=("$s")
    else
        verdict=passed
    fi
    printf '%s rc=%d %dms %s %s\n' "$s" "$rc" "$(( ($(date +%s%N) - start) / 1000000 ))" "$verdict" \
        "${totals:-(no totals line)}" >>"$WORK/suites.txt"
done

# 1b. SASS listings of the sampled cubins, for the CPU fixtures (this machine has nvdisasm and cuobjdump).
for cubin in "$KL_LINES_DUMP_DIR"/*.cubin; do
    [[ -f $cubin ]] || continue
    nvdisasm -g "$cubin" >"${cubin%.cubin}.nvdisasm.txt" 2>>"$LOG"
    cuobjdump -sass "$cubin" >"${cubin%.cubin}.cuobjdump.txt" 2>>"$LOG"
done
say "line dumps: $(ls "$KL_LINES_DUMP_DIR" 2>/dev/null | tr '\n' ' ')"

# 2. Benchmarks: the runner, then the same cubins through ncu and triton's do_bench.
say "== kl_runner_bench"
"$BIN/kl_runner_bench" --runner "$KL_RUNNER" --source "$ROOT" --out "$WORK/bench" >"$WORK/runner_bench.stdout" 2>>"$LOG"
say "runner bench rc=$?"
cp "$WORK/bench/runner_bench.json" "$OUT/" 2>/dev/null
METRICS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(sorted(d["configs"]["baseline"].get("cupti",{}).keys())))' "$WORK/bench/runner_bench.json" 2>/dev/null)
for config in baseline best; do
    launch=$WORK/bench/$config.launch.json
    [[ -f $launch ]] || continue
    say "== do_bench $config"
    PYTHONUNBUFFERED=1 python3 bench/gpu/drive_cubin.py "$launch" dobench >"$WORK/$config.dobench.json" 2>>"$LOG"
    say "== ncu $config"
    ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name layernorm_gelu --launch-skip 1 \
        --launch-count 5 --csv --print-units base python3 bench/gpu/drive_cubin.py "$launch" ncu \
        >"$WORK/$config.ncu_time.csv" 2>>"$LOG"
    if [[ -n "$METRICS" ]]; then
        ncu --clock-control none --metrics "$METRICS" --kernel-name layernorm_gelu --launch-skip 1 --launch-count 1 \
            --csv --print-units base python3 bench/gpu/drive_cubin.py "$launch" ncu \
            >"$WORK/$config.ncu_metrics.csv" 2>>"$LOG"
    fi
done
# 2b. The tuning loop: the built-in tuner from the naive baseline, then PyTorch eager / naive / best
# on the same tensors. Its files go with the details; the recorded session comes back whole.
say "== gpu-tune"
mkdir -p "$WORK/tune"
BIN=$BIN OUT=$WORK/tune scripts/gpu-tune.sh >"$WORK/tune.log" 2>&1
say "gpu-tune rc=$?"
rm -f "$WORK"/tune/tune-session.db*
cp "$WORK/tune/layernorm_gelu-h200.klsession" "$OUT/" 2>/dev/null
# 2b'. The bundled session with every metric (stall reasons, PC sampling per line): gpu-deep-session.sh.
say "== deep session"
OUT=$WORK/deep scripts/gpu-deep-session.sh >"$WORK/deep.log" 2>&1
say "$(grep -m1 '^deep session' "$WORK/deep.log")"
cp "$WORK/deep/layernorm_gelu-deep-h200.klsession" "$OUT/" 2>/dev/null

# 2c. Real metric dumps for the findings fixtures (tests/fixtures/findings/*-h200.json, same format):
# the naive baseline and the tuned best of the recorded session (THREADS=128 VEC=8 CACHE=4, fixed so
# the dumps match layernorm-tuned-best-default-h200.json) under the sol and stalls metric sets. One
# evaluate per set records the problem's baseline as iteration 1 and the configuration as
# iteration 2: four evaluations in all. Each dump is read back from the session store.
say "== findings dumps"
PROBLEM=resources/examples/layernorm_gelu/problem.json
mkdir -p "$WORK/dumps" "$OUT/findings-dumps"
: > "$WORK/dumps/written.txt"
for set in sol stalls; do
    db=$WORK/dumps/$set.db
    rm -f "$db" "$db-wal" "$db-shm"
    timeout 150 "$BIN/kernelloop-cli" evaluate "$PROBLEM" resources/examples/layernorm_gelu/baseline.cu \
        --set THREADS=128 --set VEC=8 --set CACHE=4 --metrics "$set" --db "$db" --runner "$KL_RUNNER" \
        --label "findings dump $set" --json >"$WORK/dumps/$set.jsonl" 2>"$WORK/dumps/$set.stderr"
    rc=$?
    say "evaluate --metrics $set rc=$rc"
    why=
    [[ $rc -eq 0 ]] || why="evaluate rc=$rc: $(grep -m1 '^error' "$WORK/dumps/$set.stderr" | cut -c1-90)"
    # Prints one word per dump for the table; the file is byte-for-byte what the fixtures hold.
    python3 - "$db" "$set" "$OUT/findings-dumps" "${DATE%%T*}" "$COMMIT" "$why" >>"$WORK/dumps/written.txt" 2>>"$LOG" <<'PY'
import json, os, sqlite3, sys

db, metric_set, outdir, date, commit, why = sys.argv[1:7]
if why:
    print(f"{metric_set}: {why};")
names = {1: "layernorm-naive", 2: "layernorm-tuned-best"}
what = {1: "the problem's baseline", 2: "the tuned best of resources/sessions/layernorm_gelu-h200.klsession"}
if not os.path.exists(db):
    print(f"{metric_set}: no store;")
    sys.exit(0)
try:
    rows = sqlite3.connect(db).execute(
        "SELECT i.idx, r.status, r.category, r.detail, r.device_json, r.timing_json, r.compile_json, r.profile_json "
        "FROM iterations i JOIN results r ON r.iteration_id = i.id "
        "WHERE i.session_id = (SELECT max(id) FROM sessions) AND i.idx IN (1, 2) ORDER BY i.idx").fetchall()
except sqlite3.Error as e:
    print(f"{metric_set}: store unreadable ({e});")
    sys.exit(0)
if not rows:
    print(f"{metric_set}: no results;")
for idx, status, category, detail, device, timing, compiled, profile in rows:
    tag = f"{names[idx][len('layernorm-'):]}-{metric_set}"
    if category != "passed" or not timing or not profile:
        print(f"{tag}:{category}(not written)")
        continue
    device, timing, compiled, profile = (json.loads(v) for v in (device, timing, compiled, profile))
    for case in timing.get("cases", []):
        for key in ("baseline", "candidate", "copy"):
            if isinstance(case.get(key), dict):
                case[key]["samples_us"] = []
    tunables = dict(sorted((compiled.get("tunables") or {}).items()))
    dump = {
        "_comment": f"Recorded on an {device.get('name', 'unknown GPU')} ({date}, commit {commit}): iteration {idx} "
                    f"({what[idx]}) of `kernelloop-cli evaluate --metrics {metric_set}` in scripts/gpu-check.sh, "
                    f"tunables {tunables}; timing samples dropped to keep the file small.",
        "v": 1, "id": str(idx), "type": "result", "status": status, "category": category, "detail": detail,
        "device": device, "static": compiled.get("telemetry"), "verification": None, "timing": timing,
        "profile": profile, "pc_sampling": None, "phases_ms": {},
    }
    with open(os.path.join(outdir, f"{names[idx]}-{metric_set}-h200.json"), "w") as f:
        f.write(json.dumps(dump, indent=1))
    state = profile.get("status")
    kernels = profile.get("kernels") or [{}]
    print(f"{tag}" + ("" if state == "ok" else f"(profile {state})")
          + f"[{len(kernels[0].get('metrics') or {})} metrics]")
PY
    rm -f "$db" "$db-wal" "$db-shm"
done
DUMPS_LINE="metric dumps (evaluate --metrics sol|stalls) -> findings-dumps/: $(tr '\n' ' ' <"$WORK/dumps/written.txt")"
say "$DUMPS_LINE"

# 2d. The LLM proposer's loop against the local replay server (scripts/gpu-llm.sh). It fails soft: a
# missing server, scenario or CLI option is reported in its summary and the check goes on.
say "== gpu-llm"
BIN=$BIN OUT=$OUT KL_LLM_TIMEOUT=${KL_LLM_TIMEOUT:-240} timeout 300 scripts/gpu-llm.sh >"$WORK/llm.log" 2>&1
say "gpu-llm rc=$?"
mkdir -p "$OUT/llm"
[[ -s $OUT/llm/llm-summary.txt ]] || echo "LLM loop: no summary (gpu-llm.sh rc above; see gpu-check-details.tgz llm.log)" >"$OUT/llm/llm-summary.txt"

# 2e. A problem with two main sizes (softmax_bf16: 16384x2048 and 2048x16384): one evaluation of its
# baseline, then `show` prints each main size's own median, p20, p80, GB/s, % of copy and speedup, and
# the aggregate speedup as a geometric mean over the sizes (issue 12, "Honest numbers").
say "== multi-size"
MS=$WORK/multisize && mkdir -p "$MS"
timeout 150 "$BIN/kernelloop-cli" evaluate resources/examples/softmax_bf16/problem.json \
    resources/examples/softmax_bf16/baseline.cu --db "$MS/ms.db" --runner "$KL_RUNNER" \
    --label "two main sizes" >"$MS/evaluate.txt" 2>&1
say "evaluate softmax_bf16 rc=$?"
"$BIN/kernelloop-cli" show 1 --db "$MS/ms.db" >"$MS/show.txt" 2>&1
"$BIN/kernelloop-cli" history --db "$MS/ms.db" >"$MS/history.txt" 2>&1
{
    echo "multi-size (softmax_bf16 baseline, kernelloop-cli evaluate, then show 1):"
    grep -iE "^ *(size|[0-9]+x[0-9]+)|geometric|median" "$MS/show.txt" | head -12 | sed 's/^/  /'
} >"$WORK/multisize-summary.txt"
cat "$WORK/multisize-summary.txt" >>"$LOG"

# 2e'. The line profiler through the CLI: the bundled baseline under --metrics lines, then show --lines
# (the hottest source lines with their warp states, from the stored PC samples). The table's
# PC-sampling row reads the phases of its --json lines and the samples in $MS/lines.db.
say "== lines"
timeout 150 "$BIN/kernelloop-cli" evaluate resources/examples/layernorm_gelu/problem.json \
    resources/examples/layernorm_gelu/baseline.cu --metrics lines --db "$MS/lines.db" --runner "$KL_RUNNER" \
    --label "line profile" --json >"$MS/lines-evaluate.jsonl" 2>"$MS/lines-evaluate.txt"
say "evaluate --metrics lines rc=$?"
"$BIN/kernelloop-cli" show 1 --lines --db "$MS/lines.db" >"$MS/show-lines.txt" 2>&1
{
    echo "line profile (layernorm_gelu baseline, evaluate --metrics lines, then show 1 --lines):"
    head -12 "$MS/show-lines.txt" | sed 's/^/  /'
    grep -m1 "^code:" "$MS/show-lines.txt" | sed 's/^/  /' || echo "  (show --lines printed no code: line)"
} >>"$WORK/multisize-summary.txt"

# 2f. The LLM loop against an endpoint that fails twice (HTTP 500, then a body that is not JSON) and then
# answers: with patience 2 it must run to its budget; the faults are failed proposer rounds, not rounds
# without gain. Its registers/occupancy in the first prompt show the compiler feedback reaching the model.
say "== gpu-llm with endpoint faults"
BIN=$BIN OUT=$OUT KL_LLM_DIR=llm-faults KL_LLM_FAIL_FIRST=2 KL_LLM_PATIENCE=2 KL_LLM_BUDGET=4 \
    KL_LLM_TIMEOUT=${KL_LLM_TIMEOUT:-240} timeout 300 scripts/gpu-llm.sh >"$WORK/llm-faults.log" 2>&1
say "gpu-llm (faults) rc=$?"
[[ -s $OUT/llm-faults/llm-summary.txt ]] || echo "LLM loop with faults: no summary" >"$OUT/llm-faults/llm-summary.txt"
# The compiler feedback as the model saw it (registers 0 before NVRTC's --no-cache).
if [[ -f $OUT/llm-faults/layernorm_gelu-llm-replay.klsession ]]; then
    "$BIN/kernelloop-cli" show 2 --prompts --db "$OUT/llm-faults/layernorm_gelu-llm-replay.klsession" 2>&1 \
        | grep -m4 -iE "registers|occupancy|primary stall" | sed 's/^/  prompt: /' >>"$OUT/llm-faults/llm-summary.txt"
fi

# The device hands back only a few files per run: the dumps and the LLM loop's files travel in the tarball.
cp -r "$OUT/findings-dumps" "$OUT/llm" "$OUT/llm-faults" "$WORK/" 2>/dev/null
tar -C "$WORK" -czf "$OUT/gpu-check-details.tgz" --exclude='*.cubin' . 2>/dev/null
# The PC-sampling goldens with their cubins (small), for tests/fixtures/lines/.
tar -C "$WORK" -czf "$OUT/lines-dumps.tgz" lines-dumps 2>/dev/null
cp "$OUT/llm/llm-summary.txt" "$WORK/llm-summary.txt" 2>/dev/null
cp "$OUT/llm-faults/llm-summary.txt" "$WORK/llm-faults-summary.txt" 2>/dev/null
rm -rf "$OUT/findings-dumps" "$OUT/llm" "$OUT/llm-faults"
mkdir -p "$OUT/llm" && cp "$WORK/llm-summary.txt" "$OUT/llm/llm-summary.txt" 2>/dev/null

# 3. The table, last.
python3 bench/gpu/summarize.py "$WORK" "$DATE" "$COMMIT" | tee "$OUT/table.txt"
{
    cat "$WORK/tune/tune-table.txt" 2>/dev/null
    printf '\n%s\n\n' "$DUMPS_LINE"
    cat "$OUT/llm/llm-summary.txt"
    echo
    cat "$WORK/llm-faults-summary.txt" 2>/dev/null
    echo
    cat "$WORK/multisize-summary.txt" 2>/dev/null
} | tee -a "$OUT/table.txt"

# The exit status: the GPU suites' verdicts (the table above keeps every step's own).
{
    echo
    echo "suites: $(( ${#SUITES[@]} - ${#SUITES_FAILED[@]} - ${#SUITES_SKIPPED[@]} )) passed," \
        "${#SUITES_SKIPPED[@]} skipped${SUITES_SKIPPED[*]:+ (${SUITES_SKIPPED[*]})}," \
        "${#SUITES_FAILED[@]} failed${SUITES_FAILED[*]:+ (${SUITES_FAILED[*]})}"
} | tee -a "$OUT/table.txt" "$LOG"
if (( ${#SUITES_FAILED[@]} > 0 )); then
    echo "gpu-check: FAILED: ${SUITES_FAILED[*]} (logs: $LOG)"
    exit 1
fi
exit 0
