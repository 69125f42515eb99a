#!/usr/bin/env bash
# Bad input to the CLI: each case must exit with the documented code and print exactly one
# "reveal: error:" line on stderr, never crash.  usage: bad_input_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

expect() {  # expect CODE NEEDLE -- ARGS...
  local code=$1 needle=$2; shift 3
  "$REVEAL" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  local lines; lines=$(grep -c . "$T/err")
  if [[ $rc -ne $code || $lines -ne 1 ]] || ! grep -q -- "$needle" "$T/err"; then
    echo "FAIL: reveal $* -> rc=$rc (want $code), stderr ($lines lines):"; sed 's/^/  /' "$T/err"
    fails=$((fails + 1))
  else
    echo "ok:   reveal $* -> $rc: $(cat "$T/err")"
  fi
}

# Usage errors: exit 2.
expect 2 "error" -- --no-such-flag
expect 2 "error" -- detect
expect 2 "error" -- detect x.db --no-such-flag
expect 2 "error" -- record
expect 2 "interval" -- record -o "$T/x.db" --interval 0s --duration 1s
expect 2 "duration" -- record -o "$T/x.db" --duration banana
expect 2 "unknown probe" -- probes --probes no.such.probe
expect 2 "error" -- nosuchcommand
# --baseline takes one file each time, never a flag; what follows it is the run.
expect 2 "not the flag --json" -- detect "$FIX/recordings/fleet-a.db" --baseline --json
expect 2 "after its own --baseline" -- detect "$FIX/recordings/fleet-a.db" --baseline "$FIX/recordings/fleet-c.db" "$FIX/recordings/fleet-b.db"
expect 2 "empty value" -- agent --store-max-size ""
expect 2 "--window-z needs --json" -- detect "$FIX/recordings/fleet-a.db" --window-z
expect 2 "empty URL" -- detect --prometheus "" --start -1m
expect 2 "--agent-config needs --streaming" -- detect "$FIX/recordings/fleet-a.db" --agent-config /dev/null
expect 2 "does not combine with --streaming" -- detect "$FIX/recordings/fleet-a.db" --streaming --html "$T/r.html"
expect 2 "--settle does not apply to --streaming" -- detect "$FIX/recordings/fleet-a.db" --streaming --settle 5s
expect 2 "--streaming analyses each host alone (not --peers)" -- detect --peers "$FIX/recordings/fleet-a.db" "$FIX/recordings/fleet-b.db" --streaming
expect 3 "--agent-config" -- detect "$FIX/recordings/fleet-a.db" --streaming --agent-config "$FIX/recordings/fleet-b.db"
expect 3 "No such file" -- detect "$FIX/recordings/fleet-a.db" --streaming --agent-config "$T/missing.toml"
expect 2 "given twice" -- docs metrics --root "$FIX/vm-2cpu" --root "$FIX/vm-2cpu"
expect 2 "seed" -- detect "$FIX/recordings/fleet-a.db" --seed -1

expect 2 "output" -- report "$FIX/recordings/fleet-a.db"
expect 2 "json" -- report "$FIX/recordings/fleet-a.db" -o "$T/r.html" --json

# Input errors: exit 3.
expect 3 "no such file" -- report "$T/missing.db" -o "$T/r.html"
expect 3 "cannot write $T/no/such/dir/r.html" -- report "$FIX/recordings/fleet-a.db" -o "$T/no/such/dir/r.html"
expect 3 "cannot write $T/no/r.html" -- detect "$FIX/recordings/fleet-a.db" --html "$T/no/r.html"
expect 3 "no such file" -- detect "$T/missing.db"
: >"$T/empty.db"
expect 3 "empty" -- detect "$T/empty.db"
echo "not a database" >"$T/text.db"
expect 3 "not a Reveal store" -- detect "$T/text.db"
expect 3 "is a directory" -- detect "$T"

# A real store, then broken copies of it.
"$REVEAL" record -q -o "$T/good.db" --interval 100ms --duration 2s || {
  echo "FAIL: could not record a fixture store"; exit 1; }
