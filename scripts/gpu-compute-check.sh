#!/usr/bin/env bash
# Issue 25 on a GPU machine (after scripts/gpu-check.sh has unpacked or built the binaries, or with a
# carried .gpu/ bundle): the compute side of speed of light on the bundled fp16 GEMM.
#   1. the runner's device description: theoretical FP16 tensor ceiling vs the measured mma.sync one;
#   2. kernelloop-cli evaluate --metrics sol on the naive tiled baseline (CUDA cores), the WMMA candidate
#      (resources/examples/gemm_fp16/wmma.cu) and the Triton baseline with torch.matmul (cuBLAS) as the
#      contender, each into its own store;
#   3. findings dumps in the tests/fixtures/findings format: $OUT/findings-dumps/gemm-{tiled,wmma}-sol-h200.json
#      (replace the *-synthetic.json ones with them, then KL_UPDATE_GOLDEN=1 test_findings_io);
#   4. a table for docs/measurements.md: kernel, TFLOP/s, % of SOL, bound, tensor-pipe %, findings.
# Usage: scripts/gpu-compute-check.sh   (OUT defaults to ./gpu-compute-out)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-compute-out}
mkdir -p "$OUT/findings-dumps"
source "$ROOT/scripts/gpu-env.sh"
echo "binaries: $BIN" | tee "$OUT/log.txt"

run() { # name problem candidate
    local db=$OUT/$1.db
    rm -f "$db" "$db-wal" "$db-shm"
    timeout 300 "$BIN/kernelloop-cli" evaluate "$2" "$3" --metrics sol --db "$db" --runner "$KL_RUNNER" \
        --label "issue 25 $1" --json >"$OUT/$1.jsonl" 2>"$OUT/$1.stderr"
    local rc=$?
    echo "$1: evaluate rc=$rc" | tee -a "$OUT/log.txt"
    # A failed evaluate says why in its last lines: keep them in the log, which always comes back.
    if [[ $rc -ne 0 ]]; then tail -n 25 "$OUT/$1.stderr" "$OUT/$1.jsonl" 2>/dev/null | tee -a "$OUT/log.txt"; fi
    "$BIN/kernelloop-cli" show 2 --db "$db" >"$OUT/$1.show.txt" 2>&1
    "$BIN/kernelloop-cli" history --db "$db" >"$OUT/$1.history.txt" 2>&1
}
run tiled resources/examples/gemm_fp16/problem.json resources/examples/gemm_fp16/baseline.cu
run wmma resources/examples/gemm_fp16/problem.json resources/examples/gemm_fp16/wmma.cu
run triton resources/examples/gemm_fp16_triton/problem.json resources/examples/gemm_fp16_triton/baseline.py

python3 - "$OUT" <<'PY' | tee -a "$OUT/log.txt"
import json, os, sqlite3, sys
out = sys.argv[1]
def rows(name):
    db = os.path.join(out, name + ".db")
    if not os.path.exists(db):
        return []
    return sqlite3.connect(db).execute(
        "SELECT i.idx, r.status, r.category, r.detail, r.device_json, r.timing_json, r.compile_json, r.profile_json "
        "FROM iterations i JOIN results r ON r.iteration_id = i.id "
        "WHERE i.session_id = (SELECT max(id) FROM sessions) ORDER BY i.idx").fetchall()
printed_device = False
print("| kernel | size | median us | TFLOP/s | % of SOL | bound | tensor pipe % | eager (cuBLAS) us | eager % of SOL |")
print("|---|---|---|---|---|---|---|---|---|")
for name in ("tiled", "wmma", "triton"):
    for idx, status, category, detail, device, timing, compiled, profile in rows(name):
        device, timing = json.loads(device or "{}"), json.loads(timing or "{}")
        profile, compiled = json.loads(profile or "{}"), json.loads(compiled or "{}")
        if not printed_device and device:
            printed_device = True
            print(f"device: {device.get('name')} sm_count {device.get('sm_count')} copy {device.get('copy_bandwidth_gbps')} GB/s; "
                  f"measured mma.sync fp16 {device.get('tensor_fp16_tflops')} TFLOP/s at {device.get('tensor_fp16_clock_mhz')} MHz")
        if idx != 2 and name != "triton":
            continue  # iteration 1 is the problem's baseline; 2 the candidate
        metrics = {}
        for k in profile.get("kernels") or []:
            if not metrics:
                metrics = k.get("metrics") or {}
        for case in timing.get("cases", []):
            med = (case.get("candidate") or {}).get("median_us")
            eager = (case.get("eager") or {}).get("median_us")
            sol = case.get("sol_us")
            print(f"| {name}#{idx} {category} | {case.get('label')} | {med} | {case.get('tflops')} | {case.get('pct_of_sol')} "
                  f"| {case.get('sol_bound')} | {metrics.get('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active')} "
                  f"| {eager} | {round(100 * sol / eager, 1) if sol and eager else None} |")
        if name in ("tiled", "wmma") and idx == 2 and category == "passed" and profile.get("status") == "ok":
            for case in timing.get("cases", []):
                for key in ("baseline", "candidate", "copy"):
                    if isinstance(case.get(key), dict):
                        case[key]["samples_us"] = []
            dump = {"_comment": f"Recorded on an {device.get('name')}: iteration 2 of `kernelloop-cli evaluate "
                                f"--metrics sol` on resources/examples/gemm_fp16 ({name}) in scripts/gpu-compute-check.sh; "
                                f"timing samples dropped.",
                    "v": 1, "id": "2", "type": "result", "status": status, "category": category, "detail": detail,
                    "device": device, "static": compiled.get("telemetry"), "verification": None, "timing": timing,
                    "profile": profile, "pc_sampling": None, "phases_ms": {}}
            path = os.path.join(out, "findings-dumps", f"gemm-{name}-sol-h200.json")
            with open(path, "w") as f:
                f.write(json.dumps(dump, indent=1) + "\n")
            print(f"wrote {path}")
PY
grep -h "^finding" "$OUT"/*.show.txt | sort | uniq -c | tee -a "$OUT/log.txt"
