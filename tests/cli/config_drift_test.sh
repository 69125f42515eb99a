#!/usr/bin/env bash
# `reveal config drift` (issue #22): a fleet of five fixture hosts (copies of
# tests/fixtures/config-2socket, MTU 9000 and NIC PCIe links at x16) in which host-c has a lowered
# MTU and host-d's NIC trained its PCIe link at x8. Read four ways — the live roots (--root), stores
# recorded over them, the agents replaying those stores behind a real Prometheus that scrapes
# their reveal_host_config_info (--prometheus), and the stores exported as OpenMetrics and
# backfilled into another Prometheus (parts 3 and 4 are skipped, saying so, only when there is
# no prometheus or promtool binary) — each must rank exactly those two settings first, with their
# hosts and actions, and nothing else.
# usage: config_drift_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
T=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
has() {  # has FILE REGEX
  grep -Eq -- "$2" "$1" || { fail "$1 lacks /$2/:"; sed 's/^/  /' "$1"; }
}

HOSTS="host-a host-b host-c host-d host-e"
for h in $HOSTS; do
  cp -r "$FIX/config-2socket" "$T/$h"
  echo 9000 >"$T/$h/sys/class/net/eth0/mtu"
  echo 16 >"$T/$h/sys/class/net/eth0/device/current_link_width"
done
echo 1500 >"$T/host-c/sys/class/net/eth0/mtu"
echo 8 >"$T/host-d/sys/class/net/eth0/device/current_link_width"

# The two drifts, ranked first, in text: $1 = the output, $2 = how host-c/host-d are named.
check_text() {
  local out=$1 c=$2 d=$3
  has "$out" "^configuration drift across 5 hosts: 2 settings where a minority differs, 0 split"
  has "$out" "^ 1\. net\.eth0\.mtu  \(network, high importance\)$"
  has "$out" "^      1500 on $c$"
  has "$out" "^      the rest: 9000 on 4 of 5 hosts$"
  has "$out" "^      action: set the MTU the rest of the fleet has on $c: ip link set dev eth0 mtu 9000$"
  has "$out" "^ 2\. net\.eth0\.pcie\.current_link_width  \(interconnect, high importance\)$"
  has "$out" "^      8 on $d$"
  has "$out" "reseat the NIC eth0 on $d"
  [[ $(grep -c '^ *[0-9]\+\. ' "$out") == 2 ]] || { fail "more than two drifts in $out"; cat "$out"; }
}

# 1. Live roots.
args=()
for h in $HOSTS; do args+=(--root "$T/$h"); done
expect_exit 0 "$REVEAL" config drift "${args[@]}"
cp "$T/out" "$T/roots.txt"
check_text "$T/roots.txt" "$T/host-c" "$T/host-d"

# 2. Stores recorded over them (and JSON).
for h in $HOSTS; do
  "$REVEAL" record -q -o "$T/$h.db" --root "$T/$h" --probes proc.stat --duration 300ms --interval 100ms ||
    fail "record $h"
done
expect_exit 0 "$REVEAL" config drift "$T"/host-?.db
cp "$T/out" "$T/stores.txt"
check_text "$T/stores.txt" "$T/host-c.db" "$T/host-d.db"
expect_exit 0 "$REVEAL" config drift --json "$T"/host-?.db
python3 - "$T/out" "$T" <<'PY' || fail "drift JSON"
import json, sys
d, t = json.load(open(sys.argv[1])), sys.argv[2]
assert d["schema"] == "reveal.config_drift/1", d["schema"]
assert d["hosts"] == [f"{t}/host-{h}.db" for h in "abcde"], d["hosts"]
assert [x["key"] for x in d["drifts"]] == ["net.eth0.mtu", "net.eth0.pcie.current_link_width"], d["drifts"]
mtu = d["drifts"][0]
assert mtu["importance"] == "high" and mtu["area"] == "network", mtu
assert mtu["majority"] == {"value": "9000", "hosts": 4}, mtu["majority"]
assert mtu["minority"] == [{"value": "1500", "hosts": [f"{t}/host-c.db"]}], mtu["minority"]
assert 0 < mtu["score"] <= 1, mtu
assert d["split"] == [] and d["same"] > 20, (d["split"], d["same"])
PY

# --root takes one directory each time; a store after it is a store.
expect_exit 0 "$REVEAL" config drift --root "$T/host-a" "$T/host-b.db" --root "$T/host-c" "$T/host-d.db" "$T/host-e.db"
has "$T/out" "^configuration drift across 5 hosts: 2 settings where a minority differs"