"$REVEAL" detect "$T/good.db" >/dev/null || { echo "FAIL: detect on a good store"; fails=$((fails + 1)); }
size=$(stat -c %s "$T/good.db")
head -c $((size / 2)) "$T/good.db" >"$T/trunc.db"
expect 3 "$T/trunc.db" -- detect "$T/trunc.db"
cp "$T/good.db" "$T/corrupt.db"
dd if=/dev/urandom of="$T/corrupt.db" bs=1024 seek=1 count=$(((size / 1024) - 2)) conv=notrunc status=none
expect 3 "$T/corrupt.db" -- detect "$T/corrupt.db"
"$REVEAL" record -q -o "$T/one.db" --root "$FIX/vm-2cpu" --exclude 'perf*' --interval 100ms --duration 1ms
expect 3 "samples" -- detect "$T/one.db"
expect 3 "no such file" -- detect "$T/good.db" --baseline "$T/missing.db"
expect 2 "false-per-day" -- detect "$T/good.db" --false-per-day 0
expect 2 "false-per-day" -- detect "$T/good.db" --false-per-day nan
expect 2 "pearson-cut" -- detect "$T/good.db" --pearson-cut 1.5

# -o never clobbers what is not a store, and a failed start leaves an existing store intact.
echo "precious" >"$T/notes.txt"
expect 3 "refusing to overwrite" -- record -o "$T/notes.txt" --duration 1s
grep -q precious "$T/notes.txt" || { echo "FAIL: -o clobbered a non-store file"; fails=$((fails + 1)); }
mkdir "$T/adir"
expect 3 "not a regular file" -- record -o "$T/adir" --duration 1s
expect 2 "empty" -- record -o "" --duration 1s
cp "$T/good.db" "$T/keep.db"
expect 3 "cannot run" -- record -o "$T/keep.db" --duration 1s -- /no/such/command
"$REVEAL" detect "$T/keep.db" >/dev/null || { echo "FAIL: failed start destroyed an existing store"; fails=$((fails + 1)); }
expect 3 "not a directory" -- probes --root "$T/no-such-root"
expect 3 "not a directory" -- record -o "$T/r.db" --root /etc/passwd --duration 1s
# A report that cannot be written is an error, not a silent truncation.
if [[ -c /dev/full ]]; then
  "$REVEAL" detect "$T/good.db" --json >/dev/full 2>"$T/err"; rc=$?
  if [[ $rc -ne 3 ]] || ! grep -q "cannot write" "$T/err"; then
    echo "FAIL: detect > /dev/full -> rc=$rc: $(cat "$T/err")"; fails=$((fails + 1))
  else echo "ok:   reveal detect > /dev/full -> 3: $(cat "$T/err")"; fi
fi
# A second recorder on a store being recorded is refused and the first one's data survives.
"$REVEAL" record -q -o "$T/busy.db" --interval 100ms --duration 3s &
busy=$!
sleep 1
expect 3 "being recorded by another reveal" -- record -o "$T/busy.db" --duration 1s
wait $busy || { echo "FAIL: first recorder failed"; fails=$((fails + 1)); }
n=$("$REVEAL" info "$T/busy.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
[[ $n -ge 25 ]] || { echo "FAIL: the first recording lost samples ($n)"; fails=$((fails + 1)); }
# ...and once it has finished, the store can be replaced again.
"$REVEAL" record -q -o "$T/busy.db" --interval 100ms --duration 200ms || { echo "FAIL: re-record after finish"; fails=$((fails + 1)); }

# A killed recorder leaves a store that still opens, with a note.
"$REVEAL" record -q -o "$T/killed.db" --interval 50ms --duration 30s &
sleep 1.5; kill -9 $!; wait $! 2>/dev/null
"$REVEAL" detect "$T/killed.db" | grep -q "did not finish cleanly" || { echo "FAIL: killed store not noted"; fails=$((fails + 1)); }

# An unwritable output path: one line, input error.
expect 3 "cannot create store" -- record -o /proc/nope/x.db --duration 1s

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "all bad-input cases passed"
