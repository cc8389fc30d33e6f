# Sourced by the GPU scripts run after scripts/gpu-check.sh --bundle: unpacks a carried .gpu-pack, sets BIN
# to the carried binaries (else build-gpu's), the library path, and the helpers' variables. Needs ROOT.
CUDA_LIBS=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
if [[ ! -x "$ROOT/.gpu/bin/kernelloop-runner" && -f "$ROOT/.gpu-pack/gpu.tar.xz" ]]; then
    xz -dc "$ROOT/.gpu-pack/gpu.tar.xz" | tar -C "$ROOT" -xf -
fi
if [[ -x "$ROOT/.gpu/bin/kernelloop-runner" ]]; then
    BIN=$ROOT/.gpu/bin
    export LD_LIBRARY_PATH=$ROOT/.gpu/lib:$CUDA_LIBS:${LD_LIBRARY_PATH:-}
else
    BIN=${BIN:-$ROOT/build-gpu/bin}
    [[ -x "$BIN/kernelloop-cli" ]] || BIN=$(dirname "$(find "$ROOT/build-gpu" -type f -name kernelloop-cli -perm -u+x 2>/dev/null | head -1)")
    export LD_LIBRARY_PATH=$CUDA_LIBS:${LD_LIBRARY_PATH:-}
fi
export KL_RUNNER=$BIN/kernelloop-runner KL_SOURCE_DIR=$ROOT KL_PYTHON=${KL_PYTHON:-python3} PYTHONUNBUFFERED=1 \
    KL_TRITON_HELPER=$ROOT/python/kernelloop/triton_aot.py \
    KL_REFERENCE_WORKER=$ROOT/python/kernelloop/torch_reference_worker.py \
    KL_KERNELBENCH_HELPER=$ROOT/python/kernelloop/kernelbench_import.py \
    KL_INDUCTOR_HELPER=$ROOT/python/kernelloop/inductor_kernel.py