# Alike hosts: no drift. Bad use: one line, exit 2.
expect_exit 0 "$REVEAL" config drift "$T/host-a.db" "$T/host-b.db" "$T/host-e.db"
has "$T/out" "^configuration drift across 3 hosts: 0 settings where a minority differs, 0 split"
expect_exit 2 "$REVEAL" config drift "$T/host-a.db"
has "$T/err" "at least two"
expect_exit 2 "$REVEAL" config drift "$T/host-a.db" "$T/host-b.db" --match '{job="x"}'
has "$T/err" "go with --prometheus"
# A malformed selector or URL is bad use too (exit 2, as `reveal detect --match`), found before
# anything is asked: no server listens here.
expect_exit 2 "$REVEAL" config drift --prometheus http://127.0.0.1:1 --match '{job='
has "$T/err" "^reveal: error: --match: '{job=' is not a series selector"
expect_exit 2 "$REVEAL" config drift --prometheus 'ftp://127.0.0.1:1'
has "$T/err" "^reveal: error: --prometheus: "
echo garbage >"$T/bad.db"
expect_exit 3 "$REVEAL" config drift "$T/host-a.db" "$T/bad.db"
[[ $(wc -l <"$T/err") == 1 ]] || fail "a corrupt store: not one line: $(cat "$T/err")"

# Hostile or odd hosts: the same store twice is refused; a store without a snapshot and an empty
# directory are left out on one line each; a value with a newline and escape bytes, and one of
# 20 kB, print as one printable line of at most 1024 bytes; a FIFO in a root does not hang it.
expect_exit 2 "$REVEAL" config drift "$T/host-a.db" "$T/host-b.db" "$T/host-a.db"
has "$T/err" "given twice"
cp "$T/host-e.db" "$T/noconf.db"
sqlite3 "$T/noconf.db" "DELETE FROM config" 2>/dev/null || python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM config'); c.commit()" "$T/noconf.db"
mkdir -p "$T/emptyroot"
expect_exit 0 "$REVEAL" config drift "$T/host-a.db" "$T/host-b.db" "$T/noconf.db" --root "$T/emptyroot"
has "$T/err" "noconf.db has no configuration snapshot; left out"
has "$T/err" "emptyroot has no configuration snapshot; left out"
has "$T/out" "^configuration drift across 2 hosts: 0 settings"
cp -r "$T/host-a" "$T/odd"
printf 'x\nreveal: error: injected\033[31m\n' >"$T/odd/proc/sys/net/ipv4/tcp_congestion_control"
python3 -c "print('ro ' + 'A' * 20000)" >"$T/odd/proc/cmdline"
rm -f "$T/odd/proc/sys/kernel/osrelease" && mkfifo "$T/odd/proc/sys/kernel/osrelease"
timeout 20 "$REVEAL" config drift --root "$T/host-a" --root "$T/host-b" --root "$T/odd" >"$T/out" 2>"$T/err"
rc=$?
[[ $rc == 0 ]] || fail "odd root: exit $rc (124: hung on a FIFO): $(head -c 300 "$T/err")"
grep -q "^reveal: error: injected" "$T/out" && fail "a value's newline reached the output as a line of its own"
grep -q $'\033' "$T/out" && fail "an escape byte reached the terminal"
awk 'length > 1100 { bad = 1 } END { exit bad }' "$T/out" || fail "a line over 1100 bytes: the 20-kB command line was not cut"
has "$T/out" "x.reveal: error: injected\?\[31m on "

# 3. The agents behind a real Prometheus.
PROMETHEUS=${REVEAL_PROMETHEUS:-$(command -v prometheus || true)}
if [[ -z $PROMETHEUS || ! -x $PROMETHEUS ]]; then
  echo "SKIP (part 3 only): no prometheus binary (Debian: apt-get install prometheus; or set REVEAL_PROMETHEUS)"
  ((fails == 0)) && echo "PASS: config drift (roots, stores)"
  exit $((fails > 0))
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PP=$(free_port)
declare -A PORT
targets=""
for h in $HOSTS; do
  PORT[$h]=$(free_port)
  targets+="      - targets: [\"127.0.0.1:${PORT[$h]}\"]"$'\n'"        labels: {instance: $h}"$'\n'
done
[[ $(printf '%s\n' "$PP" "${PORT[@]}" | sort -u | wc -l) == 6 ]] || { fail "could not find six free ports"; exit 1; }
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: reveal
    static_configs:
$targets
EOF
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
  --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$T/prometheus.log" 2>&1 &
pids+=($!)
for h in $HOSTS; do
  "$REVEAL" agent --replay "$T/$h.db" --listen "127.0.0.1:${PORT[$h]}" --store "$T/agent-$h.db" >"$T/agent-$h.log" 2>&1 &
  pids+=($!)
