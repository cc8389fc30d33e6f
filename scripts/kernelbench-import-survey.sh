#!/usr/bin/env bash
# The import-kernelbench survey (issue 39): imports KernelBench's level 1 and level 2 folders as a new
# user would (one `import-kernelbench FOLDER` each: one warm Python, PyTorch imported once), then
#   - per level: how many imported, every refusal with its category and reason, how many were imported
#     at KernelBench's sizes only ("fixed sizes"), and the folder's wall time;
#   - `kernelloop-cli check` on every imported problem, each failure named;
#   - 20 of the imported problems (both levels, convolutions and pooling among them) run by the
#     runner's PyTorch worker on the CPU at every fuzz size (test_kernelbench_operators kernelBenchSample).
# A benchmark, not a test: the figures go into docs/measurements.md by hand.
#
#   scripts/kernelbench-import-survey.sh KERNELBENCH_DIR [OUT_DIR]
#
# KERNELBENCH_DIR holds level1/ and level2/ (KernelBench's KernelBench/ folder). OUT_DIR (default
# ./kernelbench-survey-out) receives level1/ and level2/ problem folders and the logs; it is emptied first.
# KL_PYTHON: the Python with PyTorch (default /usr/bin/python3, Debian's); KL_BUILD: the build tree
# (default build/ci).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ $# -lt 1 ] || [ ! -d "$1/level1" ] || [ ! -d "$1/level2" ]; then
    echo "usage: scripts/kernelbench-import-survey.sh KERNELBENCH_DIR [OUT_DIR]" \
        "(KERNELBENCH_DIR holds level1/ and level2/)" >&2
    exit 2
fi
KB=$(cd "$1" && pwd)
OUT=${2:-$ROOT/kernelbench-survey-out}
BUILD=${KL_BUILD:-$ROOT/build/ci}
CLI=$BUILD/cli/kernelloop-cli
SAMPLE=$BUILD/tests/kernelbench/test_kernelbench_operators
export KL_PYTHON=${KL_PYTHON:-/usr/bin/python3}
for binary in "$CLI" "$SAMPLE"; do
    [ -x "$binary" ] || { echo "missing $binary: build kernelloop-cli and test_kernelbench_operators" >&2; exit 2; }
done
rm -rf "$OUT"
mkdir -p "$OUT"
echo "KernelBench: $KB ($(git -C "$KB" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))"
echo "PyTorch: $("$KL_PYTHON" -c 'import torch; print(torch.__version__)' 2>&1 | tail -1) ($KL_PYTHON), $(nproc) cores"
edits=$(git diff --quiet HEAD -- python core cli || echo ' + uncommitted edits in python/, core/ or cli/')
echo "KernelLoop: $(git rev-parse --short HEAD)$edits"
status=0
for level in level1 level2; do
    files=$(ls "$KB/$level"/*.py | wc -l)
    start=$(date +%s.%N)
    "$CLI" import-kernelbench "$KB/$level" -o "$OUT/$level" >"$OUT/$level.log" 2>&1
    end=$(date +%s.%N)
    imported=$(ls -d "$OUT/$level"/*/problem.json 2>/dev/null | wc -l)
    fixed=$(grep -c '^  fixed sizes:' "$OUT/$level.log")
    printf '\n%s: imported %d of %d in %.1f s (one worker; %d at KernelBench sizes only)\n' "$level" "$imported" \
        "$files" "$(awk "BEGIN { print $end - $start }")" "$fixed"
    echo "  refusals by category:"
    grep '^  refused ' "$OUT/$level.log" | sed -E 's/^  refused [^:]+: kernelbench\.([a-z-]+):.*/\1/' |
        sort | uniq -c | sed 's/^/   /'
    grep '^  refused ' "$OUT/$level.log" | sed 's/^  refused /    /'
    if [ "$fixed" -gt 0 ]; then
        echo "  at KernelBench's sizes only:"
        awk '/^imported [^ ]+ into /{file=$2}
             /^  fixed sizes:/{sub(/^  fixed sizes: /, ""); print "    " file ": " $0}' \
            "$OUT/$level.log"
    fi
    checked=0
    failed=0
    for problem in "$OUT/$level"/*/problem.json; do
        [ -f "$problem" ] || continue
        checked=$((checked + 1))
        if ! "$CLI" check "$problem" >"$OUT/check.out" 2>&1; then
            failed=$((failed + 1))
            echo "  check FAILED: $problem: $(tail -1 "$OUT/check.out")"
        fi
    done
    echo "  check: $((checked - failed)) of $checked pass"
    [ "$failed" -eq 0 ] || status=1
done
echo
echo "sample of 20 (both levels, 12 convolutions and pooling among them), every fuzz size in the CPU worker:"
if KL_KERNELBENCH_IMPORTED=$OUT "$SAMPLE" kernelBenchSample >"$OUT/sample.log" 2>&1; then
    grep -E 'size sets' "$OUT/sample.log" | sed -E 's/^QINFO *: *[^ ]+ /  /'
    echo "  all ran"
else
    status=1
    tail -20 "$OUT/sample.log"
    echo "  the sample FAILED"
fi
rm -f "$OUT/check.out"
exit $status
