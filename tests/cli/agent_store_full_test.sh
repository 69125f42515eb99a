#!/usr/bin/env bash
# A full disk under the agent's store (issue #18): an agent replaying a fixture writes its store
# on a 4 MiB tmpfs, which is then filled. The failed write must show: /healthz answers 503
# naming it, /metrics has reveal_store_write_failed 1 (0 before), the log says so once, and
# the agent keeps serving /metrics and exits 3 on SIGTERM (a stored run that lost samples).
# Then `reveal record` on the same disk, filled while it records: exit 3 with one line naming
# the failed write and the samples kept (not a later error of closing the store).
# Needs root for the tmpfs mount; otherwise "SKIP: ..." and exit 0. About 15 seconds.
# usage: agent_store_full_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: not root (a tmpfs mount is needed to fill a disk)"
  exit 0
fi
T=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  umount "$T/small" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail
mkdir -p "$T/small"
if ! mount -t tmpfs -o size=4m tmpfs "$T/small" 2>"$T/mount.err"; then
  echo "SKIP: cannot mount a tmpfs: $(cat "$T/mount.err")"
  exit 0
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
"$REVEAL" agent --replay "$FIX/recordings/fleet-a.db" --listen "127.0.0.1:$PORT" --store "$T/small/a.db" \
  >"$T/agent.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -sf --max-time 1 "$URL/healthz" >/dev/null && break; sleep 0.2; done
[[ $(curl -s --max-time 2 "$URL/healthz") == ok ]] || fail "/healthz before the disk filled: $(curl -s "$URL/healthz")"
grep -q '^reveal_store_write_failed 0$' <(curl -s --max-time 2 "$URL/metrics") ||
  fail "no 'reveal_store_write_failed 0' before the disk filled"
sleep 2
dd if=/dev/zero of="$T/small/fill" bs=64k >/dev/null 2>&1  # until ENOSPC
ok=0
for _ in $(seq 40); do
  body=$(curl -s --max-time 2 -w ' %{http_code}' "$URL/healthz")
  [[ $body == *"store write failed"*" 503" ]] && { ok=1; break; }
  sleep 0.25
done
((ok)) || fail "/healthz did not report the failed write within 10 s: '$body'"
grep -q '^reveal_store_write_failed 1$' <(curl -s --max-time 2 "$URL/metrics") ||
  fail "/metrics lacks 'reveal_store_write_failed 1'"
n=$(grep -c "store write failed" "$T/agent.log")
[[ $n == 1 ]] || fail "the log says 'store write failed' $n times (want once): $(tail -3 "$T/agent.log")"
kill "$pid"
wait "$pid"
rc=$?
pid=
[[ $rc == 3 ]] || fail "exit $rc after SIGTERM with a failed store (want 3)"

# reveal record: the disk fills while it records.
rm -f "$T/small/fill" "$T/small"/a.db*
"$REVEAL" record -q -o "$T/small/r.db" --duration 30s --interval 100ms --probes 'proc.*' >"$T/rec.out" 2>"$T/rec.err" &
rpid=$!
sleep 3
dd if=/dev/zero of="$T/small/fill" bs=64k >/dev/null 2>&1
wait "$rpid"
rc=$?
[[ $rc == 3 ]] || fail "record on a full disk: exit $rc (want 3): $(cat "$T/rec.err")"
[[ $(grep -c . "$T/rec.err") == 1 ]] || fail "record on a full disk: want one stderr line, got: $(cat "$T/rec.err")"
grep -q "samples written before" "$T/rec.err" || fail "record on a full disk: the failed write not reported: $(cat "$T/rec.err")"

((fails == 0)) && echo "PASS: a full disk under the store shows" || { echo "$fails failure(s)"; exit 1; }
