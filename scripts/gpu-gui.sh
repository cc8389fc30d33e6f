#!/usr/bin/env bash
# The GUI on a GPU machine: the window, offscreen, runs one review-mode session of the bundled example
# against the real runner (tests/gui/test_gui_h200_session.cpp: accept, reject with a reason, steer,
# edit, accept, finish; the LLM is the loopback replay server) and saves screenshots of the live
# charts, the review panel and the transcript.
#
#   scripts/gpu-gui.sh --bundle [BUILD_DIR]   on the build machine (default build dir: build/ci): the
#       test, the runner, every shared library they and Qt's offscreen platform plugin need that a
#       bare CUDA machine lacks, the DejaVu fonts and a fontconfig setup into .gpu-gui/, packed as
#       .gpu-gui-pack/gui.tar.xz (carry [".gpu-gui-pack"]; it is standalone, no .gpu-pack needed).
#   scripts/gpu-gui.sh --check                on the build machine: the bundle, unpacked into a
#       temporary folder, must resolve every library from itself or the allowed system set, and its
#       fontconfig must see only its own fonts; then the session runs from it against the runner
#       double with nothing but the bundle's environment (LD_LIBRARY_PATH, QT_PLUGIN_PATH,
#       QT_QPA_PLATFORM, FONTCONFIG_FILE).
#   scripts/gpu-gui.sh                        on the GPU machine: unpack, run, write $OUT/h200-*.png,
#       $OUT/h200-session.txt (each iteration's figures) and $OUT/gpu-gui.log; prints a summary last.
#
# GPU machines of this project have the CUDA toolkit and driver but no Qt, no X and no fonts.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
PACK=.gpu-gui-pack/gui.tar.xz
TARGETS=(test_gui_h200_session kernelloop-runner)
# What a CUDA machine is trusted to have: the C runtime, the CUDA toolkit's own libraries, and libcurl
# with its TLS/auth stack (as scripts/gpu-check.sh: the image has its own, and ours would not fit).
system_library() {
    case "$1" in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) return 0 ;;
        libcuda.so*|libnvrtc*|libcupti*|libnvperf*|libnvidia*) return 0 ;;
        libcurl*|libssl*|libcrypto*|libgnutls*|libnghttp2*|libidn2*|librtmp*|libssh*|libpsl*|libgssapi*|libkrb5*|libk5crypto*|libcom_err*|libldap*|liblber*|libsasl2*|libunistring*|libhogweed*|libnettle*|libgmp*|libp11-kit*|libtasn1*|libkeyutils*|libffi*|libresolv*) return 0 ;;
        linux-vdso*) return 0 ;;
    esac
    return 1
}

# The environment the bundle needs, and nothing else from the build machine.
bundle_env() { # DIR
    local dir=$1
    mkdir -p "$dir/fontcache"
    sed "s#@BUNDLE@#$dir#g" "$dir/fonts.conf.in" >"$dir/fonts.conf"
    echo "LD_LIBRARY_PATH=$dir/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64 QT_PLUGIN_PATH=$dir/plugins" \
        "QT_QPA_PLATFORM=offscreen FONTCONFIG_FILE=$dir/fonts.conf XDG_RUNTIME_DIR=$dir/run HOME=$dir/home"
}

