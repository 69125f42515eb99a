#!/usr/bin/env bash
# `reveal config show|diff`: two short recordings over copies of a fixture root that differ
# in eth0's MTU, the CPU governor and one extra interface, then a live change during a
# recording.  usage: config_diff_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() {  # has FILE REGEX
  grep -Eq -- "$2" "$1" || { fail "$1 lacks /$2/:"; sed 's/^/  /' "$1"; }
}

cp -r "$FIX/config-2socket" "$T/a"
cp -r "$FIX/config-2socket" "$T/b"
echo 9000 >"$T/b/sys/class/net/eth0/mtu"
for g in "$T"/b/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do echo powersave >"$g"; done
rm -r "$T/b/sys/class/net/veth1"
mkdir -p "$T/b/sys/class/net/ib0" && echo 2044 >"$T/b/sys/class/net/ib0/mtu"

rec() { "$REVEAL" record -q -o "$1" --root "$2" --probes proc.stat --duration 300ms --interval 100ms; }
rec "$T/a.db" "$T/a" || fail "record a"
rec "$T/b.db" "$T/b" || fail "record b"

"$REVEAL" config diff "$T/a.db" "$T/b.db" >"$T/diff.txt"; rc=$?
[[ $rc -eq 0 ]] || fail "config diff exit $rc (want 0)"
has "$T/diff.txt" "^only in A: 2$"
has "$T/diff.txt" "^  net\.veth1\.mtu +1500$"
has "$T/diff.txt" "^  net\.veth1\.operstate +up$"
has "$T/diff.txt" "^only in B: 1$"
has "$T/diff.txt" "^  net\.ib0\.mtu +2044$"
has "$T/diff.txt" "^different: 2$"
has "$T/diff.txt" "^  cpu\.governor +performance +powersave$"
has "$T/diff.txt" "^  net\.eth0\.mtu +1500 +9000$"
# Aligned: the value columns of the "different" rows start at the same offset.
cols=$(grep -E '^  (cpu\.governor|net\.eth0\.mtu) ' "$T/diff.txt" | awk '{print index($0, $2) "," index($0, $3)}' | sort -u | wc -l)
[[ $cols -eq 1 ]] || { fail "different rows not aligned"; cat "$T/diff.txt"; }

"$REVEAL" config diff "$T/a.db" "$T/a.db" >"$T/same.txt" || fail "self diff exit"
has "$T/same.txt" "^different: 0$"

"$REVEAL" config diff --json "$T/a.db" "$T/b.db" >"$T/diff.json" || fail "diff --json exit"
has "$T/diff.json" '"schema": "reveal.config_diff/1"'
has "$T/diff.json" '"net.eth0.mtu": \{'
if command -v python3 >/dev/null; then
  python3 - "$T/diff.json" <<'PY' || fail "diff JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["different"]["net.eth0.mtu"] == {"a": "1500", "b": "9000"}, d
assert d["different"]["cpu.governor"] == {"a": "performance", "b": "powersave"}, d
assert d["only_in_a"] == {"net.veth1.mtu": "1500", "net.veth1.operstate": "up"}, d
assert d["only_in_b"] == {"net.ib0.mtu": "2044"}, d
PY
fi

# Against a live root: a.db vs the b tree.
"$REVEAL" config diff "$T/a.db" --root "$T/b" >"$T/live.txt" || fail "diff --root exit"
has "$T/live.txt" "^  net\.eth0\.mtu +1500 +9000$"

"$REVEAL" config show "$T/a.db" >"$T/show.txt" || fail "show exit"
has "$T/show.txt" "^configuration of .*a\.db at start"
has "$T/show.txt" "^  net\.eth0\.pcie\.current_link_width +8$"
has "$T/show.txt" "^  thp\.enabled +madvise$"
has "$T/show.txt" "^changes during the run: 0$"

# A change while recording (re-read every 200 ms = 10 samples): MTU 1500 -> 9000 shows up as a change
# and as a config_change event.
cp -r "$FIX/config-2socket" "$T/c"
"$REVEAL" record -q -o "$T/c.db" --root "$T/c" --probes proc.stat --duration 3s --interval 20ms --config-interval 200ms &
pid=$!
sleep 1
echo 9000 >"$T/c/sys/class/net/eth0/mtu"
wait $pid || fail "record c"
"$REVEAL" config show "$T/c.db" >"$T/c.txt" || fail "show c exit"
has "$T/c.txt" "^changes during the run: 1$"
has "$T/c.txt" "net\.eth0\.mtu +1500 → 9000$"
"$REVEAL" config show --json "$T/c.db" >"$T/c.json" || fail "show --json exit"
has "$T/c.json" '"new": "9000"'
if command -v sqlite3 >/dev/null; then
  sqlite3 "$T/c.db" "SELECT source, kind, detail FROM events" >"$T/ev.txt"
  has "$T/ev.txt" "^config\|config_change\|net\.eth0\.mtu: 1500 → 9000$"
fi

# Errors: usage 2, input 3, one line each.
"$REVEAL" config diff "$T/a.db" 2>"$T/err"; rc=$?
[[ $rc -eq 2 && $(grep -c . "$T/err") -eq 1 ]] || fail "diff with one store: rc=$rc $(cat "$T/err")"
"$REVEAL" config show "$T/missing.db" 2>"$T/err"; rc=$?
[[ $rc -eq 3 && $(grep -c . "$T/err") -eq 1 ]] || fail "show missing: rc=$rc $(cat "$T/err")"
"$REVEAL" config diff "$T/a.db" --root "$T/no-such-root" 2>"$T/err"; rc=$?
[[ $rc -eq 3 && $(grep -c . "$T/err") -eq 1 ]] || fail "diff --root missing: rc=$rc $(cat "$T/err")"
"$REVEAL" config 2>"$T/err"; rc=$?
[[ $rc -eq 2 ]] || fail "bare config: rc=$rc"

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "config diff/show: all passed"
