#!/usr/bin/env bash
# The .deb as a user gets it (issue 30): packs the build tree with cpack (no second build), checks it
# with lintian and its Depends against the binaries' libraries, unpacks it into a throwaway prefix
# (dpkg-deb -x) and runs the installed programs there on the installed examples and sessions: the
# CLI's offline commands (check, import, history, show, import-kernelbench under Debian's CPU
# PyTorch, llm-check against the replay server on loopback), the GUI's --help/--version without a
# display and its offscreen --screenshot. Every installed program runs under strace: a path of the
# source or build tree in any file call fails the test, so a packaging gap cannot be hidden by the
# tree the package was built from.
#
#   test_installed_package.sh SOURCE_DIR BUILD_DIR REPLAY_SERVER [DEB]
# DEB: test this package instead of packing BUILD_DIR (e.g. an older one, to see it fail).
# Exit 0 when every check passed; 1 with one "FAIL:" line per failed check. KL_PACKAGE_TEST_KEEP=1
# keeps the folder with the package, the unpacked prefix, every output and trace.
set -uo pipefail
source_dir=$(realpath "$1")
build_dir=$(realpath "$2")
replay=$3
deb=${4:-}

work=$(mktemp -d "/tmp/kl-installed.XXXXXX")
replay_pid=""
cleanup() {
    if [ -n "$replay_pid" ]; then kill "$replay_pid" 2>/dev/null; fi
    if [ -n "${KL_PACKAGE_TEST_KEEP:-}" ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
step() { echo "== $*"; }

# --- the package ---------------------------------------------------------------------------------
if [ -z "$deb" ]; then
    step "cpack -G DEB from $build_dir"
    if ! (cd "$build_dir" && cpack -G DEB --config ./CPackConfig.cmake -B "$work/pack") >"$work/cpack.log" 2>&1; then
        cat "$work/cpack.log"
        echo "FAIL: cpack"
        exit 1
    fi
    deb=$(ls "$work"/pack/*.deb)
fi
deb=$(realpath "$deb")
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"

step "lintian"
if command -v lintian >/dev/null; then
    lintian --fail-on error "$deb" 2>&1 | grep -v "running with root privileges" | tee "$work/lintian.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "lintian reports errors (E: above)"
else
    fail "lintian is not installed (scripts/install-deps.sh installs it)"
fi

root="$work/root"
dpkg-deb -x "$deb" "$root" || { echo "FAIL: dpkg-deb -x"; exit 1; }
prefix="$root/usr"
share="$prefix/share/kernelloop"

step "Depends name the package of every library the binaries load"
depends=$(dpkg-deb -f "$deb" Depends)
description=$(dpkg-deb -f "$deb" Description)
echo "Depends: $depends"
echo "Suggests: $(dpkg-deb -f "$deb" Suggests)"
depends_on() { sed 's/ *([^)]*)//g; s/ *, */\n/g' <<<"$depends" | grep -xF "$1" >/dev/null; }
for binary in "$prefix"/bin/*; do
    for soname in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        path=$(ldconfig -p | awk -v so="$soname" '$1 == so && /x86-64/ { print $NF; exit }')
        owner=""
        if [ -n "$path" ]; then
            # merged /usr: dpkg may know the file under /lib or under /usr/lib
            owner=$({ dpkg -S "$path" || dpkg -S "$(realpath "$path")"; } 2>/dev/null | head -1 | cut -d: -f1)
        fi
        if [ -z "$owner" ]; then
            # NVRTC and CUPTI come from NVIDIA's toolkit: the description must name them.
            grep -qF "$soname" <<<"$description" \
                || fail "$(basename "$binary") needs $soname: no Debian package owns it and the description does not name it"
        elif ! depends_on "$owner"; then
            fail "$(basename "$binary") needs $soname from $owner, which Depends does not name"
        fi
    done
done
depends_on python3 || fail "Depends does not name python3 (the helpers run under it)"
grep -q python3-torch <<<"$(dpkg-deb -f "$deb" Suggests)" || fail "Suggests does not name python3-torch"
grep -q bubblewrap <<<"$(dpkg-deb -f "$deb" Recommends)" || fail "Recommends does not name bubblewrap (the sandbox)"

step "the files the programs and the README use"
for file in bin/kernelloop bin/kernelloop-cli bin/kernelloop-runner \
    share/kernelloop/python/kernelloop/triton_aot.py share/kernelloop/python/kernelloop/kernelbench_import.py \
    share/kernelloop/python/kernelloop/confine.py share/kernelloop/python/kernelloop/warm_tool.py \
    share/kernelloop/python/kernelloop/torch_reference_worker.py share/kernelloop/python/kernelloop/inductor_kernel.py \
    share/kernelloop/python/kernelloop/flop_count.py \
    share/kernelloop/examples/layernorm_gelu/problem.json share/kernelloop/examples/layernorm_gelu_triton/problem.json \
    share/kernelloop/examples/kernelbench_triton/softmax.py share/kernelloop/kernelbench/softmax.py \
    share/kernelloop/sessions/layernorm_gelu-h200.klsession share/kernelloop/prompts/planner.system.md \
    share/doc/kernelloop/copyright share/doc/kernelloop/changelog.gz share/doc/kernelloop/README.md \
    share/doc/kernelloop/docs/formats.md; do
    [ -e "$prefix/$file" ] || fail "the package lacks /usr/$file"
done

# --- the installed programs, away from the source tree ------------------------------------------
mkdir -p "$work/home" "$work/cwd" "$work/out"
tracer=()
if strace -f -qq -o /dev/null true 2>/dev/null; then
    tracer=(strace -f -qq -e trace=%file -o)
else
    echo "note: strace cannot trace here (ptrace refused): reads of the source tree are not traced"
fi
runs=0
# installed NAME ARGS...: runs /usr/bin/NAME of the unpacked package in a bare environment (no
# KL_* paths, its own HOME, /usr/bin's python3 with Debian's PyTorch), from a folder of its own.
installed() {
    local name=$1
    shift
    runs=$((runs + 1))
    local trace=()
    if [ ${#tracer[@]} -gt 0 ]; then trace=("${tracer[@]}" "$work/trace.$runs"); fi
    (cd "$work/cwd" && env -i PATH=/usr/bin:/bin HOME="$work/home" LANG=C.UTF-8 ${EXTRA_ENV:-} \
        "${trace[@]}" "$prefix/bin/$name" "$@")
}
# expect WHAT RC OUTPUT_FILE [PATTERN [ABSENT]]: the last run's exit status and what it printed.
expect() {
    local what=$1 rc=$2 out=$3 pattern=${4:-} absent=${5:-}
    if [ "$rc" -ne 0 ]; then
        fail "$what: exit $rc"
        tail -n 15 "$out"
    elif [ -n "$pattern" ] && ! grep -qE "$pattern" "$out"; then
        fail "$what: no \"$pattern\" in its output"
        tail -n 15 "$out"
    fi
    if [ -n "$absent" ] && grep -qE "$absent" "$out"; then
        fail "$what: \"$absent\" in its output"
        grep -E "$absent" "$out" | head -3
    fi
    return 0
}
db="$work/home/kernelloop.db"

step "kernelloop-cli --version, check"
installed kernelloop-cli --version >"$work/out/version.txt" 2>&1
expect "kernelloop-cli --version" $? "$work/out/version.txt" "0\.[0-9]+\.[0-9]+"
installed kernelloop-cli check "$share/examples/layernorm_gelu/problem.json" >"$work/out/check.txt" 2>&1
expect "check examples/layernorm_gelu" $? "$work/out/check.txt" "registers"
# Debian has no Triton: the Triton example must say so, never that a helper is missing.
installed kernelloop-cli check "$share/examples/layernorm_gelu_triton/problem.json" >"$work/out/check-triton.txt" 2>&1
rc=$?
if python3 -c "import triton" 2>/dev/null; then
    expect "check examples/layernorm_gelu_triton" $rc "$work/out/check-triton.txt" "" "missing-helper|is missing"
else
    expect "check examples/layernorm_gelu_triton" 0 "$work/out/check-triton.txt" "needs-triton" "missing-helper|is missing"
fi

step "kernelloop-cli import, history, show on the installed sessions"
for session in "$share"/sessions/*.klsession; do
    installed kernelloop-cli import "$session" --db "$db" >"$work/out/import.txt" 2>&1
    expect "import $(basename "$session")" $? "$work/out/import.txt"
done
installed kernelloop-cli history --sessions --db "$db" >"$work/out/sessions.txt" 2>&1
expect "history --sessions" $? "$work/out/sessions.txt" "layernorm_gelu"
installed kernelloop-cli history --db "$db" >"$work/out/history.txt" 2>&1
expect "history" $? "$work/out/history.txt"
installed kernelloop-cli show 2 --db "$db" >"$work/out/show.txt" 2>&1
expect "show 2" $? "$work/out/show.txt"

step "kernelloop-cli import-kernelbench (Debian's CPU PyTorch)"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    installed kernelloop-cli import-kernelbench "$share/kernelbench/softmax.py" -o "$work/problems/softmax" \
        --baseline "$share/examples/kernelbench_triton/softmax.py" >"$work/out/kb.txt" 2>&1
    expect "import-kernelbench kernelbench/softmax.py" $? "$work/out/kb.txt" "" "missing-helper|is missing"
    [ -f "$work/problems/softmax/problem.json" ] || fail "import-kernelbench wrote no problem.json"
    installed kernelloop-cli import-kernelbench "$share/kernelbench/gelu.py" -o "$work/problems/gelu" \
        >"$work/out/kb-gelu.txt" 2>&1
    expect "import-kernelbench kernelbench/gelu.py" $? "$work/out/kb-gelu.txt"
    installed kernelloop-cli check "$work/problems/gelu/problem.json" >"$work/out/check-gelu.txt" 2>&1
    expect "check the imported gelu" $? "$work/out/check-gelu.txt" "" "missing-helper|is missing"
else
    fail "/usr/bin/python3 has no PyTorch (scripts/install-deps.sh installs python3-torch)"
fi

step "kernelloop-cli llm-check against kl-llm-replay on loopback"
printf 'The plan: nothing to change.\n' >"$work/reply.md"
printf '{ "routes": [ { "when": "", "replies": ["reply.md"] } ] }\n' >"$work/scenario.json"
"$replay" --scenario "$work/scenario.json" --port-file "$work/port" --log "$work/replay.log" >/dev/null 2>&1 &
replay_pid=$!
for _ in $(seq 100); do
    [ -s "$work/port" ] && break
    sleep 0.1
done
if [ -s "$work/port" ]; then
    installed kernelloop-cli llm-check --provider openai --base-url "http://127.0.0.1:$(cat "$work/port")/v1" \
        --model replay >"$work/out/llm-check.txt" 2>&1
    expect "llm-check" $? "$work/out/llm-check.txt"
else
    fail "kl-llm-replay did not start"
fi

step "kernelloop --help and --version without a display"
installed kernelloop --help >"$work/out/gui-help.txt" 2>&1
expect "kernelloop --help (no display)" $? "$work/out/gui-help.txt" "Usage: .*kernelloop"
installed kernelloop --version >"$work/out/gui-version.txt" 2>&1
expect "kernelloop --version (no display)" $? "$work/out/gui-version.txt" "KernelLoop 0\.[0-9]+"

step "kernelloop offscreen --screenshot: the example problem, a recorded session"
export EXTRA_ENV="QT_QPA_PLATFORM=offscreen"
installed kernelloop "$share/examples/layernorm_gelu/problem.json" --screenshot "$work/problem.png" \
    >"$work/out/gui-problem.txt" 2>&1
expect "kernelloop PROBLEM --screenshot" $? "$work/out/gui-problem.txt"
installed kernelloop "$share/sessions/layernorm_gelu-h200.klsession" --screenshot "$work/session.png" \
    >"$work/out/gui-session.txt" 2>&1
expect "kernelloop SESSION --screenshot" $? "$work/out/gui-session.txt"
unset EXTRA_ENV
for png in problem session; do
    size=$(stat -c %s "$work/$png.png" 2>/dev/null || echo 0)
    [ "$size" -gt 20000 ] || fail "the $png screenshot is missing or empty ($size bytes)"
done

# --- the proof that nothing came from the tree the package was built from ------------------------
if [ ${#tracer[@]} -gt 0 ]; then
    step "no installed program touched $source_dir or $build_dir ($runs runs traced)"
    hits=$(cat "$work"/trace.* | grep -F -e "\"$source_dir/" -e "\"$source_dir\"" -e "\"$build_dir/" | head -5)
    if [ -n "$hits" ]; then
        fail "installed programs read the source or build tree:"
        echo "$hits"
    fi
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "the installed package works ($runs runs of installed programs)"