if [[ "${1:-}" == "--bundle" ]]; then
    BUILD=${2:-$ROOT/build/ci}
    set -e
    cmake --build "$BUILD" --target "${TARGETS[@]}" -j2
    rm -rf .gpu-gui && mkdir -p .gpu-gui/bin .gpu-gui/lib .gpu-gui/plugins/platforms .gpu-gui/fonts
    for t in "${TARGETS[@]}"; do
        f=$(find "$BUILD" -type f -name "$t" -perm -u+x | head -1)
        [[ -n "$f" ]] || { echo "missing $t" >&2; exit 1; }
        strip -o ".gpu-gui/bin/$t" "$f"
    done
    plugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
    cp -L "$plugins/platforms/libqoffscreen.so" .gpu-gui/plugins/platforms/
    for f in .gpu-gui/bin/* .gpu-gui/plugins/platforms/*; do ldd "$f"; done | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
        system_library "$(basename "$lib")" || cp -L "$lib" .gpu-gui/lib/
    done
    strip --strip-unneeded .gpu-gui/lib/*.so* .gpu-gui/plugins/platforms/*.so 2>/dev/null || true
    cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf \
        /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf /usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf .gpu-gui/fonts/
    cat >.gpu-gui/fonts.conf.in <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>@BUNDLE@/fonts</dir>
  <cachedir>@BUNDLE@/fontcache</cachedir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
</fontconfig>
EOF
    git rev-parse --short HEAD >.gpu-gui/COMMIT 2>/dev/null || echo unknown >.gpu-gui/COMMIT
    du -sh .gpu-gui
    mkdir -p .gpu-gui-pack && tar -C "$ROOT" -cf - .gpu-gui | xz -T0 -6 >"$PACK"
    du -sh "$PACK"
    exit 0
fi

if [[ "${1:-}" == "--check" ]]; then
    [[ -f $PACK ]] || { echo "no $PACK: run --bundle first" >&2; exit 1; }
    T=$(mktemp -d)
    trap 'rm -rf "$T"' EXIT
    xz -dc "$PACK" | tar -C "$T" -xf -
    B=$T/.gpu-gui
    ENVS=$(bundle_env "$B")
    bad=0
    for f in "$B"/bin/* "$B"/plugins/platforms/*; do
        while read -r name path; do
            [[ $path == "$B"/* ]] && continue
            system_library "$name" && continue
            echo "not from the bundle: $(basename "$f") needs $name ($path)"
            bad=1
        done < <(env -i PATH=/usr/bin:/bin $ENVS ldd "$f" | awk '/=>/{print $1, $3}')
    done
    fonts=$(env -i PATH=/usr/bin:/bin $ENVS fc-list : file 2>/dev/null)
    if [[ -z $fonts ]] || grep -qv "^$B/fonts/" <<<"$fonts"; then
        echo "fontconfig does not see exactly the bundle's fonts: ${fonts:-none}"
        bad=1
    fi
    [[ $bad -eq 0 ]] || exit 1
    echo "libraries and fonts resolve from the bundle"
    mkdir -p "$T/shots"
    env -i PATH=/usr/bin:/bin $ENVS KL_SOURCE_DIR="$ROOT" KL_H200_SCREENSHOTS="$T/shots" \
        timeout 170 "$B/bin/test_gui_h200_session" || exit 1
    ls "$T/shots"
    exit 0
fi

# On the GPU machine.
OUT=${OUT:-$ROOT/gpu-gui-out}
mkdir -p "$OUT"
LOG=$OUT/gpu-gui.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
[[ -x .gpu-gui/bin/test_gui_h200_session ]] || xz -dc "$PACK" | tar -xf - || { say "no bundle ($PACK)"; exit 1; }
B=$ROOT/.gpu-gui
ENVS=$(bundle_env "$B")
COMMIT=$(cat "$B/COMMIT")
DATE=$(date -u +%Y-%m-%dT%H:%MZ)
say "date $DATE commit $COMMIT (bundle)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader >>"$LOG" 2>&1
missing=$(for f in "$B"/bin/* "$B"/plugins/platforms/*; do env $ENVS ldd "$f" | grep "not found"; done | sort -u)
[[ -z $missing ]] || say "missing libraries: $missing"
start=$(date +%s)
# shellcheck disable=SC2086 # ENVS is a list of NAME=VALUE words
env $ENVS KL_SOURCE_DIR="$ROOT" KL_H200_RUNNER="$B/bin/kernelloop-runner" KL_H200_SCREENSHOTS="$OUT" \
    KL_H200_METRICS="${KL_H200_METRICS:-stalls}" timeout "${KL_GUI_TIMEOUT:-240}" "$B/bin/test_gui_h200_session" \
    -maxwarnings 0 >>"$LOG" 2>&1
rc=$?
say "test_gui_h200_session rc=$rc in $(($(date +%s) - start)) s"
{
    echo "GUI review session on the GPU ($DATE, commit $COMMIT):"
    grep -hE '^(PASS|FAIL|Totals)' "$LOG" | sed 's/^/  /'
    sed 's/^/  /' "$OUT/h200-session.txt" 2>/dev/null
    ls "$OUT"/*.png 2>/dev/null | xargs -r -n1 basename | sed 's/^/  screenshot /'
} | tee -a "$LOG"
exit $rc
