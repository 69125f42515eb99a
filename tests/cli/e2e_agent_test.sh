#!/usr/bin/env bash
# End to end: `reveal agent` on this host with a 40 s warm-up; stress-ng then oversubscribes the
# CPUs for 20 s (two hogs per CPU: tasks wait for a CPU, CPU pressure rises — contention, a
# symptom; as many hogs as CPUs on an idle host would be a workload change, not an incident:
# streaming.h). /metrics, polled every 0.2 s, must show the anomaly and an active incident on
# cpu once it lasted detect.min_duration (10 s; IncidentRule::min_duration_s: 7-16 s after the
# onset), dated within 5 s of the onset (printed: the latencies), /incidents
# must hold it afterwards; SIGHUP applies a new metric selection and reports restart-only keys;
# SIGTERM flushes the store (it loads with every sample) and exits 0. Also: bad configuration
# exits 2, a taken port exits 3 and leaves the existing store alone.
#   usage: e2e_agent_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
T=$(mktemp -d)
HOGS=$((2 * $(nproc)))
AG="" POLLER=""
trap '[[ -n $POLLER ]] && kill $POLLER 2>/dev/null; [[ -n $AG ]] && kill $AG 2>/dev/null; pkill -f "stress-ng --cpu $HOGS --timeout 20s" 2>/dev/null; rm -rf "$T"' EXIT
source "$(dirname "$0")/test_lib.sh"
command -v curl >/dev/null || { echo "curl missing: run scripts/setup.sh"; exit 1; }
command -v stress-ng >/dev/null || { echo "stress-ng missing: run scripts/setup.sh"; exit 1; }
PORT=$((20000 + RANDOM % 20000))

cat >"$T/agent.toml" <<EOF
listen = "127.0.0.1:$PORT"
[store]
path = "$T/agent.db"
[detect]
warmup = "40s"
EOF
metric() { curl -s --max-time 2 "http://127.0.0.1:$PORT/metrics"; }
# has PATTERN: the latest /metrics fetched by the poller holds a line matching PATTERN.
has() { [[ -s $T/cur.txt ]] && grep -q "$1" "$T/cur.txt"; }
# The poller: one process fetches /metrics every 0.2 s from the agent's start to its end, keeps
# the latest text in cur.txt and logs "unix_time score incident_line" to poll.log. Its loopback
# traffic is part of the host's normal behaviour, so its pace must never change (a test loop
# whose per-iteration cost changes at the fault onset shows up as a network anomaly).
start_poller() {
  python3 - "$PORT" "$T" <<'PY' &
import sys, time, urllib.request, os
port, d = sys.argv[1], sys.argv[2]
log = open(os.path.join(d, "poll.log"), "a", buffering=1)
nxt = time.time()
while True:
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except Exception:
        body = None
    now = time.time()
    if body is not None:
        with open(os.path.join(d, "cur.tmp"), "w") as f:
            f.write(body)
        os.replace(os.path.join(d, "cur.tmp"), os.path.join(d, "cur.txt"))
        score = next((l.split()[1] for l in body.splitlines() if l.startswith("reveal_anomaly_score ")), "nan")
        inc = next((l for l in body.splitlines() if l.startswith("reveal_incident_active{")), "")
        log.write(f"{now:.3f} {score} {inc}\n")
    nxt += 0.2
    time.sleep(max(0.0, nxt - time.time()))
PY
  POLLER=$!
}

# --- bad input: exit 2 for configuration, exit 3 for a port in use ---------------------------
expect_exit 2 "$REVEAL" agent --config "$T/missing.toml"
grep -q "missing.toml" "$T/err" || fail "missing config not named: $(cat "$T/err")"
printf 'listen = "127.0.0.1:%s"\n[detect]\nwindw = 3\n' "$PORT" >"$T/bad.toml"
expect_exit 2 "$REVEAL" agent --config "$T/bad.toml"
grep -q "bad.toml:3" "$T/err" || fail "unknown key not located: $(cat "$T/err")"
expect_exit 2 "$REVEAL" agent --config "$T/agent.toml" --interval 0s
expect_exit 0 "$REVEAL" agent --config "$T/agent.toml" --check-config

