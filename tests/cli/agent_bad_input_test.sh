#!/usr/bin/env bash
# `reveal agent` refuses what would lose or damage data, and stays reachable: a store path
# holding another file, a store another agent is writing, --replay onto its own store, empty
# flags, unknown probes under --check-config, SIGTERM right after start, idle HTTP clients.
#   usage: agent_bad_input_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
T=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
source "$(dirname "$0")/test_lib.sh"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/healthz" && return 0; sleep 0.1; done; return 1; }

# Another file at the store path: refused, untouched (and not moved to .prev).
echo "important" >"$T/notes.txt"
expect_exit 3 "$REVEAL" agent --listen "127.0.0.1:$(free_port)" --store "$T/notes.txt" -q
grep -q "not a Reveal store" "$T/err" || fail "foreign file: $(cat "$T/err")"
[[ $(cat "$T/notes.txt") == important && ! -e "$T/notes.txt.prev" ]] || fail "foreign file moved or changed"

# A store another agent is writing: refused, and the running agent is unharmed.
P1=$(free_port)
"$REVEAL" agent --listen "127.0.0.1:$P1" --store "$T/a.db" -q 2>"$T/a.err" &
A=$!
pids+=($A)
wait_up "$P1" || fail "first agent not up"
expect_exit 3 "$REVEAL" agent --listen "127.0.0.1:$(free_port)" --store "$T/a.db" -q
grep -q "another reveal process" "$T/err" || fail "busy store: $(cat "$T/err")"
[[ -e "$T/a.db.prev" ]] && fail "busy store was rotated"
sleep 1.5
kill -TERM $A
wait $A
rc=$?
[[ $rc == 0 ]] || fail "first agent exit $rc: $(cat "$T/a.err")"
"$REVEAL" info "$T/a.db" >/dev/null || fail "first agent's store does not load"

# Restart on the same store: it is continued (agent_restart_test.sh covers what is kept).
P2=$(free_port)
"$REVEAL" agent --listen "127.0.0.1:$P2" --store "$T/a.db" 2>"$T/b.err" &
B=$!
pids+=($B)
wait_up "$P2" || fail "second agent not up"
grep -q "continuing the store" "$T/b.err" || fail "restart did not continue the store: $(cat "$T/b.err")"
[[ -e "$T/a.db.prev" ]] && fail "a restart moved the store to .prev"

# Idle clients do not block scrapes: 12 open connections that send nothing.
for i in $(seq 12); do (exec 3<>"/dev/tcp/127.0.0.1/$P2"; sleep 6) 2>/dev/null & pids+=($!); done
sleep 0.5
code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "http://127.0.0.1:$P2/healthz")
[[ $code == 200 ]] || fail "/healthz with 12 idle connections: $code"

# Methods other than GET on the served paths: 405 with Allow; unknown paths stay 404.
code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' -X POST -d x "http://127.0.0.1:$P2/metrics")
[[ $code == 405 ]] || fail "POST /metrics: $code, want 405"
curl -s -i -m 3 -X DELETE "http://127.0.0.1:$P2/incidents" >"$T/del.txt"
grep -qi '^Allow: GET, HEAD' "$T/del.txt" || fail "405 without Allow: $(head -3 "$T/del.txt")"
code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' -X POST -d x "http://127.0.0.1:$P2/nope")
[[ $code == 404 ]] || fail "POST to an unknown path: $code, want 404"

# SIGTERM right after start: exit 0, store flushed.
kill -TERM $B
wait $B
P3=$(free_port)
"$REVEAL" agent --listen "127.0.0.1:$P3" --store "$T/c.db" -q &
C=$!
sleep 0.05
kill -TERM $C
wait $C
rc=$?
[[ $rc == 0 ]] || fail "SIGTERM 50 ms after start: exit $rc"

# A probe's source vanishing (here /proc/meminfo under --root) never stops the agent: the
# probe shows as down on /metrics with its channels missing, and comes back with the file.
cp -r "$FIX/vm-2cpu" "$T/root"
P4=$(free_port)
"$REVEAL" agent --listen "127.0.0.1:$P4" --store "$T/d.db" --root "$T/root" --probes 'proc.*' -q &
D=$!
pids+=($D)
wait_up "$P4" || fail "agent on a fixture root not up"
sleep 1.2
cp "$T/root/proc/meminfo" "$T/meminfo.away"
rm "$T/root/proc/meminfo"
sleep 2.2
curl -s "http://127.0.0.1:$P4/metrics" >"$T/gone.txt"
grep -q '^reveal_probe_up{probe="proc.meminfo"} 0' "$T/gone.txt" || fail "vanished meminfo not shown as probe down"
grep -q '^reveal_probe_up{probe="proc.stat"} 1' "$T/gone.txt" || fail "sibling probe affected"
grep -qE '^reveal_probe_errors_total\{probe="proc.meminfo"\} [1-9]' "$T/gone.txt" || fail "probe errors not counted"
cp "$T/meminfo.away" "$T/root/proc/meminfo"
sleep 2.2
curl -s "http://127.0.0.1:$P4/metrics" >"$T/back.txt"
grep -q '^reveal_probe_up{probe="proc.meminfo"} 1' "$T/back.txt" || fail "meminfo back but probe still down"
kill -0 $D 2>/dev/null || fail "agent died when a probe's file vanished"
kill -TERM $D
wait $D || fail "agent on a fixture root: exit $?"

# A listen address that does not resolve: exit 3, named as such (not a stray errno).
expect_exit 3 "$REVEAL" agent --listen "nosuchhost.invalid:$(free_port)" --store "$T/e.db" -q
grep -q "address 'nosuchhost.invalid' does not resolve" "$T/err" || fail "bad host: $(cat "$T/err")"

# Usage errors: exit 2.
expect_exit 2 "$REVEAL" agent --replay "$FIX/recordings/fleet-a.db" --store "$FIX/recordings/fleet-a.db"
grep -q "same file" "$T/err" || fail "replay onto its store: $(cat "$T/err")"
expect_exit 2 "$REVEAL" agent --listen "" --check-config
expect_exit 2 "$REVEAL" agent --store "" --check-config
expect_exit 2 "$REVEAL" agent --probes nonexist --check-config
expect_exit 2 "$REVEAL" agent --exit-after-replay --check-config
printf '[detect]\nwindow = 2\nstride = 6148914691236517206\n' >"$T/ovf.toml"
expect_exit 2 "$REVEAL" agent --config "$T/ovf.toml" --check-config

[[ $fails == 0 ]] && echo "agent bad input: all checks passed" || exit 1
