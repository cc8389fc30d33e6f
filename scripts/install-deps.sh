#!/usr/bin/env bash
# Installs the Debian packages KernelLoop needs. Idempotent: safe to run again.
#   scripts/install-deps.sh build   what configuring and building every target needs (scripts/run.sh)
#   scripts/install-deps.sh         that, and what the tests run (scripts/test.sh)
set -euo pipefail
what="${1:-test}"

build_packages=(
    cmake ninja-build g++ pkg-config git
    qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libqscintilla2-qt6-dev qt6-tools-dev qt6-l10n-tools qt6-tools-dev-tools
    libgl-dev
    nlohmann-json3-dev libcurl4-openssl-dev libsqlite3-dev libmuparser-dev libdtl-dev libcli11-dev
    libcpp-httplib-dev qtkeychain-qt6-dev libkainjow-mustache-dev zlib1g-dev
    # The sandbox for model-written Python (core/compile/confinement.h): without it Triton candidates are refused.
    bubblewrap
)
test_packages=(
    sqlite3 appstream desktop-file-utils
    # format_check runs the committed .clang-format with version 14 (tests/format_check.cmake)
    clang-format
    # test_torch_worker runs the real PyTorch reference worker under Debian's CPU PyTorch (/usr/bin/python3)
    python3-torch
    # The runner pool's tests start an sshd on loopback and a one-node Slurm cluster (tests/pool).
    openssh-client openssh-server slurmctld slurmd slurm-client munge
    # packaging_installed_deb: cpack's Depends (dpkg-shlibdeps, file), lintian, and strace to prove
    # that the installed programs never read the source tree.
    dpkg-dev file lintian strace
)
case "$what" in
    build) packages=("${build_packages[@]}") ;;
    test) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
    *)
        echo "usage: $0 [build|test]" >&2
        exit 2
        ;;
esac

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

if [ ! -d /usr/local/cuda/include ]; then
    echo "install-deps: warning: the CUDA 13 toolkit is expected in /usr/local/cuda (NVRTC, CUPTI headers)" >&2
fi
