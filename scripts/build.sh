#!/usr/bin/env bash
# Installs the Debian packages, configures and builds. Usage: scripts/build.sh [PRESET] (dev by default).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
./scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
