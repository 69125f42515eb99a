#!/usr/bin/env bash
# End to end: incidents name the cgroups hurt and the likely noisy neighbour (reveal/tenants.h),
# on this host's real cgroup v2 tree (the hybrid host's /sys/fs/cgroup/unified or a unified
# /sys/fs/cgroup). A "job" (stress-ng, one worker at 70 %) runs in cgroup reveal-e2e-PID/job
# from the start; `reveal agent` (40 s warm-up) watches; then a hog (2 workers per CPU, 25 s)
# starts in cgroup reveal-e2e-PID/hog. The incident must name the hog among its aggressors and
# the job among its victims: live on /incidents, in `reveal detect` on the agent's store, and in
# the agent's detector replayed over it (`reveal detect --streaming`), the three alike.
# Then the job stops and, on a host now running nothing else, a new job (2 workers per CPU, its
# own threads contending) starts in reveal-e2e-PID/new: a new workload, not an incident. If it
# opens one, the agent withdraws it within 15 s (judge_workload_start()); no incident is left
# at its start in any of the three. (On a host where another cgroup keeps a job's worth of CPU
# busy, that part is skipped: there the new job could hurt it, and an incident is right.)
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
AG="" JOB="" HOG="" NEW=""
cleanup() {
  for p in $NEW $HOG $JOB $AG; do kill "$p" 2>/dev/null; done
  for p in $NEW $HOG $JOB $AG; do wait "$p" 2>/dev/null; done
  for d in "$CG/new" "$CG/hog" "$CG/job" "$CG"; do
    [[ -d $d ]] || continue
    for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
  done
  [[ -n ${KEEP:-} ]] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$CG/job" "$CG/hog" "$CG/new" || { fail "cannot create cgroups under $V2"; exit 1; }
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
# A new job on a host that runs nothing else: first the job stops and the host settles.
kill "$JOB"; wait "$JOB" 2>/dev/null; JOB=""
for _ in $(seq 50); do  # stress-ng's workers too
  pids=$(cat "$CG/job/cgroup.procs" 2>/dev/null); [[ -z $pids ]] && break
  kill $pids 2>/dev/null; sleep 0.1
done
[[ -z $(cat "$CG/job/cgroup.procs" 2>/dev/null) ]] || fail "the job's processes did not stop"
sleep 50
# The CPU other leaf cgroups use over 5 s (cores): a job's worth (0.25) elsewhere makes the new
# job a possible noisy neighbour, not merely a start.
busy_elsewhere() {
  python3 - "$V2" "$PARENT" <<'PY'
import os, sys, time
root, parent = sys.argv[1], sys.argv[2]
def usage():
    u = {}
    for d, subdirs, files in os.walk(root):
        if os.path.relpath(d, root).startswith(parent) or any(os.path.exists(os.path.join(d, s, "cgroup.procs")) for s in subdirs):
            continue
        try:
            for line in open(os.path.join(d, "cpu.stat")):
                if line.startswith("usage_usec"):
                    u[d] = int(line.split()[1])
        except OSError:
            pass
    return u
def host_busy_s():  # CPU time of the whole host (/proc/stat, USER_HZ ticks), seconds
    f = open("/proc/stat").readline().split()
    return sum(int(x) for x in f[1:4] + f[6:9]) / os.sysconf("SC_CLK_TCK")
def all_leaves():  # every leaf's usage, ours included (what the host time holds besides "/")
    u = 0
    for d, subdirs, files in os.walk(root):
        if not any(os.path.exists(os.path.join(d, s, "cgroup.procs")) for s in subdirs):
            try:
                u += next(int(l.split()[1]) for l in open(os.path.join(d, "cpu.stat")) if l.startswith("usage_usec"))
            except (OSError, StopIteration):
                pass
    return u / 1e6
a, ha, la = usage(), host_busy_s(), all_leaves(); time.sleep(5); b, hb, lb = usage(), host_busy_s(), all_leaves()
busy = [(d, (b[d] - a[d]) / 5e6) for d in b if d in a and (b[d] - a[d]) / 5e6 >= 0.25]
# Processes outside every cgroup (on a hybrid host, a shell's build or benchmark in "/").
outside = ((hb - ha) - (lb - la)) / 5
out = [f"{os.path.relpath(d, root)} {c:.2f} cores" for d, c in busy] + ([f"/ (outside every cgroup) {outside:.2f} cores"] if outside >= 0.25 else [])
print("; ".join(out))
PY
}
BUSY=$(busy_elsewhere)
F1=$(date +%s%N)
in_cgroup "$CG/new" stress-ng --cpu $((2 * $(nproc))) --timeout 30s --quiet &
NEW=$!
sleep 20
curl -s "http://127.0.0.1:$PORT/incidents" >"$T/live_new.json"
curl -s "http://127.0.0.1:$PORT/metrics" >"$T/metrics_new.txt"
wait "$NEW" 2>/dev/null; NEW=""
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
# The agent's incident as it finally stands (closed by the time of live_new.json), else as it was
# at live.json.
live = json.load(open(os.path.join(d, "live.json")))
later = json.load(open(os.path.join(d, "live_new.json")))
found = {"live": near(later.get("recent", [])) or near([live.get("active")] + live.get("recent", [])),
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
    # Impact (issue #22): the job lost CPU time to the hog: a known slowdown, named after the job.
    # On a busy host other tenants that lost CPU time are listed too: the job's own entry counts.
    imp = inc.get("impact") or {}
    print(f"{src}: impact {imp.get('text')}")
    job = [t for t in imp.get("tenants") or [] if t["cgroup"] == f"{parent}/job"]
    if imp.get("slowdown") is None or not job or not 0.05 <= 1 - job[0]["throughput"] <= 1:
        print(f"FAIL: {src}: no estimated slowdown of the job: {imp}"); ok = False
    elif not imp.get("job_seconds_lost", 0) > 0:
        print(f"FAIL: {src}: no job-seconds lost: {imp}"); ok = False
if len(names) == 3 and not (names["live"] == names["streaming"] == names["detect"]):
    print(f"FAIL: live, streaming replay and detect name different cgroups: {names}"); ok = False
# The agent and its replay judge the same incident over the same span: the same figures too
# (reveal detect's incident may end elsewhere, so its after span may differ).
texts = {src: ([t["text"] for t in (inc or {}).get("aggressors", [])], [t["text"] for t in (inc or {}).get("victims", [])],
               ((inc or {}).get("impact") or {}).get("text"))
         for src, inc in found.items() if src != "detect"}
if found["live"] and found["streaming"] and texts["live"] != texts["streaming"]:
    print(f"FAIL: the agent and its replay judge the tenants differently: {texts}"); ok = False
sys.exit(0 if ok else 1)
PY
if [[ -n $BUSY ]]; then
  echo "SKIP new-workload check: other cgroups keep a job's worth of CPU busy ($BUSY)"
else
  python3 - "$T" "$F1" "$PARENT" <<'PY' || fail "the new job's start left an incident (see above)"
import json, os, re, sys
d, f1, parent = sys.argv[1], int(sys.argv[2]), sys.argv[3]
at = lambda i: i and -5e9 <= i["start_unix_ns"] - f1 <= 15e9
live = json.load(open(os.path.join(d, "live_new.json")))
incs = {"live": [live.get("active")] + live.get("recent", []),
        "detect": json.load(open(os.path.join(d, "detect.json")))["incidents"],
        "streaming": json.load(open(os.path.join(d, "stream.json")))["incidents"]}
changes = {"live": [live.get("active_workload_change")] + live.get("workload_changes", []),
           "detect": json.load(open(os.path.join(d, "detect.json")))["workload_changes"],
           "streaming": json.load(open(os.path.join(d, "stream.json")))["workload_changes"]}
ok = True
for src in incs:
    left = [i for i in incs[src] if at(i) and i.get("kind", "anomaly") == "anomaly"]
    wd = [c for c in changes[src] if at(c) and c.get("withdrawn")]
    for c in wd:
        if f"{parent}/new" not in c["withdrawn"]["text"]:
            print(f"FAIL: {src}: the withdrawal does not name the new cgroup: {c['withdrawn']['text']}"); ok = False
    print(f"{src}: at the new job's start {len(left)} incident(s) left, {len(wd)} withdrawn"
          + "".join(f"; left: {i['subsystem']} +{(i['start_unix_ns'] - f1) / 1e9:.1f} s, aggressors "
                    f"{[t['text'] for t in i.get('aggressors', [])]}, victims {[t['text'] for t in i.get('victims', [])]}"
                    for i in left))
    if left:
        print(f"FAIL: {src}: an incident at the new job's start was not withdrawn"); ok = False
# A workload change names its tenants when it ends, in the agent as in its replay: the agent's
# log line for each change at the new job's start that the replay's change names the new cgroup
# in says so too (the agent closes what is open when it stops).
for c in changes["streaming"]:
    if at(c) and f"{parent}/new" in [t["cgroup"] for t in c.get("aggressors", [])]:
        lines = [l for l in open(os.path.join(d, "agent.log")) if "workload change:" in l]
        print(f"streaming: the change at +{(c['start_unix_ns'] - f1) / 1e9:.1f} s names {parent}/new; agent: {lines}")
        if not any(f"with it: {parent}/new" in l for l in lines):
            print(f"FAIL: the agent's workload changes do not name {parent}/new"); ok = False
        break
m = re.search(r"^reveal_incidents_withdrawn_total (\S+)", open(os.path.join(d, "metrics_new.txt")).read(), re.M)
wd_live = sum(1 for c in changes["live"] if at(c) and c.get("withdrawn"))
if not m or float(m.group(1)) < wd_live:
    print(f"FAIL: reveal_incidents_withdrawn_total {m.group(1) if m else 'missing'}, {wd_live} withdrawn on /incidents"); ok = False
sys.exit(0 if ok else 1)
PY
fi
# The scans are in the store (`reveal info` is not asked; the detect runs above read them).
[[ $fails == 0 ]] && echo "PASS" || { echo "$fails failure(s)"; tail -5 "$T/agent.log"; exit 1; }
