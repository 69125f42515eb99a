#!/usr/bin/env bash
# The agent stopping while an incident is open (issue #17, restart parity): its last word on
# the incident is in its log and its store — an incident_closed event — so the store says how
# every incident it opened ended (and when it was first seen, pending: incident_pending), and
# `reveal detect --streaming` of the store (which ends the incident at the agent_restart that
# follows, StreamingDetector::end_segment) reports the same. A 20-second replay of a crafted recording whose CPU level steps up for good near its
# end; the replay ends, the agent exits.
# usage: agent_stop_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail

# 400 samples every 50 ms: the agent's 10-s settle takes the first 200, the warm-up the next
# 100; the step at sample 330 (CPU busy, and a stall share: a symptom) lasts the last 3.5 s: the
# incident is pending for its first second (detect.min_duration), then reported.
python3 - "$T/run.csv" <<'EOF'
import random, sys
random.seed(3)
t0 = 1_790_000_000_000_000_000
with open(sys.argv[1], "w") as f:
    f.write("t_unix_ns,test:busy_pct,test:mem_pct,test.pressure:cpu_some_pct\n")
    for i in range(400):
        busy = (90 if i >= 330 else 20) + random.gauss(0, 1)
        stall = max(0.0, (40 if i >= 330 else 1) + random.gauss(0, 0.5))
        f.write(f"{t0 + i * 50_000_000},{busy:.3f},{30 + random.gauss(0, 1):.3f},{stall:.3f}\n")
EOF
"$REVEAL" import csv "$T/run.csv" -o "$T/run.db" >"$T/import.log" 2>&1 || fail "import: $(cat "$T/import.log")"
cat >"$T/agent.toml" <<'EOF'
[detect]
warmup = "5s"
history = "20s"
min_duration = "1s"
EOF
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout 120 "$REVEAL" agent --config "$T/agent.toml" --replay "$T/run.db" --exit-after-replay --store "$T/out.db" \
  --listen "127.0.0.1:$PORT" >"$T/agent.log" 2>&1
rc=$?
[[ $rc == 0 ]] || fail "the agent exited $rc: $(tail -5 "$T/agent.log")"
grep -q "incident opened: " "$T/agent.log" || fail "no incident opened at the step: $(cat "$T/agent.log")"
# The closing line comes after the replay ended: the step lasted to the last sample.
sed -n '/replay finished/,$p' "$T/agent.log" | grep -q "incident closed: " ||
  fail "the open incident was not closed when the agent stopped: $(cat "$T/agent.log")"
python3 - "$T/out.db" >"$T/events" 2>&1 <<'EOF' || fail "store events: $(cat "$T/events")"
import sqlite3, sys
kinds = [k for (k,) in sqlite3.connect(sys.argv[1]).execute("select kind from events where source = 'agent' order by t_unix_ns")]
print(" ".join(kinds))
# pending first (min_duration 1 s at 50 ms: 20 samples before it is reported), then opened, closed
sys.exit(0 if kinds == ["incident_pending", "incident_opened", "incident_closed"] else 1)
EOF
((fails == 0)) && echo "agent stop test passed"
exit $((fails > 0))
