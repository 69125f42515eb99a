#!/usr/bin/env bash
# scripts/check_incidents.py, the README demo's verdict: an incident over the injected fault with
# the right subsystem passes; an incident elsewhere fails unless it names an aggressor outside the
# demo's own cgroups (another tenant, or "/": processes outside every cgroup, such as a build in a
# shell), which is something else on the host, printed as such. A clean run (kind none) fails on
# any incident. Crafted reports; the reveal binary is not used.
# usage: check_incidents_test.sh REVEAL FIXTURES [NVML_DOUBLE]
set -uo pipefail
CHECK=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)/check_incidents.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit

# report KIND... : one incident per argument "start_s:end_s:subsystem:aggressor_cgroup" (an
# empty cgroup: none named); times are seconds after 1,800,000,000.
report() {
  /usr/bin/python3 - "$@" >"$T/report.json" <<'EOF'
import json, sys
incs = []
for a in sys.argv[1:]:
    s, e, sub, cg = a.split(":")
    t0, t1 = 1_800_000_000 + float(s), 1_800_000_000 + float(e)
    incs.append({"start": f"+{s}", "end": f"+{e}", "start_unix_ns": int(t0 * 1e9), "end_unix_ns": int(t1 * 1e9),
                 "subsystem": sub, "confidence": 0.9,
                 "aggressors": [{"cgroup": cg, "text": f"{cg} CPU 0.00 -> 1.00 cores"}] if cg else []})
print(json.dumps({"incidents": incs}))
EOF
}
echo "cpu 1800000045 1800000075" >"$T/fault.txt"

report 46:74:cpu:reveal-demo/fault
expect_exit 0 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
grep -q "DETECTED" "$T/out" || fail "a hit is not reported as DETECTED: $(cat "$T/out")"

report 46:74:memory:reveal-demo/fault
expect_exit 1 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
grep -q "WRONG SUBSYSTEM" "$T/out" || fail "a wrong subsystem passes: $(cat "$T/out")"

report 10:20:cpu:
expect_exit 1 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
grep -q "MISSED" "$T/out" || fail "a miss is not reported: $(cat "$T/out")"

# Elsewhere, naming "/" (a compile outside any cgroup) or another tenant's cgroup: not a false alarm.
for cg in / kubepods/pod1/c2; do
  report 46:74:cpu:reveal-demo/fault "10:40:cpu:$cg"
  expect_exit 0 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
  grep -q "ANOTHER NEIGHBOUR.*$cg" "$T/out" || fail "an outside neighbour ($cg) is not named: $(cat "$T/out")"
done
# Elsewhere with no aggressor, or only the demo's own cgroups (its steady neighbour): false alarms.
for cg in "" reveal-demo/neighbour reveal-demo/train; do
  report 46:74:cpu:reveal-demo/fault "10:40:cpu:$cg"
  expect_exit 1 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
  grep -q "FALSE ALARM" "$T/out" || fail "an incident elsewhere naming '$cg' is not a false alarm: $(cat "$T/out")"
done
# Without the demo's cgroups (not root: everything in the script's own cgroup) nothing is an
# outsider: an incident elsewhere is a false alarm whoever it names.
report 46:74:cpu: "10:40:cpu:user.slice/session-3.scope"
expect_exit 1 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
grep -q "FALSE ALARM" "$T/out" || fail "without the demo's cgroups an outsider passed: $(cat "$T/out")"
# A cgroup that only starts like the demo's is an outsider.
report 46:74:cpu:reveal-demo/fault "10:40:cpu:reveal-demo-other/x"
expect_exit 0 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
# A clean run: every incident is a false alarm, whoever it names.
echo "none 1800000045 1800000075" >"$T/fault.txt"
report "10:40:cpu:/"
expect_exit 1 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"
report
expect_exit 0 /usr/bin/python3 "$CHECK" "$T/report.json" "$T/fault.txt"

[[ $fails == 0 ]] && echo "check_incidents: all passed"
exit $((fails > 0))
