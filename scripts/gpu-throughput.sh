#!/usr/bin/env bash
# Runner throughput on a GPU machine (issue 14). Steps, in the order given (default: ab tune-ab, ~100 s):
#   ab         kl_runner_bench with the runner as before issue 14's second pass (KL_RUNNER_REFERENCE_CACHE_MB=0
#              KL_PROFILE_LEAN=0), as now, and as now with user replay (KL_PROFILE_REPLAY=user), adaptive
#              timing, profiled and not: per-phase figures side by side (KL_THROUGHPUT_PAGEABLE=1: also the
#              reference cache in pageable host memory);
#   tune-ab    kernelloop-cli tune (the built-in tuner, layernorm_gelu) with the runner before and now, each with
#              a fresh compile cache, now again with the warm cache, and now with user replay; KL_LOOP_TRACE=1
#              (where the wall time goes); every keep/revert and the kept best, "decisions unchanged" between
#              them and against the recorded run (keeps at 1, 4, 6; best CACHE=2 TANH=1 THREADS=256 VEC=8);
#   suites     test_gpu_examples (with the reference cache's GPU check) and test_gpu_hostile;
#   protocols  kl_runner_bench and the tuner under KERNELLOOP_TIMING=fixed and =adaptive (the 00:56Z section);
#   promising  the tuner as in tune-ab with --profile-candidates promising (fresh, then warm compile cache);
#   pool       a pool of two local runners on GPU 0 (KL_POOL_SHARE_GPUS=1) against one, candidates/min;
#   ahead      the tuner with fresh compile caches, --compile-ahead 0 against the default (the next round's
#              likely candidates compiled while this round's jobs run), profiling every candidate and
#              --profile-candidates promising, then a 12-round promising pair for the rate past start-up;
#              each pair's decisions compared (tune-X-noahead / tune-X-ahead).
# Uses the bundle of scripts/gpu-check.sh --bundle (.gpu/, or the pack in $KL_PACK, default
# .gpu-pack/gpu.tar.xz). Writes $OUT/throughput.txt (the tables) and $OUT/throughput-details.tgz.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-throughput-out}
mkdir -p "$OUT"
WORK=$(mktemp -d)
PACK=${KL_PACK:-.gpu-pack/gpu.tar.xz}
[[ -d "$PACK" ]] && PACK=$PACK/gpu.tar.xz # KL_PACK=.gpu-pack: the pack inside
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
STEPS=("$@")
[[ ${#STEPS[@]} -gt 0 ]] || STEPS=(ab tune-ab)
say "KernelLoop runner throughput  $(date -u +%Y-%m-%dT%H:%MZ)  commit $COMMIT  steps: ${STEPS[*]}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>/dev/null \
    | sed 's/^/device /' | tee -a "$TXT" || true
problem=resources/examples/layernorm_gelu/problem.json

BEFORE=(KL_RUNNER_REFERENCE_CACHE_MB=0 KL_PROFILE_LEAN=0)
TUNE_ARGS=() # more kernelloop-cli tune flags, for one step
bench() { # NAME ENV...: kl_runner_bench, adaptive timing, its own empty compile cache
    local name=$1; shift
    env "$@" KERNELLOOP_COMPILE_CACHE="$(mktemp -d)" timeout "${KL_BENCH_TIMEOUT:-90}" "$BIN/kl_runner_bench" --runner "$BIN/kernelloop-runner" \
        --source . --out "$WORK/bench-$name" --repeats 5 --sweep 12 >"$WORK/bench-$name.json" 2>"$WORK/bench-$name.log"
    say "runner_bench $name rc=$? ($(date -u +%H:%M:%SZ))"
}
tune() { # NAME CACHE_DIR ENV...: the tuner loop, budget ${KL_TUNE_ROUNDS:-6} rounds of 4, traced
    local name=$1 cache=$2; shift 2
    local db=$WORK/tune-$name.db start rc
    start=$(date +%s%N)
    env "$@" KL_LOOP_TRACE=1 KERNELLOOP_COMPILE_CACHE="$cache" timeout "${KL_TUNE_TIMEOUT:-60}" "$BIN/kernelloop-cli" tune "$problem" --db "$db" \
        --runner "$BIN/kernelloop-runner" --budget "${KL_TUNE_ROUNDS:-6}" -k 4 --patience 0 --metrics default --json \
        "${TUNE_ARGS[@]}" \
        >"$WORK/tune-$name.jsonl" 2>"$WORK/tune-$name.stderr"
    rc=$?
    echo $(( ($(date +%s%N) - start) / 1000000 )) >"$WORK/tune-$name.wall"
    say "tune $name rc=$rc in $(cat "$WORK/tune-$name.wall") ms"
}
for step in "${STEPS[@]}"; do
    case $step in
    ab)
        bench before "${BEFORE[@]}"
        bench after
        # Measured beside the default (kernel replay): auto range + user replay, the runner replaying each pass.
        bench after-user-replay KL_PROFILE_REPLAY=user
        [[ -n ${KL_THROUGHPUT_PAGEABLE:-} ]] && bench after-pageable KL_RUNNER_REFERENCE_CACHE_PAGEABLE=1
        ;;
    tune-ab)
        tune before "$(mktemp -d)" "${BEFORE[@]}"
        warm=$(mktemp -d)
        tune after "$warm"
        tune after-warm "$warm"
        tune after-user-replay "$(mktemp -d)" KL_PROFILE_REPLAY=user
        ;;
    promising)
        # Counters only for candidates within 5% of the incumbent (--profile-candidates promising): fresh
        # and warm compile caches; its decisions are compared with the "before"/"after" runs' above.
        TUNE_ARGS=(--profile-candidates promising)
        warm=$(mktemp -d)
        tune promising "$warm"
        tune promising-warm "$warm"
        TUNE_ARGS=()
        ;;
    ahead)
        for variant in all promising; do
            TUNE_ARGS=(--compile-ahead 0)
            [[ $variant == promising ]] && TUNE_ARGS+=(--profile-candidates promising)
            tune "$variant-noahead" "$(mktemp -d)"
            TUNE_ARGS=()
            [[ $variant == promising ]] && TUNE_ARGS+=(--profile-candidates promising)
            tune "$variant-ahead" "$(mktemp -d)"
        done
        saved=${KL_TUNE_ROUNDS:-6}
        KL_TUNE_ROUNDS=12
        TUNE_ARGS=(--profile-candidates promising --compile-ahead 0)
        tune "long-noahead" "$(mktemp -d)"
        TUNE_ARGS=(--profile-candidates promising)
        tune "long-ahead" "$(mktemp -d)"
        KL_TUNE_ROUNDS=$saved
        TUNE_ARGS=()
        ;;
    suites)
        for suite in test_gpu_examples test_gpu_hostile; do
            KL_RUNNER=$BIN/kernelloop-runner KL_SOURCE_DIR=$ROOT QT_QPA_PLATFORM=offscreen timeout 240 "$BIN/$suite" \
                >"$WORK/$suite.log" 2>&1
            rc=$?
            say "$suite rc=$rc: $(grep -E '^Totals' "$WORK/$suite.log" | tail -1)"
            grep -E '^(FAIL|XPASS)|reference:' "$WORK/$suite.log" | head -20 | sed 's/^/  /' | tee -a "$TXT"
        done
        ;;
    protocols)
        # runner_bench under each protocol, each with its own empty compile cache (the bench's second sweep
        # recompiles the first's tunables: those are hits); then the tuner once per protocol.
        for mode in fixed adaptive; do
            bench "$mode" KERNELLOOP_TIMING=$mode
        done
        cache=$(mktemp -d)
        for mode in fixed adaptive; do
            tune "$mode" "$cache" KERNELLOOP_TIMING=$mode
        done
        ;;
    pool)
        # Two local runners on GPU 0 against one (adaptive protocol, the same budget).
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
        ;;
    *) say "unknown step $step" ;;
    esac
done

python3 bench/gpu/throughput_summary.py "$WORK" >>"$TXT" 2>&1
sed -n '/^== summary/,$p' "$TXT"
tar -C "$WORK" -czf "$OUT/throughput-details.tgz" --exclude='*.cubin' --exclude='*.db*' . 2>/dev/null
echo "details: $OUT/throughput-details.tgz"
