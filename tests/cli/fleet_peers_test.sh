#!/usr/bin/env bash
# `reveal detect --peers` over stores: the three fleet fixtures (tests/fixtures/recordings/
# README.md; fleet-b had a memory and CPU hog from +30 s to +60 s) recorded one after another,
# so they are compared by time since each run's start: fleet-b must be named the odd host, in
# text and JSON, whatever the order of the stores. And the usage rules of --peers, several
# stores and the --prometheus flags (exit 2), and a Prometheus that is not there (exit 3, one line).
# usage: fleet_peers_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
R=$FIX/recordings
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
one_error_line() {  # needle: stderr is one "reveal: error:" line holding it
  [[ $(grep -c . "$T/err") == 1 ]] || fail "want one stderr line, got: $(cat "$T/err")"
  grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(cat "$T/err")"
}

expect_exit 0 "$REVEAL" detect --peers "$R/fleet-a.db" "$R/fleet-b.db" "$R/fleet-c.db"
cp "$T/out" "$T/peers.txt"
grep -q "^odd host: .*fleet-b\.db" "$T/peers.txt" || fail "fleet-b not named: $(cat "$T/peers.txt")"
grep -q "compared by time since each run's start" "$T/peers.txt" || fail "alignment not reported: $(head -5 "$T/peers.txt")"
sed -n '/^odd host:/,/^$/p' "$T/peers.txt"

expect_exit 0 "$REVEAL" detect --peers "$R/fleet-c.db" "$R/fleet-b.db" "$R/fleet-a.db" --json
python3 - "$T/out" <<'PY' || fail "peers JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "reveal.peers/1", d["schema"]
assert d["odd_host"].endswith("fleet-b.db"), d["odd_host"]
assert d["alignment"]["mode"] == "offset", d["alignment"]
hosts = d["hosts"]
assert [h["rank"] for h in hosts] == [1, 2, 3] and hosts[0]["host"] == d["odd_host"], hosts
assert hosts[0]["score"] >= 2 * hosts[1]["score"] > -1, [(h["host"], h["score"]) for h in hosts]
assert d["strongest_channels"], "no strongest channels"
rep = hosts[0]["report"]
assert rep["schema"] == "reveal.detect/1" and rep["incidents"], rep.get("incidents")
# The fault ran from +30 s to +60 s: the odd host's longest incident overlaps it.
inc = max(rep["incidents"], key=lambda i: i["end_s"] - i["start_s"])
assert inc["start_s"] < 60 and inc["end_s"] > 30, (inc["start_s"], inc["end_s"])
PY

# --- usage ------------------------------------------------------------------------------------
expect_exit 2 "$REVEAL" detect "$R/fleet-a.db" "$R/fleet-b.db"
one_error_line "only with --peers"
expect_exit 2 "$REVEAL" detect --peers "$R/fleet-a.db"
one_error_line "at least two stores"
expect_exit 2 "$REVEAL" detect --peers "$R/fleet-a.db" "$R/fleet-b.db" --baseline "$R/fleet-c.db"
one_error_line "--baseline does not apply"
expect_exit 2 "$REVEAL" detect "$R/fleet-a.db" --start -10m
one_error_line "--start needs --prometheus"
expect_exit 2 "$REVEAL" detect --prometheus http://127.0.0.1:9 "$R/fleet-a.db"
one_error_line "not both"
expect_exit 2 "$REVEAL" detect --peers
one_error_line "required"

# --- --prometheus without a server, with bad times and selectors --------------------------------
"$REVEAL" detect --prometheus http://127.0.0.1:9 --start -1m >"$T/out" 2>"$T/err"
if grep -q "built without HTTP support" "$T/err"; then
  echo "skip: this reveal has no --prometheus (built with REVEAL_STATIC_DEPS)"
else
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  expect_exit 3 "$REVEAL" detect --prometheus "http://127.0.0.1:$port" --start -1m --end now
  one_error_line "Prometheus at http://127.0.0.1:$port: cannot connect"
  expect_exit 2 "$REVEAL" detect --prometheus "http://127.0.0.1:$port" --start yesterday
  one_error_line "--start: 'yesterday' is not a time"
  expect_exit 2 "$REVEAL" detect --prometheus "http://127.0.0.1:$port" --start 2026-11-30T21:00:00Z --end 2026-11-30T20:00:00Z
  one_error_line "--end is before --start"
  expect_exit 2 "$REVEAL" detect --prometheus "http://127.0.0.1:$port" --start -1m --match 'rate(x[5m])'
  one_error_line "--match: 'rate(x[5m])' is not a series selector"
  expect_exit 2 "$REVEAL" detect --prometheus "http://127.0.0.1:$port" --start -1m --step 0s
  one_error_line "--step"
  expect_exit 2 "$REVEAL" detect --prometheus "127.0.0.1:$port" --start -1m
  one_error_line "must start with http:// or https://"
fi

((fails == 0)) && echo "PASS: fleet peers" || { echo "$fails failure(s)"; exit 1; }
