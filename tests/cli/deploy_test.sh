#!/usr/bin/env bash
# deploy/: the Prometheus alert rules (promtool check rules, and their unit tests in
# reveal-alerts_test.yml), the scrape configuration (promtool check config), the systemd unit
# (required keys always; `systemd-analyze verify` when installed) and the example agent
# configuration, which `reveal agent --check-config` must accept (exit 0) while a bad file
# exits 2 with ONE "file:line:col: what" line. promtool or systemd-analyze missing: that part
# is skipped with a "SKIP:" line. Then deploy/kubernetes (rendered with kubectl kustomize and
# validated by tests/deploy/k8s_validate.py) and deploy/grafana (the dashboards are what
# dashboards.py writes).
# usage: deploy_test.sh REVEAL FIXTURES [NVML_DOUBLE]
set -uo pipefail
REVEAL=$1
DEPLOY=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../deploy" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit

for f in reveal-agent.service reveal-agent.sysusers reveal-agent.toml reveal-alerts.yml reveal-alerts_test.yml prometheus-scrape.yml; do
  [[ -f $DEPLOY/$f ]] || fail "deploy/$f missing"
done

# --- Prometheus: rules, their unit tests, the scrape configuration -------------------------------
if command -v promtool >/dev/null; then
  promtool check rules "$DEPLOY/reveal-alerts.yml" >"$T/out" 2>&1 || { fail "promtool check rules"; cat "$T/out"; }
  # Every rule has a test case (a rule without one could silently never fire).
  for a in $(sed -n 's/^ *- alert: *//p' "$DEPLOY/reveal-alerts.yml"); do
    grep -q "alertname: $a\$" "$DEPLOY/reveal-alerts_test.yml" || fail "alert $a has no case in reveal-alerts_test.yml"
  done
  (cd "$DEPLOY" && promtool test rules reveal-alerts_test.yml) >"$T/out" 2>&1 || { fail "promtool test rules"; cat "$T/out"; }
  promtool check config "$DEPLOY/prometheus-scrape.yml" >"$T/out" 2>&1 || { fail "promtool check config"; cat "$T/out"; }
  # The commented-out relabelling there is valid too once uncommented.
  sed -E 's/^    # (metric_relabel_configs:)/    \1/; s/^    #   (- source_labels|  regex|  action)/      \1/' \
    "$DEPLOY/prometheus-scrape.yml" >"$T/scrape.yml"
  cp "$DEPLOY/reveal-alerts.yml" "$T/"
  grep -q '^    metric_relabel_configs:' "$T/scrape.yml" || fail "relabel example not found in prometheus-scrape.yml"
  promtool check config "$T/scrape.yml" >"$T/out" 2>&1 || { fail "promtool check config (relabel example)"; cat "$T/out"; }
else
  echo "SKIP: promtool not installed; alert rules and scrape configuration not checked"
fi

# --- systemd unit ------------------------------------------------------------------------------
UNIT=$DEPLOY/reveal-agent.service
for line in 'Type=simple' 'ExecStart=/usr/local/bin/reveal agent --config /etc/reveal/agent.toml' \
            'ExecReload=/bin/kill -HUP $MAINPID' 'Restart=on-failure' 'StateDirectory=reveal' \
            'ProtectSystem=strict' 'ProtectHome=yes' 'NoNewPrivileges=yes' 'WantedBy=multi-user.target'; do
  grep -qxF -- "$line" "$UNIT" || fail "unit lacks the line '$line'"
done
for key in CPUQuota MemoryMax Nice ReadWritePaths CapabilityBoundingSet; do
  grep -qE "^$key=." "$UNIT" || fail "unit lacks $key="
done
grep -qE '^CapabilityBoundingSet=.*CAP_PERFMON' "$UNIT" || fail "unit's CapabilityBoundingSet lacks CAP_PERFMON (perf_event_open)"
# Not root: a dedicated user with ambient capabilities, a device allow-list, an IP allow-list.
grep -qx 'User=reveal' "$UNIT" || fail "unit does not run as the user reveal"
grep -qE '^AmbientCapabilities=.*CAP_PERFMON' "$UNIT" || fail "unit lacks AmbientCapabilities=CAP_PERFMON (not root)"
grep -qx 'DevicePolicy=closed' "$UNIT" || fail "unit lacks DevicePolicy=closed"
grep -qx 'IPAddressDeny=any' "$UNIT" || fail "unit lacks IPAddressDeny=any"
if command -v systemd-sysusers >/dev/null; then
  mkdir -p "$T/sysroot/etc"
  systemd-sysusers --root="$T/sysroot" "$(realpath "$DEPLOY/reveal-agent.sysusers")" >"$T/out" 2>&1 ||
    fail "systemd-sysusers: $(cat "$T/out")"
  grep -q '^reveal:x:[0-9]*:[0-9]*:' "$T/sysroot/etc/passwd" || fail "deploy/reveal-agent.sysusers creates no user reveal"
