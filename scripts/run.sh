#!/usr/bin/env bash
# Sets up, builds and starts KernelLoop on the bundled LayerNorm+GELU example.
#   scripts/run.sh              the GUI
#   scripts/run.sh --headless   the same example through kernelloop-cli (no display needed): the
#                               static report, then the tuner and LLM sessions recorded on an H200
#
# It builds only the three programs it runs, in the ci preset's tree that ./scripts/test.sh builds
# everything in: the test command then reuses every object built here (issue 28, first contact).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh ci kernelloop kernelloop-cli kernelloop-runner
example=resources/examples/layernorm_gelu/problem.json
cli=./build/ci/cli/kernelloop-cli
if [ "${1:-}" = "--headless" ] || [ ! -x build/ci/app/kernelloop ]; then
    "$cli" check "$example"
    db=$(mktemp -d)/kernelloop.db
    "$cli" import resources/sessions/layernorm_gelu-h200.klsession --db "$db"
    "$cli" history --db "$db"
    # The LLM proposer's loop, recorded on the H200 against the replay server: its hypothesis log.
    "$cli" import resources/sessions/layernorm_gelu-llm-replay-h200.klsession --db "$db"
    "$cli" history --hypotheses --db "$db"
    echo "more: $cli show ITERATION --db $db   (on a GPU machine: $cli tune $example)"
else
    exec ./build/ci/app/kernelloop "$example"
fi