# A port already taken: exit 3, and the store at --store is left alone.
python3 -m http.server --bind 127.0.0.1 $((PORT + 2)) >/dev/null 2>&1 &
PY=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$((PORT + 2))/" && break; sleep 0.1; done
echo "not a store" >"$T/other.db"
expect_exit 3 "$REVEAL" agent --listen "127.0.0.1:$((PORT + 2))" --store "$T/other.db"
grep -q "cannot listen" "$T/err" || fail "taken port: $(cat "$T/err")"
[[ $(cat "$T/other.db") == "not a store" ]] || fail "taken port changed the other store"
kill $PY; wait $PY 2>/dev/null

sync; sleep 2
"$REVEAL" agent --config "$T/agent.toml" 2>"$T/agent.log" &
AG=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
start_poller
for _ in $(seq 50); do has '^reveal_samples_total [1-9]' && break; sleep 0.2; done
metric >"$T/m0.txt" || fail "no /metrics"
grep -q '^reveal_model_ready 0' "$T/m0.txt" || fail "model ready before warm-up"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz") == 200 ]] || fail "/healthz not 200"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope") == 404 ]] || fail "unknown path not 404"
grep -q '^reveal_proc_stat_user_total{channel="proc.stat:user",' "$T/m0.txt" || fail "raw counter channel missing"
if command -v promtool >/dev/null; then
  # Lint: the raw channels keep the kernel's field names (MemAvailable, Tcp_InSegs), which
  # promtool reports as camelCase; any other remark is a real naming problem.
  promtool check metrics <"$T/m0.txt" >"$T/lint.txt" 2>&1
  grep -v -e 'metric names should be written in .snake_case. not .camelCase.' "$T/lint.txt" >"$T/lint-rest.txt"
  [[ -s "$T/lint-rest.txt" ]] && fail "promtool check metrics: $(head -5 "$T/lint-rest.txt")"
fi

# --- warm-up, then the fault -----------------------------------------------------------------
for _ in $(seq 300); do has '^reveal_model_ready 1' && break; sleep 0.2; done
has '^reveal_model_ready 1' || fail "model not ready after the warm-up"
for _ in $(seq 25); do has '^reveal_incident_active' && { fail "incident active before the fault"; break; }; sleep 0.2; done
stress-ng --cpu "$HOGS" --timeout 20s --quiet &
STRESS=$!
F0=$(date +%s.%N)
for _ in $(seq 100); do has '^reveal_incident_active{' && break; sleep 0.2; done
INC_START=$(sed -n 's/^reveal_incident_active_start_timestamp_seconds //p' "$T/cur.txt" | head -1)
sleep 0.5
wait $STRESS
# From the poller's log: the first fetch after the onset with score >= 1, and with an incident.
read -r score_lat inc_lat sub < <(python3 - "$T/poll.log" "$F0" <<'PY'
import re, sys
f0 = float(sys.argv[2]); score = inc = None; sub = "none"
for line in open(sys.argv[1]):
    t, s, *rest = line.split(" ", 2)
    t = float(t)
    if t < f0: continue
    if score is None and s != "nan" and float(s) >= 1: score = t - f0
    if inc is None and rest and rest[0].strip():
        inc = t - f0
        m = re.search(r'subsystem="([a-z/]*)"', rest[0]); sub = m.group(1) if m else "?"
fmt = lambda x: "none" if x is None else f"{x:.1f}"
print(fmt(score), fmt(inc), sub)
PY
)
[[ $score_lat != none ]] && echo "latency: anomaly score >= 1 on /metrics $score_lat s after onset" || fail "anomaly score never reached 1"
[[ $inc_lat != none ]] && echo "latency: incident active on /metrics $inc_lat s after onset ($sub)" || fail "no active incident on /metrics"
[[ $sub == cpu ]] || fail "incident subsystem $sub, want cpu"
[[ $inc_lat != none ]] && python3 -c "import sys; sys.exit(0 if 7 <= $inc_lat <= 16 else 1)" \
  || fail "incident reported $inc_lat s after onset (want once it lasted min_duration: 7..16 s)"
