#!/usr/bin/env bash
# Load on the agent's /metrics: wrk with 2 threads and 8 connections for LOAD_S seconds against
# `reveal agent` on loopback, then requests/s, errors (non-2xx responses, socket errors) and
# latency percentiles, and whether sampling kept its cadence under that load: the growth of
# reveal_samples_total and reveal_samples_skipped_total between a scrape before and one after,
# against the wall-clock time between them (expected: elapsed / interval samples, 0 skipped).
# Exits 1 on any error response, socket error, missed cadence or agent failure.
#   usage: bench/agent/metrics_load.sh [build/reveal]
# Environment:
#   LOAD_S=30       load duration (s)          WARMUP_S=15   sampling before the measurement (s)
#   THREADS=2 CONNS=8  wrk threads/connections  INTERVAL_S=1  sampling interval (s)
#   PORT            listen port (default: a free one)
#   REPLAY=run.db   replay a recording (`--replay`) instead of sampling this host; the cadence
#                   check is then skipped (replay does not sample the wall clock)
#   METRICS_URL=http://127.0.0.1:9797   load an agent that is already running (no start/stop)
set -euo pipefail
REVEAL=${1:-build/reveal}
LOAD_S=${LOAD_S:-30}
WARMUP_S=${WARMUP_S:-15}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
INTERVAL_S=${INTERVAL_S:-1}
T=$(mktemp -d)
AGENT_PID=
cleanup() {
  if [[ -n $AGENT_PID ]] && kill -0 "$AGENT_PID" 2>/dev/null; then
    kill -TERM "$AGENT_PID" 2>/dev/null || true
    wait "$AGENT_PID" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT
die() { echo "metrics_load: $*" >&2; exit 1; }
for tool in wrk curl awk; do command -v "$tool" >/dev/null || die "$tool not installed"; done

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
now() { date +%s.%N; }
# metric FILE NAME: the value of the unlabelled sample NAME in an exposition file ("" if absent).
metric() { awk -v n="$2" '$1 == n { v = $2 } END { if (v != "") print v + 0 }' "$1"; }
scrape() {  # scrape FILE: GET /metrics into FILE, fail on anything but 200
  local code
  code=$(curl -sS -o "$1" -w '%{http_code}' --max-time 10 "$BASE/metrics") || die "GET $BASE/metrics failed"
  [[ $code == 200 ]] || die "GET $BASE/metrics: HTTP $code"
}
# to_ms VALUE: wrk's "812.00us" / "1.25ms" / "2.01s" / "1.00m" in milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000; else if (u != "ms") n = -1
    printf "%.3f", n }'
}

# --- the agent ---------------------------------------------------------------------------------
if [[ -n ${METRICS_URL:-} ]]; then
  BASE=${METRICS_URL%/}
  MODE=external
else
  [[ -x $REVEAL ]] || die "$REVEAL is not an executable (build it: cmake --build build --target reveal_cli)"
  PORT=${PORT:-$(free_port)}
  BASE=http://127.0.0.1:$PORT
  cat >"$T/agent.toml" <<EOF
listen = "127.0.0.1:$PORT"
interval = "${INTERVAL_S}s"
[store]
path = "$T/agent.db"
EOF
  if [[ -n ${REPLAY:-} ]]; then
    MODE=replay
    "$REVEAL" agent --config "$T/agent.toml" --replay "$REPLAY" >"$T/agent.log" 2>&1 &
  else
    MODE=live
    "$REVEAL" agent --config "$T/agent.toml" >"$T/agent.log" 2>&1 &
  fi
  AGENT_PID=$!
fi
alive() { [[ -z $AGENT_PID ]] || kill -0 "$AGENT_PID" 2>/dev/null; }

# Up when /metrics shows a first sample (30 s at most).
for ((i = 0; ; i++)); do
  alive || die "the agent exited: $(tail -c 500 "$T/agent.log")"
  if curl -sf --max-time 2 -o "$T/first.txt" "$BASE/metrics" 2>/dev/null && [[ -n $(metric "$T/first.txt" reveal_samples_total) ]] &&
    (($(metric "$T/first.txt" reveal_samples_total) >= 1)); then
    break
  fi
  ((i < 300)) || die "no sample on $BASE/metrics after 30 s${AGENT_PID:+: $(tail -c 500 "$T/agent.log")}"
  sleep 0.1
done
echo "agent: $MODE at $BASE; warming up for ${WARMUP_S}s"
sleep "$WARMUP_S"
wrk -t"$THREADS" -c"$CONNS" -d3s "$BASE/metrics" >/dev/null  # warm the connections up

# --- the load, between two scrapes ---------------------------------------------------------------
scrape "$T/before.txt"
t0=$(now)
wrk -t"$THREADS" -c"$CONNS" -d"${LOAD_S}s" --latency "$BASE/metrics" >"$T/wrk.txt" 2>&1 || die "wrk failed: $(cat "$T/wrk.txt")"
scrape "$T/after.txt"
t1=$(now)
alive || die "the agent exited under load: $(tail -c 500 "$T/agent.log")"

