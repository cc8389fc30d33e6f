#!/usr/bin/env bash
# The LLM proposer's loop on a GPU, end to end, with a recorded model: kl-llm-replay serves the
# scenario's replies over loopback (OpenAI protocol), `kernelloop-cli tune --proposer llm` runs the
# loop against it on the real runner, and the session is kept. Called by scripts/gpu-check.sh with
# BIN (folder of kernelloop-cli, kernelloop-runner and kl-llm-replay) and OUT set; writes under
# $OUT/llm/ and prints a short summary block (also in $OUT/llm/llm-summary.txt) for the table.
#
# It fails soft: a missing server, scenario or CLI option, or a machine without a GPU (the CLI's
# exit 3), ends with a one-line reason in the summary, never a crash. Exit status: the tune
# command's, or 0 when the step was skipped (the reason is in the summary).
#
# Knobs (environment): KL_LLM_BUDGET (4), KL_LLM_K (the CLI's default), KL_LLM_ROLES (the CLI's
# default), KL_LLM_PROVIDER (openai), KL_LLM_MODEL (replay), KL_LLM_SCENARIO, KL_LLM_TIMEOUT (300 s),
# KL_LLM_PROPOSER (llm; llm+tuner lets the tuner sweep each new best source first),
# KL_LLM_FAIL_FIRST (0; the server answers the first N requests with HTTP 500 / a non-JSON body),
# KL_LLM_PATIENCE (0: off; the patience rule must count only measured rounds, not endpoint faults),
# KL_LLM_DIR (llm: the folder under $OUT), KL_LLM_PROBLEM (the layernorm_gelu example),
# KL_LLM_TUNER_ROUNDS (llm+tuner: the CLI's --tuner-rounds default).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BIN=${BIN:?folder of kernelloop-cli, kernelloop-runner and kl-llm-replay}
OUT=${OUT:-$ROOT/gpu-check-out}
DIR=$OUT/${KL_LLM_DIR:-llm}
mkdir -p "$DIR"
SUMMARY=$DIR/llm-summary.txt
: >"$SUMMARY"

PROBLEM=${KL_LLM_PROBLEM:-resources/examples/layernorm_gelu/problem.json}
SCENARIO=${KL_LLM_SCENARIO:-$ROOT/tests/fixtures/llm/scenarios/layernorm_gelu/scenario.json}
BUDGET=${KL_LLM_BUDGET:-4}
PROVIDER=${KL_LLM_PROVIDER:-openai}
MODEL=${KL_LLM_MODEL:-replay}
CLI=$BIN/kernelloop-cli
SERVER=$BIN/kl-llm-replay
SESSION_FILE=$DIR/layernorm_gelu-llm-replay.klsession
FAIL_FIRST=${KL_LLM_FAIL_FIRST:-0}
PATIENCE=${KL_LLM_PATIENCE:-0}
HEAD="LLM loop (${KL_LLM_PROPOSER:-llm}, kl-llm-replay, $PROVIDER protocol, model \"$MODEL\", budget $BUDGET"
[[ $FAIL_FIRST -gt 0 ]] && HEAD+=", first $FAIL_FIRST requests faulted, patience $PATIENCE"
HEAD+=")"

summary() { echo "$*" | tee -a "$SUMMARY"; }
skip() {
    summary "$HEAD: skipped: $*"
    exit 0
}

SERVER_PID=
stop_server() {
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    SERVER_PID=
}
trap stop_server EXIT
trap 'stop_server; exit 143' TERM INT

[[ -x $CLI ]] || skip "no kernelloop-cli in $BIN"
[[ -x $SERVER ]] || skip "no kl-llm-replay in $BIN (not built, or not in the bundle)"
[[ -f $SCENARIO ]] || skip "no scenario at ${SCENARIO#"$ROOT"/}"
# The help is read whole: `grep -q` would end the pipe early, the CLI would die of SIGPIPE and
# pipefail would call the option missing (it did, once tune's help grew).
if ! grep -q -- '--base-url' <<<"$("$CLI" tune --help 2>&1)"; then
    skip "this kernelloop-cli's tune has no --proposer llm / --base-url (built before the LLM proposer?)"
fi

# The server, on a free loopback port it writes to the port file.
PORT_FILE=$DIR/replay.port
rm -f "$PORT_FILE"
server_args=(--scenario "$SCENARIO" --port 0 --port-file "$PORT_FILE")
[[ $FAIL_FIRST -gt 0 ]] && server_args+=(--fail-first "$FAIL_FIRST")
"$SERVER" "${server_args[@]}" >"$DIR/replay.log" 2>&1 &
SERVER_PID=$!
port=
for _ in $(seq 100); do # up to 10 s
    if [[ -z $port ]]; then
        [[ -s $PORT_FILE ]] && port=$(grep -oE '[0-9]+' "$PORT_FILE" | tail -1)
        [[ -n $port ]] || port=$(sed -n 's#.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*#\1#p' "$DIR/replay.log" | head -1)
    fi
    # Ready once it accepts a connection.
    if [[ -n $port ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        break
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    wait "$SERVER_PID"
    rc=$?
    SERVER_PID=
    skip "kl-llm-replay exited at once (rc=$rc): $(tail -2 "$DIR/replay.log" | tr '\n' ' ' | cut -c1-160)"
fi
if [[ -z $port ]] || ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    skip "kl-llm-replay gave no reachable port within 10 s (port file: '$(head -c 40 "$PORT_FILE" 2>/dev/null)')"
fi
case $PROVIDER in
    openai) BASE_URL=http://127.0.0.1:$port/v1 ;;
    *) BASE_URL=http://127.0.0.1:$port ;;
esac

