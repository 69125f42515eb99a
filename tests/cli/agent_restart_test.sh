#!/usr/bin/env bash
# Restarts of the agent (issue #18): killed with SIGKILL three times at random moments and
# restarted on the same store (bench/agent/restarts.py), the agent must continue its store and
# lose no sample (at most one interval per kill: the one being written), leave no gap inside a
# run, and have its model ready from the stored history before it has taken 10 samples of its
# own. Then a restart that cannot continue the store (another interval) keeps the old one as
# <store>.prev and says why; and a store held by a running agent is neither continued nor
# moved. Live sampling of this host's /proc, about 60 seconds.
# usage: agent_restart_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
T=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

python3 "$ROOT/bench/agent/restarts.py" --reveal "$REVEAL" --kills 3 --seed 7 --keep "$T/kills" >"$T/kills.out" 2>&1 ||
  fail "restarts.py: $(tr '\n' ' ' <"$T/kills.out")"
cat "$T/kills.out"
grep -q "continuing the store: " "$T/kills/agent-1.log" || fail "the restarted agent did not say it continued the store"
grep -q "recovered from the head log" "$T/kills/agent-1.log" || fail "a killed agent's head log was not recovered"
[[ -e $T/kills/agent.db.prev ]] && fail "a restart moved the store to .prev"

# Another interval: the store cannot be continued; it is kept as .prev, and the log says why.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$REVEAL" agent --store "$T/kills/agent.db" --listen "127.0.0.1:$PORT" --interval 500ms --probes 'proc.*' \
  >"$T/other.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -sf --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
grep -q "starting a new store (the previous one kept as .*agent.db.prev): recorded every 1 s, not every 0.5" "$T/other.log" ||
  fail "no reason logged for a new store: $(cat "$T/other.log")"
[[ -e $T/kills/agent.db.prev ]] || fail "the store that could not be continued was not kept as .prev"
"$REVEAL" info "$T/kills/agent.db.prev" >"$T/info" 2>&1 || fail "the .prev store does not load: $(cat "$T/info")"
# A second agent on the same store: refused, nothing moved.
PORT2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$REVEAL" agent --store "$T/kills/agent.db" --listen "127.0.0.1:$PORT2" --interval 500ms --probes 'proc.*' >"$T/second.log" 2>&1
rc=$?
[[ $rc == 3 ]] || fail "a second agent on a store being written exited $rc (want 3): $(cat "$T/second.log")"
grep -q "another reveal process" "$T/second.log" || fail "the second agent did not say the store is in use: $(cat "$T/second.log")"
kill "$pid" && wait "$pid"
pid=
"$REVEAL" info "$T/kills/agent.db" >"$T/info" 2>&1 || fail "the new store does not load: $(cat "$T/info")"
((fails == 0)) && echo "agent restart test passed"
exit $((fails > 0))
