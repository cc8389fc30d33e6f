#!/usr/bin/env bash
# The sandbox for model-written Python on a GPU machine with real Triton: the hostile candidates
# (test_triton_sandbox), the warm server's protections (test_warm_python_tool), the Triton hostile
# suite through the runner (test_gpu_triton_hostile, every compile in the sandbox), and what the sandbox
# costs a compile (bench_triton_sandbox; with .gpu-old/ holding an earlier commit's triton_aot.py and
# warm_tool.py, the same compile through that helper: the figure before the sandbox).
#   on the build machine: scripts/gpu-check.sh --bundle build/ci
#   on the GPU machine (carry .gpu-pack and .gpu-old): scripts/gpu-sandbox-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-sandbox-out}
mkdir -p "$OUT"
[[ -x .gpu/bin/kernelloop-runner ]] || xz -dc .gpu-pack/gpu.tar.xz | tar -xf -
BIN=$ROOT/.gpu/bin
export LD_LIBRARY_PATH=$ROOT/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
if ! command -v bwrap >/dev/null; then export KL_BWRAP=$BIN/bwrap; fi
export KL_SOURCE_DIR=$ROOT KL_RUNNER=$BIN/kernelloop-runner QT_QPA_PLATFORM=offscreen KL_PYTHON=python3 \
    PYTHONUNBUFFERED=1 KL_TRITON_HELPER=$ROOT/python/kernelloop/triton_aot.py \
    KL_REFERENCE_WORKER=$ROOT/python/kernelloop/torch_reference_worker.py \
    KL_KERNELBENCH_HELPER=$ROOT/python/kernelloop/kernelbench_import.py \
    KL_INDUCTOR_HELPER=$ROOT/python/kernelloop/inductor_kernel.py
{
    echo "date $(date -u +%Y-%m-%dT%H:%MZ) bundle $(cat .gpu/COMMIT)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    python3 -c 'import sys, triton, torch; print("python", sys.version.split()[0], "triton", triton.__version__, "torch", torch.__version__)'
    echo "bubblewrap: ${KL_BWRAP:-$(command -v bwrap)} $("${KL_BWRAP:-bwrap}" --version)"
    "${KL_BWRAP:-bwrap}" --unshare-all --cap-drop ALL --ro-bind / / --dev /dev --proc /proc true && echo "sandbox: works" \
        || echo "sandbox: bubblewrap cannot make one here"
} | tee "$OUT/sandbox-check.txt"
# KL_SANDBOX_SUITES="" skips the suites (the latency figure only).
for s in ${KL_SANDBOX_SUITES-test_triton_sandbox test_warm_python_tool test_gpu_triton_hostile}; do
    start=$(date +%s)
    timeout 400 "$BIN/$s" >"$OUT/$s.log" 2>&1
    echo "$s rc=$? $(( $(date +%s) - start ))s $(grep -h '^Totals:' "$OUT/$s.log" | tail -1)" | tee -a "$OUT/sandbox-check.txt"
    grep -E '^(FAIL|SKIP)' "$OUT/$s.log" | head -20 | tee -a "$OUT/sandbox-check.txt"
done
for problem in resources/examples/layernorm_gelu_triton/problem.json; do
    "$BIN/bench_triton_sandbox" "$problem" "${KL_SANDBOX_N:-20}" "$OUT/requests.jsonl" 2>&1 | tee -a "$OUT/sandbox-check.txt"
    if [[ -f .gpu-old/triton_aot.py && -f "$OUT/requests.jsonl" ]]; then
        echo "before the sandbox (.gpu-old): $(python3 bench/compile/warm_latency_before.py .gpu-old "$OUT/requests.jsonl" "${KL_SANDBOX_N:-20}")" \
            | tee -a "$OUT/sandbox-check.txt"
    fi
done
