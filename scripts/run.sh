#!/usr/bin/env bash
# Sets up, builds and starts KernelLoop on the bundled LayerNorm+GELU example.
#   scripts/run.sh              the GUI
#   scripts/run.sh --headless   the same example through kernelloop-cli (no display needed): the
#                               static report, then the tuner and LLM sessions recorded on an H200
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh dev
example=resources/examples/layernorm_gelu/problem.json
cli=./build/dev/cli/kernelloop-cli
if [ "${1:-}" = "--headless" ] || [ ! -x build/dev/app/kernelloop ]; then
    "$cli" check "$example"
    db=$(mktemp -d)/kernelloop.db
    "$cli" import resources/sessions/layernorm_gelu-h200.klsession --db "$db"
    "$cli" history --db "$db"
    # The LLM proposer's loop, recorded on the H200 against the replay server: its hypothesis log.
    "$cli" import resources/sessions/layernorm_gelu-llm-replay-h200.klsession --db "$db"
    "$cli" history --hypotheses --db "$db"
    echo "more: $cli show ITERATION --db $db   (on a GPU machine: $cli tune $example)"
else
    exec ./build/dev/app/kernelloop "$example"
fi