done
URL=http://127.0.0.1:$PP
n=0
for _ in $(seq 150); do
  n=$(curl -sf --max-time 2 "$URL/api/v1/query" --data-urlencode 'query=count(reveal_host_config_info{key="net.eth0.mtu"})' |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)' 2>/dev/null)
  [[ $n == 5 ]] && break
  sleep 0.2
done
if [[ $n != 5 ]]; then
  fail "Prometheus holds reveal_host_config_info of ${n:-0} agents, want 5"
  tail -3 "$T"/prometheus.log "$T"/agent-host-a.log
  exit 1
fi
expect_exit 0 "$REVEAL" config drift --prometheus "$URL" --match '{job="reveal"}'
cp "$T/out" "$T/prom.txt"
check_text "$T/prom.txt" host-c host-d
expect_exit 0 "$REVEAL" config drift --prometheus "$URL" --match '{job="reveal"}' --at now --json
python3 - "$T/out" <<'PY' || fail "drift JSON through Prometheus"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hosts"] == ["host-a", "host-b", "host-c", "host-d", "host-e"], d["hosts"]
assert [x["key"] for x in d["drifts"]] == ["net.eth0.mtu", "net.eth0.pcie.current_link_width"], d["drifts"]
assert d["drifts"][1]["minority"] == [{"value": "8", "hosts": ["host-d"]}], d["drifts"][1]
PY
# Nothing there: one line naming the server, exit 3; a metric name in --match: bad use, exit 2.
expect_exit 3 "$REVEAL" config drift --prometheus "$URL" --match '{job="nobody"}'
has "$T/err" "^reveal: error: Prometheus at $URL: no agent exposed reveal_host_config_info"
expect_exit 2 "$REVEAL" config drift --prometheus "$URL" --match 'up{job="reveal"}'
has "$T/err" "^reveal: error: --match: 'up{job=\"reveal\"}' names a metric"

# 4. The stores backfilled (reveal export --format openmetrics, promtool) into a Prometheus of
# their own: the configuration comes back at the stores' time.
PROMTOOL=${REVEAL_PROMTOOL:-$(command -v promtool || true)}
if [[ -z $PROMTOOL || ! -x $PROMTOOL ]]; then
  echo "SKIP (part 4 only): no promtool binary"
  ((fails == 0)) && echo "PASS: config drift (roots, stores, Prometheus)"
  exit $((fails > 0))
fi
for h in $HOSTS; do
  "$REVEAL" export "$T/$h.db" --format openmetrics --label "instance=$h" -o "$T/$h.om" 2>"$T/export.log" ||
    fail "export $h: $(cat "$T/export.log")"
done
has "$T/host-c.om" '^reveal_host_config_info\{key="net\.eth0\.mtu",value="1500",job="reveal",instance="host-c"\} 1 [0-9]+\.[0-9]{3}$'
[[ $(head -1 "$T/host-c.om") == reveal_proc_stat_* ]] || fail "the first line is not a channel's: $(head -1 "$T/host-c.om")"
{
  for h in $HOSTS; do grep -v '^# EOF' "$T/$h.om"; done
  echo '# EOF'
} >"$T/fleet.om"
AT=$(awk '$1 != "#" && $NF > t {t = $NF} END {print int(t) + 1}' "$T/fleet.om")  # after every host's last sample
"$PROMTOOL" tsdb create-blocks-from openmetrics "$T/fleet.om" "$T/tsdb2" >"$T/promtool.log" 2>&1 ||
  fail "promtool: $(tail -3 "$T/promtool.log")"
PP2=$(free_port)
printf 'global:\n  scrape_interval: 15s\n' >"$T/prometheus2.yml"
"$PROMETHEUS" --config.file="$T/prometheus2.yml" --storage.tsdb.path="$T/tsdb2" --storage.tsdb.retention.time=100y \
  --web.listen-address="127.0.0.1:$PP2" --log.level=warn >"$T/prometheus2.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do curl -sf --max-time 1 "http://127.0.0.1:$PP2/-/ready" >/dev/null && break; sleep 0.2; done
expect_exit 0 "$REVEAL" config drift --prometheus "http://127.0.0.1:$PP2" --at "$AT"
cp "$T/out" "$T/backfill.txt"
check_text "$T/backfill.txt" host-c host-d
# Ten minutes later nothing is there any more (the 5-minute lookback): one line, exit 3.
expect_exit 3 "$REVEAL" config drift --prometheus "http://127.0.0.1:$PP2" --at "$((AT + 600))"
has "$T/err" "no agent exposed reveal_host_config_info in the 5 minutes before"

((fails == 0)) && echo "PASS: config drift (roots, stores, Prometheus scraping agents, Prometheus backfilled)"
exit $((fails > 0))
