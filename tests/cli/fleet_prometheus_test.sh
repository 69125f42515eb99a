#!/usr/bin/env bash
# The fleet through a real Prometheus: three `reveal agent --replay` processes serve the fleet
# fixtures (tests/fixtures/recordings/README.md; fleet-b had a memory and CPU hog from +30 s to
# +60 s) in real time on /metrics, a Prometheus scrapes them every second as job "reveal" with
# instance labels fleet-a/b/c, and once the replays are over
#   reveal detect --prometheus URL --match '{job="reveal"}' --start T0 --end T1 --peers
# must name fleet-b the odd host (text and JSON), and without --peers give one report per host.
# About two minutes. Skipped (exit 0, "SKIP: ...") only when there is no prometheus binary.
# usage: fleet_prometheus_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
R=$FIX/recordings
PROMETHEUS=${REVEAL_PROMETHEUS:-$(command -v prometheus || true)}
if [[ -z $PROMETHEUS || ! -x $PROMETHEUS ]]; then
  echo "SKIP: no prometheus binary (Debian: apt-get install prometheus; or set REVEAL_PROMETHEUS)"
  exit 0
fi
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
die() { echo "FAIL: $*"; for f in "$T"/*.log; do [[ -s $f ]] && { echo "--- $f"; tail -5 "$f"; }; done; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Instant query; prints the first result's value, or nothing.
query() {
  curl -sf --max-time 5 "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

PP=$(free_port)
declare -A PORT
for h in a b c; do PORT[$h]=$(free_port); done
[[ $(printf '%s\n' "$PP" "${PORT[@]}" | sort -u | wc -l) == 4 ]] || die "could not find four free ports"
SAMPLES=$("$REVEAL" info "$R/fleet-a.db" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["samples"])')

cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: reveal
    static_configs:
      - targets: ["127.0.0.1:${PORT[a]}"]
        labels: {instance: fleet-a}
      - targets: ["127.0.0.1:${PORT[b]}"]
        labels: {instance: fleet-b}
      - targets: ["127.0.0.1:${PORT[c]}"]
        labels: {instance: fleet-c}
EOF
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
  --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$T/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf --max-time 1 "http://127.0.0.1:$PP/-/ready" >/dev/null && break; sleep 0.2; done
curl -sf --max-time 1 "http://127.0.0.1:$PP/-/ready" >/dev/null || die "Prometheus did not become ready"

T0=$(date +%s)
for h in a b c; do
  "$REVEAL" agent --replay "$R/fleet-$h.db" --listen "127.0.0.1:${PORT[$h]}" --store "$T/$h.db" >"$T/agent-$h.log" 2>&1 &
  pids+=($!)
done
for h in a b c; do
  for _ in $(seq 50); do curl -sf --max-time 1 "http://127.0.0.1:${PORT[$h]}/metrics" >/dev/null && break; sleep 0.2; done
  curl -sf --max-time 1 "http://127.0.0.1:${PORT[$h]}/metrics" >"$T/metrics-$h.txt" || die "agent fleet-$h does not serve /metrics"
done
grep -q '^reveal_build_info{.*mode="replay"' "$T/metrics-a.txt" || fail "agent not in replay mode: $(grep build_info "$T/metrics-a.txt")"

# The replays last about as long as the recordings; wait until every agent has served all its
# samples (or exited), as Prometheus saw it.
echo "replaying $SAMPLES samples per host; waiting..."
deadline=$((T0 + SAMPLES + 90))
while :; do
  done_n=$(query "min(max_over_time(reveal_samples_total{job=\"reveal\"}[10m]))")
  hosts_n=$(query "count(max_over_time(reveal_samples_total{job=\"reveal\"}[10m]))")
  [[ $hosts_n == 3 && -n $done_n ]] && python3 -c "import sys; sys.exit(0 if float('$done_n') >= $SAMPLES else 1)" && break
  (($(date +%s) > deadline)) && die "replays not over after $((deadline - T0)) s (hosts $hosts_n, min samples $done_n of $SAMPLES)"
  sleep 2
done
sleep 2  # the last scrape
# The range: from the agents' start to the last sample of the replay that finished first.
T1=$(query "min(max_over_time(reveal_last_sample_timestamp_seconds{job=\"reveal\"}[10m]))")
T1=${T1%.*}
[[ -n $T1 ]] || die "no reveal_last_sample_timestamp_seconds in Prometheus"
echo "range $T0 .. $T1 ($((T1 - T0)) s)"
for h in a b c; do [[ $(query "up{job=\"reveal\",instance=\"fleet-$h\"}") == 1 ]] || echo "note: fleet-$h no longer up (replay over)"; done

URL=http://127.0.0.1:$PP
expect_exit 0 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --peers
cp "$T/out" "$T/peers.txt"
sed -n '1,/^odd host\|^no /p' "$T/peers.txt" | tail -8
grep -q "^odd host: fleet-b" "$T/peers.txt" || fail "fleet-b not named odd: $(cat "$T/peers.txt" "$T/err" | head -30)"
grep -q "compared at the same time" "$T/peers.txt" || fail "hosts not compared at the same time: $(head -3 "$T/peers.txt")"

expect_exit 0 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --peers --json
python3 - "$T/out" <<'PY' || fail "peers JSON through Prometheus"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["odd_host"] == "fleet-b", d["odd_host"]
assert sorted(h["host"] for h in d["hosts"]) == ["fleet-a", "fleet-b", "fleet-c"], d["hosts"]
assert d["alignment"]["mode"] == "same time", d["alignment"]
rep = d["hosts"][0]["report"]
assert rep["channels"]["recorded"] > 100, rep["channels"]
assert rep["run"]["command"].startswith("prometheus http://127.0.0.1:"), rep["run"]["command"]
PY

# Without --peers: one self-referenced report per host, fleet-b's incident among them.
expect_exit 0 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --json
python3 - "$T/out" <<'PY' || fail "per-host reports through Prometheus"
import json, sys
docs = json.load(open(sys.argv[1]))
assert [d["run"]["hostname"] for d in docs] == ["fleet-a", "fleet-b", "fleet-c"], [d["run"]["hostname"] for d in docs]
b = docs[1]
assert b["reference"]["mode"] == "self" and b["incidents"], b["incidents"]
PY
# The same as one HTML report: a section per host, fleet-b's incident card among them.
expect_exit 0 "$REVEAL" report --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" -o "$T/fleet.html"
grep -q "3 hosts" "$T/out" || fail "report --prometheus: $(cat "$T/out")"
n=$(grep -o '<article class="host"' "$T/fleet.html" | wc -l)
((n == 3)) || fail "report --prometheus: $n host sections, want 3"
grep -q '<section class="incident"' "$T/fleet.html" || fail "report --prometheus: no incident card"
# --fail-on-incident: fleet-b has an incident, so 1 (per-host and --peers), the report printed.
expect_exit 1 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --fail-on-incident
grep -q "^SUMMARY: " "$T/out" || fail "no report with --fail-on-incident: $(head -3 "$T/out")"
expect_exit 1 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --peers --fail-on-incident
grep -q "^odd host: fleet-b" "$T/out" || fail "no peers report with --fail-on-incident: $(head -3 "$T/out")"
# A selector that matches nothing: exit 3, one line.
expect_exit 3 "$REVEAL" detect --prometheus "$URL" --match '{job="nope"}' --start "$T0" --end "$T1"
grep -q "no series matches" "$T/err" || fail "no-match error: $(cat "$T/err")"

((fails == 0)) && echo "PASS: fleet through Prometheus" || { echo "$fails failure(s)"; exit 1; }
