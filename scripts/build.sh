#!/usr/bin/env bash
# Installs the Debian packages, configures and builds.
#   scripts/build.sh [PRESET]            every target (dev by default), with the packages the tests need
#   scripts/build.sh PRESET TARGET...    only those targets (and what they link), with the build packages
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
shift || true
if [ $# -gt 0 ]; then
    ./scripts/install-deps.sh build
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j "$(nproc)" --target "$@"
else
    ./scripts/install-deps.sh
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j "$(nproc)"
fi
