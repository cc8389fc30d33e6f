#!/usr/bin/env bash
# Sets up, builds and starts KernelLoop on the bundled LayerNorm+GELU example.
#   scripts/run.sh              the GUI
#   scripts/run.sh --headless   the same example through kernelloop-cli (no display needed)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh dev
example=resources/examples/layernorm_gelu/problem.json
if [ "${1:-}" = "--headless" ] || [ ! -x build/dev/app/kernelloop ]; then
    ./build/dev/cli/kernelloop-cli check "$example"
    if ./build/dev/cli/kernelloop-cli help-gpu >/dev/null 2>&1; then :; fi
else
    exec ./build/dev/app/kernelloop "$example"
fi