# The loop: the baseline, then BUDGET rounds of LLM proposals, every candidate verified and timed.
DB=$(mktemp -d)/llm-session.db
args=(tune "$PROBLEM" --proposer "${KL_LLM_PROPOSER:-llm}" --provider "$PROVIDER" --base-url "$BASE_URL" --model "$MODEL"
    --budget "$BUDGET" --patience "$PATIENCE" --metrics default --db "$DB" --runner "$BIN/kernelloop-runner"
    --label "H200 LLM loop (replay)" --json)
[[ -n ${KL_LLM_ROLES:-} ]] && args+=(--roles "$KL_LLM_ROLES")
[[ -n ${KL_LLM_K:-} ]] && args+=(-k "$KL_LLM_K")
[[ -n ${KL_LLM_TUNER_ROUNDS:-} ]] && args+=(--tuner-rounds "$KL_LLM_TUNER_ROUNDS")
printf '%q ' kernelloop-cli "${args[@]}" >"$DIR/command.txt"
echo >>"$DIR/command.txt"
start=$(date +%s)
timeout "${KL_LLM_TIMEOUT:-300}" "$CLI" "${args[@]}" >"$DIR/tune.jsonl" 2>"$DIR/tune.stderr"
rc=$?
wall=$(($(date +%s) - start))
stop_server
echo "tune rc=$rc in $wall s"
tail -3 "$DIR/tune.stderr"

"$CLI" history --db "$DB" >"$DIR/history.txt" 2>&1
has_session=$?
cat "$DIR/history.txt"
"$CLI" export "$SESSION_FILE" --db "$DB" >/dev/null 2>"$DIR/export.stderr"
exported=$?

case $rc in
    0 | 1) why= ;; # 1: the loop ran, but no candidate passed
    2) why="the CLI refused the options (exit 2)" ;;
    3) why="no GPU here (exit 3)" ;;
    124) why="stopped after ${KL_LLM_TIMEOUT:-300} s (timeout)" ;;
    130) why="interrupted (exit 130)" ;;
    *) why="exit $rc" ;;
esac
if [[ -n $why ]]; then
    first=$(grep -m1 '^error' "$DIR/tune.stderr" || grep -m1 -v '^\s*$' "$DIR/tune.stderr")
    why="$why: $(cut -c1-200 <<<"$first")"
fi

# The block for the table: one line per iteration, then best, rate and the model's exchanges.
python3 - "$DIR/tune.jsonl" "$DB" "$HEAD" "$rc" "$wall" "$why" <<'PY' | tee -a "$SUMMARY"
import json, os, sqlite3, sys

jsonl, db, head, rc, wall, why = sys.argv[1:7]
iterations, summary = [], None
try:
    for line in open(jsonl):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("summary"):
            summary = j
        elif "iteration" in j:
            iterations.append(j)
except OSError:
    pass


def num(v, fmt, unit=""):
    return "-" if v is None else f"{v:{fmt}}{unit}"


print(f"{head}: exit {rc}, {wall} s")
if why:
    print(f"  {why}")
if iterations:
    print(f"  {'iter':>4} {'proposer':8} {'verdict':22} {'median us':>9} {'speedup':>8}  detail")
for it in iterations:
    verdict = (it.get("category") or "?") + (" *" if it.get("kept") else "") + (" (cached)" if it.get("from_cache") else "")
    detail = it.get("top_finding") if it.get("category") == "passed" else it.get("detail")
    print(f"  {it.get('iteration', '?'):>4} {str(it.get('proposer', '?')):8} {verdict[:22]:22} "
          f"{num(it.get('median_us'), '.2f'):>9} {num(it.get('speedup'), '.2f', 'x'):>8}  {str(detail or '')[:70]}")
if summary:
    best, base = summary.get("best") or {}, summary.get("baseline") or {}
    if best:
        print(f"  best: iteration {best.get('iteration')} ({best.get('proposer')}), {num(best.get('median_us'), '.2f')} us, "
              f"{num(best.get('speedup'), '.2f', 'x')} vs the baseline's {num(base.get('median_us'), '.2f')} us, "
              f"{num(best.get('pct_of_copy'), '.1f')}% of copy")
    else:
        print("  best: none passed")
    tokens = summary.get("tokens")
    print(f"  {summary.get('evaluated')} candidates ({summary.get('passed')} passed) in "
          f"{num(summary.get('wall_seconds'), '.0f')} s = {num(summary.get('candidates_per_minute'), '.1f')}/min; "
          f"stop: {summary.get('stop_reason')}" + (f"; {tokens} tokens" if tokens else ""))
elif not why:
    print("  no summary line in tune.jsonl")
# How each exchange with the model ended, from the store (the export keeps them too).
if os.path.exists(db):
    try:
        rows = sqlite3.connect(db).execute(
            "SELECT role, category, count(*) FROM llm_exchanges GROUP BY role, category ORDER BY role, category").fetchall()
        if rows:
            print("  LLM exchanges: " + ", ".join(f"{role} {category} x{n}" for role, category, n in rows))
    except sqlite3.Error:
        pass
PY
if [[ $exported -eq 0 ]]; then
    kept=llm/$(basename "$SESSION_FILE")
elif [[ $has_session -eq 0 ]]; then
    mv "$DB"* "$DIR/" 2>/dev/null # a session but no export: keep the store itself
    kept="llm/$(basename "$DB") (export failed: $(head -1 "$DIR/export.stderr" | cut -c1-80))"
else
    kept="(no session recorded)"
fi
rm -rf "$(dirname "$DB")"
summary "  files: llm/tune.jsonl llm/tune.stderr llm/history.txt llm/replay.log $kept"
exit "$rc"
