#!/usr/bin/env bash
# The fleet through a real Prometheus: three `reveal agent --replay` processes serve the fleet
# fixtures (tests/fixtures/recordings/README.md; fleet-b had a memory and CPU hog from +30 s to
# +60 s) in real time on /metrics, a Prometheus scrapes them every second as job "reveal" with
# instance labels fleet-a/b/c, and once the replays are over
#   reveal detect --prometheus URL --match '{job="reveal"}' --start T0 --end T1 --peers
# must name fleet-b the odd host (text and JSON), and without --peers give one report per host.
# A fourth agent replays the H200 recording (NVML, cgroups) as job "reveal-gpu", so that every
# PromQL expression of the Grafana dashboards (deploy/grafana) and of the alert rules
# (deploy/reveal-alerts.yml) is run against this Prometheus: each must parse, and each dashboard
# expression must return data for one of the replayed hosts (the alert rules' selectors must
# name series that exist). About two minutes. Skipped (exit 0, "SKIP: ...") only when there is no prometheus binary.
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
for h in a b c gpu; do PORT[$h]=$(free_port); done
[[ $(printf '%s\n' "$PP" "${PORT[@]}" | sort -u | wc -l) == 5 ]] || die "could not find five free ports"
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
  - job_name: reveal-gpu
    static_configs:
      - targets: ["127.0.0.1:${PORT[gpu]}"]
        labels: {instance: gpu-node}
EOF
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
  --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$T/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf --max-time 1 "http://127.0.0.1:$PP/-/ready" >/dev/null && break; sleep 0.2; done
curl -sf --max-time 1 "http://127.0.0.1:$PP/-/ready" >/dev/null || die "Prometheus did not become ready"

# The agents learn for 25 s only (default 120 s: longer than the 91-s replays), so that their own
# detection metrics (scores, fleet-b's incident) reach Prometheus for the dashboards' check.
printf '[detect]\nwarmup = "25s"\nrefit = "600s"\n' >"$T/agent.toml"
T0=$(date +%s)
for h in a b c; do
  "$REVEAL" agent --replay "$R/fleet-$h.db" --config "$T/agent.toml" --listen "127.0.0.1:${PORT[$h]}" \
    --store "$T/$h.db" >"$T/agent-$h.log" 2>&1 &
  pids+=($!)
done
"$REVEAL" agent --replay "$FIX/recordings/h200-gpu-contention.db" --config "$T/agent.toml" --listen "127.0.0.1:${PORT[gpu]}" \
  --store "$T/gpu.db" >"$T/agent-gpu.log" 2>&1 &
pids+=($!)
for h in a b c gpu; do
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

# --- Every PromQL expression of the dashboards and the alert rules, against this Prometheus --------
DEPLOY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../deploy" && pwd)
/usr/bin/python3 "$DEPLOY/grafana/dashboards.py" --exprs >"$T/exprs.jsonl" || fail "dashboards.py --exprs"
/usr/bin/python3 - "$URL" "$T0" "$(date +%s)" "$T/exprs.jsonl" "$DEPLOY/reveal-alerts.yml" <<'PY' || fail "PromQL of the dashboards or alert rules"
import json, re, sys, urllib.error, urllib.parse, urllib.request
import yaml
url, t0, t1, exprs_file, alerts_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
HOSTS = {"reveal": ["fleet-a", "fleet-b", "fleet-c"], "reveal-gpu": ["gpu-node"]}
bad = []

def api(path, **params):
    q = urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(f"{url}/api/v1/{path}?{q}", timeout=20) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # a bad expression: 400 with the parser's message
        return json.load(e)

def run(expr):
    """(error or None, has data) of a range query over the replays."""
    m = re.fullmatch(r"label_values\((.+), (\w+)\)", expr)  # a Grafana variable's query
    if m:
        d = api("series", **{"match[]": m.group(1), "start": t0, "end": t1})
        if d["status"] != "success":
            return d.get("error", "?"), False
        return None, any(m.group(2) in series for series in d["data"])
    d = api("query_range", query=expr, start=t0, end=t1, step=2)
    if d["status"] != "success":
        return d.get("error", "?"), False
    return None, bool(d["data"]["result"])

metrics = {m for m in api("label/__name__/values")["data"]}
# Families the agent shows only while something is open (include/reveal/agent.h): an alert on
# them is checked for parsing only, unless the replays opened one (XID counts: after an XID);
# a dashboard expression over them must return data only when the replays opened one.
# Families only some hosts have (open incidents; XID errors; NVLink and InfiniBand hardware: the
# names are checked in tests/agent/exposition_test.cpp, ExpositionNames.InterconnectFamilies).
CONDITIONAL = {"reveal_incident_active", "reveal_absence_active", "reveal_workload_change_active",
               "reveal_gpu_xid_errors_total", "reveal_nvml_nvlink_", "reveal_rdma_"}
absent_conditional = {c for c in CONDITIONAL if not any(m.startswith(c) for m in metrics)}  # names or prefixes
if "reveal_incident_active" in absent_conditional:
    print("NOTE: no replayed agent opened an incident; incident panels checked for parsing only")

n = 0
for line in open(exprs_file):
    e = json.loads(line)
    expr = e["expr"].replace("$__range", "5m").replace("$__rate_interval", "1m").replace("$__interval", "2s")
    results = []
    for job, hosts in HOSTS.items():
        for h in hosts:
            results.append(run(expr.replace("$job", job).replace("$instance", h)))
    errors = [r[0] for r in results if r[0]]
    n += 1
    if errors:
        bad.append(f"{e['dashboard']} / {e['panel']}: {errors[0]}: {e['expr']}")
    elif not any(r[1] for r in results) and not any(name in e["expr"] for name in absent_conditional) and not (
            "reveal_incident_active" in absent_conditional and "changes(reveal_incidents_total" in e["expr"]):
        bad.append(f"{e['dashboard']} / {e['panel']}: no data for any replayed host: {e['expr']}")
for g in yaml.safe_load(open(alerts_file))["groups"]:
    for r in g["rules"]:
        n += 1
        err, _ = run(r["expr"])
        if err:
            bad.append(f"alert {r.get('alert')}: {err}")
        # Each metric the rule reads exists (a misspelt name would make the alert silently never fire).
        for name in set(re.findall(r"\b((?:reveal|process)_[a-z0-9_]+|up)\b", r["expr"])):
            if name not in metrics and not any(name.startswith(c) for c in CONDITIONAL):
                bad.append(f"alert {r.get('alert')}: no series named {name} in Prometheus")
for b in bad:
    print("  " + b)
print(f"{n} expressions checked, {len(bad)} bad")
sys.exit(1 if bad else 0)
PY

((fails == 0)) && echo "PASS: fleet through Prometheus" || { echo "$fails failure(s)"; exit 1; }