[[ -n $INC_START ]] && python3 -c "import sys; d = $INC_START - $F0; print(f'incident dated {d:+.1f} s from the onset'); sys.exit(0 if -2 <= d <= 5 else 1)" \
  || fail "incident start ${INC_START:-missing} not within 5 s of the onset $F0"
# Up to 120 s for it to close: the kernel's smoothed pressure averages (avg10/60/300) decay for
# minutes after the contention ends and can hold the windows anomalous; an incident still open
# after 3 re-learn periods ends once its state settled (streaming.h).
for _ in $(seq 600); do has '^reveal_incident_active' || break; sleep 0.2; done
curl -s "http://127.0.0.1:$PORT/incidents" >"$T/inc.json"
python3 - "$T/inc.json" <<'PY' || fail "/incidents: $(head -c 400 "$T/inc.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "reveal.incidents/1", d
assert d["recent"], "no closed incident"
assert d["recent"][-1]["subsystem"] == "cpu", d["recent"][-1]["subsystem"]
PY
has '^reveal_incidents_total{subsystem="cpu"} 1' || fail "incident counter not 1 for cpu"

# --- SIGHUP: reloadable keys apply, restart-only keys are reported -----------------------------
cat >>"$T/agent.toml" <<EOF
[metrics]
channels = ["proc.meminfo:*"]
EOF
sed -i "s/^listen = .*/listen = \"127.0.0.1:$((PORT + 1))\"/" "$T/agent.toml"
kill -HUP $AG
sleep 2.5
metric >"$T/m1.txt"
grep -q '^reveal_proc_meminfo_MemFree{' "$T/m1.txt" || fail "selected channel missing after SIGHUP"
grep -q '^reveal_proc_stat_user_total{' "$T/m1.txt" && fail "unselected channel still exported after SIGHUP"
grep -q "'listen' changed: ignored until restart" "$T/agent.log" || fail "restart-only change not reported: $(tail -3 "$T/agent.log")"
echo 'listen = [' >>"$T/agent.toml"
kill -HUP $AG
sleep 1.5
grep -q "configuration not reloaded" "$T/agent.log" || fail "broken config on SIGHUP not reported"
has '^reveal_samples_total' || fail "agent gone after a broken SIGHUP config"

# --- SIGTERM: flush and exit 0 ---------------------------------------------------------------
n=$(metric | awk '$1 == "reveal_samples_total" {print $2}')
kill $POLLER 2>/dev/null; wait $POLLER 2>/dev/null; POLLER=""
kill -TERM $AG
wait $AG
rc=$?
AG=""
[[ $rc == 0 ]] || fail "SIGTERM exit $rc"
[[ -e "$T/agent.db-head" ]] && fail "head log left after SIGTERM"
"$REVEAL" info "$T/agent.db" >"$T/info.txt" || fail "store does not load after SIGTERM"
got=$(grep -oE '[0-9]+ samples every' "$T/info.txt" | grep -oE '^[0-9]+' || echo 0)
[[ $got -ge $n ]] || fail "store holds $got samples, /metrics said $n"
grep -q "incident opened: cpu" "$T/agent.log" || fail "incident not logged"
"$REVEAL" export "$T/agent.db" --csv "$T/x.csv" >/dev/null 2>&1 || fail "export of the agent store"
python3 - "$T/agent.db" <<'PY' || fail "incident events not in the store"
import sqlite3, sys
kinds = [r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT kind FROM events WHERE source = 'agent'")]
assert "incident_opened" in kinds and "incident_closed" in kinds, kinds
PY

[[ $fails == 0 ]] && echo "agent e2e: all checks passed" || { cat "$T/agent.log"; exit 1; }
