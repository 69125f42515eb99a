#!/usr/bin/env bash
# End to end: incidents name the cgroups hurt and the likely noisy neighbour (reveal/tenants.h),
# on this host's real cgroup v2 tree (the hybrid host's /sys/fs/cgroup/unified or a unified
# /sys/fs/cgroup). A "job" (stress-ng, one worker at 70 %) runs in cgroup reveal-e2e-PID/job
# from the start; `reveal agent` (40 s warm-up) watches; then a hog (2 workers per CPU, 25 s)
# starts in cgroup reveal-e2e-PID/hog. The incident must name the hog among its aggressors and
# the job among its victims: live on /incidents, in `reveal detect` on the agent's store, and in
# the agent's detector replayed over it (`reveal detect --streaming`), the three alike.
# Needs root (creating cgroups) and a v2 tree; says SKIP and passes otherwise.
#   usage: e2e_tenants_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
T=$(mktemp -d)
source "$(dirname "$0")/test_lib.sh"
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then V2=/sys/fs/cgroup
elif [[ -f /sys/fs/cgroup/unified/cgroup.controllers ]]; then V2=/sys/fs/cgroup/unified
else echo "SKIP: no cgroup v2 tree"; rm -rf "$T"; exit 0; fi
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to create cgroups"; rm -rf "$T"; exit 0; }
command -v stress-ng >/dev/null || { echo "stress-ng missing: run scripts/setup.sh"; exit 1; }
command -v curl >/dev/null || { echo "curl missing: run scripts/setup.sh"; exit 1; }
PARENT=reveal-e2e-$$
CG=$V2/$PARENT
AG="" JOB="" HOG=""
cleanup() {
  for p in $HOG $JOB $AG; do kill "$p" 2>/dev/null; done
  for p in $HOG $JOB $AG; do wait "$p" 2>/dev/null; done
  for d in "$CG/hog" "$CG/job" "$CG"; do
    [[ -d $d ]] || continue
    for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
  done
  [[ -n ${KEEP:-} ]] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$CG/job" "$CG/hog" || { fail "cannot create cgroups under $V2"; exit 1; }
# in_cgroup DIR CMD...: runs CMD inside cgroup DIR (the shell moves itself in, then execs).
in_cgroup() { local d=$1; shift; sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$d" "$@"; }

PORT=$((20000 + RANDOM % 20000))
cat >"$T/agent.toml" <<EOF
listen = "127.0.0.1:$PORT"
[store]
path = "$T/agent.db"
[detect]
warmup = "40s"
EOF
in_cgroup "$CG/job" stress-ng --cpu 1 --cpu-load 70 --quiet &
JOB=$!
"$REVEAL" agent --config "$T/agent.toml" 2>"$T/agent.log" &
AG=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
# (Not `curl | grep -q`: grep quits at the first match and, under pipefail, curl's SIGPIPE fails the pipe.)
ready() { local m; m=$(curl -s "http://127.0.0.1:$PORT/metrics"); grep -q '^reveal_model_ready 1' <<<"$m"; }
for _ in $(seq 600); do ready && break; sleep 0.25; done
ready || fail "model not ready after the warm-up"
sleep 5
F0=$(date +%s%N)
in_cgroup "$CG/hog" stress-ng --cpu $((2 * $(nproc))) --timeout 25s --quiet &
HOG=$!
# The after span: 30 s from the onset, plus a scan period and a window to spare.
sleep 42
curl -s "http://127.0.0.1:$PORT/incidents" >"$T/live.json"
kill -TERM "$AG"; wait "$AG"; AG=""
"$REVEAL" detect "$T/agent.db" --json >"$T/detect.json" 2>"$T/detect.err" || fail "detect: $(head -c 300 "$T/detect.err")"
"$REVEAL" detect "$T/agent.db" --streaming --agent-config "$T/agent.toml" --json >"$T/stream.json" 2>"$T/stream.err" ||
  fail "detect --streaming: $(head -c 300 "$T/stream.err")"

python3 - "$T" "$F0" "$PARENT" <<'PY' || fail "tenants not named (see above)"
import json, os, sys
d, f0, parent = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def near(incs):
    """The incident whose onset lies nearest the hog's start (within -5..+15 s)."""
    c = [i for i in incs if i and i.get("kind", "anomaly") == "anomaly" and -5e9 <= i["start_unix_ns"] - f0 <= 15e9]
    return min(c, key=lambda i: abs(i["start_unix_ns"] - f0)) if c else None
live = json.load(open(os.path.join(d, "live.json")))
found = {"live": near([live.get("active")] + live.get("recent", [])),
         "detect": near(json.load(open(os.path.join(d, "detect.json")))["incidents"]),
         "streaming": near(json.load(open(os.path.join(d, "stream.json")))["incidents"])}
ok = True
names = {}
for src, inc in found.items():
    if inc is None:
        print(f"FAIL: {src}: no incident at the hog's start"); ok = False; continue
    ag = [t["cgroup"] for t in inc.get("aggressors", [])]
    vi = [t["cgroup"] for t in inc.get("victims", [])]
    names[src] = (ag, vi)
    print(f"{src}: {inc['subsystem']} incident +{(inc['start_unix_ns'] - f0) / 1e9:.1f} s; aggressors "
          f"{[t['text'] for t in inc.get('aggressors', [])]}; victims {[t['text'] for t in inc.get('victims', [])]}")
    if f"{parent}/hog" not in ag:
        print(f"FAIL: {src}: the hog's cgroup is not among the aggressors"); ok = False
    if f"{parent}/job" not in vi:
        print(f"FAIL: {src}: the job's cgroup is not among the victims"); ok = False
    if f"{parent}/job" in ag:
        print(f"FAIL: {src}: the job, whose CPU use fell, is named an aggressor"); ok = False
if len(names) == 3 and not (names["live"] == names["streaming"] == names["detect"]):
    print(f"FAIL: live, streaming replay and detect name different cgroups: {names}"); ok = False
sys.exit(0 if ok else 1)
PY
# The scans are in the store (`reveal info` is not asked; the detect runs above read them).
[[ $fails == 0 ]] && echo "PASS" || { echo "$fails failure(s)"; tail -5 "$T/agent.log"; exit 1; }
