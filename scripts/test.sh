#!/usr/bin/env bash
# Sets up, builds and runs every test (the README's test command; .ci/run calls it).
# Warnings are errors here. GPU suites skip with a reason where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh ci
ctest --preset ci -j "$(nproc)" --timeout 600