fi
grep -qE '^ReadWritePaths=.*/var/lib/reveal' "$UNIT" || fail "unit's ReadWritePaths lacks the state directory"
# Settings that would hide what the agent reads: /dev (NVML), other processes' /proc, /proc/sys.
grep -qE '^(PrivateDevices=yes|ProcSubset=pid|PrivateUsers=yes|DynamicUser=yes|InaccessiblePaths=.*(/proc|/sys))' "$UNIT" &&
  fail "unit hides /dev, /proc or /sys from the agent: $(grep -E '^(PrivateDevices|ProcSubset|PrivateUsers|DynamicUser|InaccessiblePaths)=' "$UNIT")"
if command -v systemd-analyze >/dev/null; then
  # verify needs the binary the unit names: point it at the one under test. Any output
  # (unknown key, bad value) is a failure even though verify itself exits 0 for warnings.
  mkdir -p "$T/unit"
  sed "s|/usr/local/bin/reveal|$(realpath "$REVEAL")|g" "$UNIT" >"$T/unit/reveal-agent.service"
  systemd-analyze verify "$T/unit/reveal-agent.service" >"$T/out" 2>&1; rc=$?
  [[ $rc == 0 && ! -s $T/out ]] || { fail "systemd-analyze verify exit $rc"; cat "$T/out"; }
else
  echo "SKIP: systemd-analyze not installed; unit checked for its required keys only"
fi

# --- the example configuration through the agent itself -------------------------------------------
if ! "$REVEAL" agent --help >/dev/null 2>&1; then
  fail "$REVEAL has no 'agent' command (built without reveal_net?)"
else
  expect_exit 0 "$REVEAL" agent --config "$DEPLOY/reveal-agent.toml" --check-config
  check_bad() {  # name, contents, needle: exit 2 with one stderr line naming file:line:col
    printf '%b' "$2" >"$T/$1"
    expect_exit 2 "$REVEAL" agent --config "$T/$1" --check-config
    [[ $(grep -c . "$T/err") == 1 ]] || fail "--check-config $1: want one stderr line, got: $(cat "$T/err")"
    grep -qF -- "$3" "$T/err" || fail "--check-config $1: stderr lacks '$3': $(cat "$T/err")"
  }
  check_bad unknown.toml '[detect]\nwindw = 3\n' "$T/unknown.toml:2:1: unknown key 'detect.windw'"
  check_bad type.toml 'interval = 1\n' "$T/type.toml:1:12: 'interval' must be a duration string"
  check_bad syntax.toml 'listen = "127.0.0.1:9797\n' "$T/syntax.toml:1:"
  check_bad range.toml '[detect]\nwindow = 1\n' "$T/range.toml:2:10: 'detect.window' = 1 is out of range"
  expect_exit 2 "$REVEAL" agent --config "$T/absent.toml" --check-config
  grep -qF "$T/absent.toml: cannot read" "$T/err" || fail "--check-config absent file: $(cat "$T/err")"
fi

# --- Kubernetes (deploy/kubernetes): every kustomization rendered and validated against the API's
# schemas, the objects checked against each other and the agent, the Dockerfile's run-time
# libraries against the binary (tests/deploy/k8s_validate.py says what exactly) ---------------------
if command -v kubectl >/dev/null && /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
  /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../deploy/k8s_validate.py" "$DEPLOY/kubernetes" --reveal "$REVEAL" \
    >"$T/out" 2>&1 || { fail "deploy/kubernetes"; cat "$T/out"; }
  grep '^rendered' "$T/out"
  # The check can fail: a GPU overlay whose nvidia component lost the pod-resources mount.
  cp -r "$DEPLOY/kubernetes" "$T/k8s"
  python3 - "$T/k8s/components/nvidia/kustomization.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s2 = re.sub(r"(?s)\n      - op: add\n        path: /spec/template/spec/volumes/-\n.*", "\n", s)
assert s2 != s, "no pod-resources patch to remove"
open(p, "w").write(s2)
PY
  /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../deploy/k8s_validate.py" "$T/k8s" >"$T/out" 2>&1 &&
    fail "k8s_validate.py accepted a GPU DaemonSet without the kubelet's pod-resources socket"
  grep -q "pod-resources socket" "$T/out" || fail "no pod-resources failure named: $(grep FAIL "$T/out" | head -3)"
else
  echo "SKIP: kubectl or python3-kubernetes missing (scripts/setup.sh installs them); deploy/kubernetes not checked"
fi

# --- Grafana (deploy/grafana): the dashboards are what dashboards.py writes, and each is a
# dashboard (uid, panels with targets); their PromQL runs in fleet_prometheus_test.sh -----------------
/usr/bin/python3 "$DEPLOY/grafana/dashboards.py" --check >"$T/out" 2>&1 || { fail "deploy/grafana"; cat "$T/out"; }
for f in "$DEPLOY"/grafana/*.json; do
  /usr/bin/python3 - "$f" <<'PY' || fail "$f is not a Grafana dashboard"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["uid"] and d["title"] and d["schemaVersion"] >= 36, "uid, title, schemaVersion"
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids)), "duplicate panel ids"
for p in d["panels"]:
    if p["type"] != "row":
        assert p["targets"] and all(t["expr"] for t in p["targets"]), p["title"]
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]
PY
done

((fails)) && exit 1
echo "deploy: all checks passed"