# wrk's report (only lines that are non-zero appear for the error counts):
#   Latency Distribution / 50% 1.02ms / 75% ... / 90% ... / 99% ...
#   123456 requests in 30.00s, 1.20GB read
#   Socket errors: connect 0, read 1, write 0, timeout 0
#   Non-2xx or 3xx responses: 12
#   Requests/sec:   4115.20
requests=$(awk '/ requests in / { print $1 }' "$T/wrk.txt")
rps=$(awk '$1 == "Requests/sec:" { print $2 }' "$T/wrk.txt")
non2xx=$(awk '/^ *Non-2xx or 3xx responses:/ { print $NF }' "$T/wrk.txt")
socket_errors=$(awk '/^ *Socket errors:/ { n = 0; for (i = 3; i <= NF; i += 2) n += $(i + 1) + 0; print n }' "$T/wrk.txt")
pct() { awk -v p="$1%" '$1 == p { print $2 }' "$T/wrk.txt"; }
p50=$(pct 50) p90=$(pct 90) p99=$(pct 99)
[[ -n $requests && -n $rps && -n $p50 && -n $p90 && -n $p99 ]] || die "cannot parse wrk's report: $(cat "$T/wrk.txt")"
non2xx=${non2xx:-0}
socket_errors=${socket_errors:-0}
size=$(stat -c %s "$T/after.txt")

echo
echo "| load | requests | requests/s | p50 | p90 | p99 | non-2xx | socket errors | /metrics size |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '| wrk -t%s -c%s -d%ss | %s | %s | %s ms | %s ms | %s ms | %s | %s | %s B |\n' "$THREADS" "$CONNS" "$LOAD_S" \
  "$requests" "$rps" "$(to_ms "$p50")" "$(to_ms "$p90")" "$(to_ms "$p99")" "$non2xx" "$socket_errors" "$size"

failed=0
((requests > 0)) || { echo "FAIL: no request completed"; failed=1; }
((non2xx == 0)) || { echo "FAIL: $non2xx responses were not 2xx/3xx"; failed=1; }
((socket_errors == 0)) || { echo "FAIL: $socket_errors socket errors ($(grep 'Socket errors' "$T/wrk.txt" | xargs))"; failed=1; }

# --- sampling cadence and the agent's own CPU under the load -------------------------------------
s0=$(metric "$T/before.txt" reveal_samples_total) s1=$(metric "$T/after.txt" reveal_samples_total)
k0=$(metric "$T/before.txt" reveal_samples_skipped_total) k1=$(metric "$T/after.txt" reveal_samples_skipped_total)
c0=$(metric "$T/before.txt" process_cpu_seconds_total) c1=$(metric "$T/after.txt" process_cpu_seconds_total)
[[ -n $s0 && -n $s1 && -n $k0 && -n $k1 ]] || die "reveal_samples_total / reveal_samples_skipped_total missing from /metrics"
awk -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" -v k0="$k0" -v k1="$k1" -v c0="$c0" -v c1="$c1" -v iv="$INTERVAL_S" \
    -v mode="$MODE" 'BEGIN {
  el = t1 - t0; want = el / iv; got = s1 - s0; skipped = k1 - k0
  printf "\nsampling under load: %d samples in %.2f s (expected %.1f at %g s), %d skipped", got, el, want, iv, skipped
  if (c0 != "" && c1 != "") printf "; agent CPU %.1f %% of a core", (c1 - c0) / el * 100
  printf "\n"
  bad = 0
  if (skipped != 0) { print "FAIL: " skipped " sampling ticks skipped under load"; bad = 1 }
  # One sample of slack for the phase of the ticks against the two scrapes, plus 1 %.
  if (mode != "replay" && (got < want - 1 - want / 100 || got > want + 1 + want / 100)) {
    printf "FAIL: %d samples where %.1f were expected: the cadence changed under load\n", got, want; bad = 1 }
  if (mode == "replay") print "(replay: sample count not compared with the wall clock)"
  exit bad }' || failed=1

# --- stop: SIGTERM ends the agent within 10 s ----------------------------------------------------
if [[ -n $AGENT_PID ]]; then
  kill -TERM "$AGENT_PID"
  for ((i = 0; i < 100; i++)); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$AGENT_PID" 2>/dev/null; then
    echo "FAIL: the agent did not stop within 10 s of SIGTERM"
    failed=1
  else
    rc=0
    wait "$AGENT_PID" || rc=$?
    AGENT_PID=
    ((rc == 0)) || { echo "FAIL: the agent exited $rc after SIGTERM: $(tail -c 300 "$T/agent.log")"; failed=1; }
  fi
fi
exit "$failed"
