#!/usr/bin/env bash
# End to end over the compressed host day (bench/hostday, issue #17), short variant: a 6.5-minute
# day (agent warm-up 60 s) with several jobs, one of them a second tenant's overlapping another,
# and ≥ 3 faults of different kinds; then the scorer. Asserts what can fail without judging the
# detector (which others are changing): bad input, the plan, the agent up the whole day, labels
# and scores written and consistent, every metric computed, the store holding the whole day, and
# nothing left behind — also after a SIGINT. About 8 minutes (ctest TIMEOUT 720).
#   usage: e2e_hostday_test.sh REVEAL FIXTURES
# Skips (exit 0 with a note) without root or Debian's python3-torch.
set -uo pipefail
REVEAL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
HDPID=""  # a hostday run in progress: interrupted (it stops everything it started) before $T goes
trap '[[ -n $HDPID ]] && { kill -INT "$HDPID" 2>/dev/null; wait "$HDPID"; }; rm -rf "$T"' EXIT
trap 'exit 143' TERM INT
source "$(dirname "$0")/test_lib.sh"
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root (cgroups, taskset, netns)"; exit 0; fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then echo "SKIP: /usr/bin/python3 has no torch (python3-torch)"; exit 0; fi
command -v stress-ng >/dev/null || { echo "stress-ng missing: run scripts/setup.sh"; exit 1; }
HD=(/usr/bin/python3 "$SRC/bench/hostday/hostday.py")
one_line() { [[ $(wc -l <"$T/err") -eq 1 ]] || fail "$1: not one line on stderr: $(cat "$T/err")"; grep -qF -- "$2" "$T/err" || fail "$1: '$2' not said: $(cat "$T/err")"; }

# bad input: one line on stderr, exit 2
expect_exit 2 "${HD[@]}" run --out "$T/x" --duration bogus --plan-only;            one_line "bad duration" "bad duration 'bogus'"
expect_exit 2 "${HD[@]}" run --out "$T/x" --duration 30s --plan-only;              one_line "short day" "too short"
expect_exit 2 "${HD[@]}" run --out "$T/x" --duration 6m --reveal /nonexistent;     one_line "missing binary" "reveal binary not found"
expect_exit 2 "${HD[@]}" run --duration 6m;                                       one_line "no --out" "required"
expect_exit 2 "${HD[@]}" run --out "$T/x" --duration 6m --seed x --plan-only;      one_line "bad seed" "seed"
expect_exit 2 "${HD[@]}" score "$T/none" --reveal "$REVEAL";                      one_line "score a non-run" "no labels.json"
expect_exit 2 "${HD[@]}" bogus;                                                   one_line "bad subcommand" "invalid choice"

# the plan: seeded (same seed, same plan), ≥ 3 workloads, ≥ 3 faults of ≥ 3 kinds, an overlapping second tenant
ARGS=(--duration 6m30s --agent-warmup 60s --seed 7)
for p in p1 p2; do "${HD[@]}" run --out "$T/$p" "${ARGS[@]}" --plan-only >"$T/$p.out" 2>&1 || fail "plan-only failed: $(tail -3 "$T/$p.out")"; done
/usr/bin/python3 - "$T/p1/plan.json" "$T/p2/plan.json" <<'PY' || fail "plan checks"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["jobs"], a["faults"]) == (b["jobs"], b["faults"]), "same seed, different plans"
w, f = {j["workload"] for j in a["jobs"]}, a["faults"]
assert len(w) >= 3, f"only {len(w)} workloads"
assert len(f) >= 3 and len({x["kind"] for x in f}) >= 3, f"faults: {[x['kind'] for x in f]}"
sec = [j for j in a["jobs"] if j["tenant"] == "second"]
prim = [j for j in a["jobs"] if j["tenant"] == "primary"]
assert any(p["start_s"] < s["start_s"] < p["start_s"] + p["duration_s"] for s in sec for p in prim), "no overlapping second tenant"
jobs = {j["id"]: j for j in a["jobs"]}
for x, y in zip(f, f[1:]):
    assert x["at_s"] + x["duration_s"] < y["at_s"], "faults overlap"
for x in f:
    j = jobs[x["job"]]
    assert j["tenant"] == "primary" and j["start_s"] + 30 <= x["at_s"] and x["at_s"] + x["duration_s"] <= j["start_s"] + j["duration_s"], f"fault {x} outside its job"
    assert x["at_s"] >= a["agent_warmup_s"], "fault during the agent's warm-up"
print(f"plan: {len(a['jobs'])} jobs, {len(w)} workloads, {len(f)} faults ({', '.join(x['kind'] for x in f)})")
PY
# a port in use and a directory that already holds a run: refused before anything starts
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/busy" &
busy=$!
for _ in $(seq 1 50); do [[ -s $T/busy ]] && break; sleep 0.1; done
expect_exit 2 "${HD[@]}" run --out "$T/busy-run" "${ARGS[@]}" --reveal "$REVEAL" --port "$(cat "$T/busy")"; one_line "port in use" "is in use"
kill "$busy"; wait "$busy" 2>/dev/null
[[ -e $T/busy-run/agent.db ]] && fail "a run started on a port in use"
mkdir -p "$T/old" && touch "$T/old/labels.json"
expect_exit 2 "${HD[@]}" run --out "$T/old" "${ARGS[@]}" --plan-only;             one_line "old run dir" "already holds a run"

PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
leftovers() {  # $1 = run dir: processes with the run's marker, netns, links, qdiscs, cgroups, the agent's port
  local marker
  marker=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["marker"])' "$1/run.json" 2>/dev/null) || { fail "$1: no marker in run.json"; return; }
  grep -ls "REVEAL_HOSTDAY=$marker" /proc/[0-9]*/environ 2>/dev/null | grep -v "^/proc/$$/" | grep -q . && fail "$1: processes left: $(grep -ls "REVEAL_HOSTDAY=$marker" /proc/[0-9]*/environ)"
  ip netns list | grep -q 'reveal-scen-hd' && fail "$1: a netns was left behind: $(ip netns list)"
  ip -o link show | grep -q 'rvshd' && fail "$1: a veth was left behind"
  tc qdisc show | grep -Eq 'netem|tbf' && fail "$1: a qdisc was left behind: $(tc qdisc show | grep -E 'netem|tbf')"
  find /sys/fs/cgroup -maxdepth 3 -name 'reveal-scen*' 2>/dev/null | grep -q . && fail "$1: a cgroup was left behind"
  find /sys/fs/cgroup -maxdepth 2 -name 'reveal-hostday*' 2>/dev/null | grep -q . && fail "$1: a job/fault cgroup was left behind: $(find /sys/fs/cgroup -maxdepth 3 -name 'reveal-hostday*')"
  [[ -z $(ls -A "$1/tmp" 2>/dev/null) ]] || fail "$1: files left in tmp"
  (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && fail "$1: the agent still listens on $PORT"
  /usr/bin/python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["leftovers"]; sys.exit(1 if l else 0)' "$1/run.json" || fail "$1: run.json lists leftovers"
}

# SIGINT: everything stops, labels and run.json are written, nothing is left
"${HD[@]}" run --out "$T/int" --duration 4m --agent-warmup 60s --seed 3 --reveal "$REVEAL" --port "$PORT" >"$T/int.out" 2>&1 &
HDPID=$!
for _ in $(seq 1 90); do [[ -s $T/int/jobs/j01/steps.log ]] && break; sleep 1; done
[[ -s $T/int/jobs/j01/steps.log ]] || fail "interrupt run: the first job made no step in 90 s: $(tail -5 "$T/int.out")"
kill -INT "$HDPID"; wait "$HDPID"; rc=$?; HDPID=""
[[ $rc == 130 ]] || fail "interrupted run exited $rc (want 130): $(tail -5 "$T/int.out")"
[[ -s $T/int/labels.json && -s $T/int/run.json ]] || fail "interrupted run wrote no labels/run.json"
leftovers "$T/int"

# the short day
sync; sleep 2
start=$(date +%s)
"${HD[@]}" run --out "$T/day" "${ARGS[@]}" --reveal "$REVEAL" --port "$PORT" >"$T/day.out" 2>&1 &
HDPID=$!; wait "$HDPID"; rc=$?; HDPID=""
echo "day: exit $rc after $(($(date +%s) - start)) s"; tail -n 40 "$T/day.out"
[[ $rc == 0 ]] || fail "hostday run exited $rc"
cmp -s <(/usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(json.dumps([p["jobs"], p["faults"]]))' "$T/day/plan.json") \
       <(/usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(json.dumps([p["jobs"], p["faults"]]))' "$T/p1/plan.json") \
  || fail "the run's plan differs from --plan-only's with the same seed"
leftovers "$T/day"
/usr/bin/python3 - "$T/day" <<'PY' || fail "run/labels checks"
import json, os, sys
d = sys.argv[1]
run, lab, plan = (json.load(open(os.path.join(d, f))) for f in ("run.json", "labels.json", "plan.json"))
assert run["complete"], "day not complete"
assert run["agent_stayed_up"] and run["agent_exit_code"] == 0, f"agent: {run.get('agent_exit_code')} {run['notes']}"
assert run["poll_failures"] == 0, f"{run['poll_failures']} polls of the agent failed"
assert run["model_ready_unix_ns"], "the agent never fitted its model"
t0, t1 = lab["run_start_unix_ns"], lab["run_end_unix_ns"]
assert (t1 - t0) / 1e9 >= plan["duration_s"] - 2, "day shorter than planned"
assert not lab["skipped_faults"], f"skipped faults: {lab['skipped_faults']}"
assert len(lab["faults"]) == len(plan["faults"]) >= 3
for f in lab["faults"]:
    assert f["status"] == "done", f"fault {f['id']}: {f['status']}"
    assert t0 < f["start_unix_ns"] < f["end_unix_ns"] < t1, f"fault {f['id']} interval"
    dur = (f["end_unix_ns"] - f["start_unix_ns"]) / 1e9
    assert abs(dur - f["planned_duration_s"]) < 5, f"fault {f['id']} lasted {dur:.1f} s"
    for k in ("step_s_before", "step_s_during", "step_effect_pct"):
        assert f.get(k) is not None, f"fault {f['id']} ({f['kind']}) has no {k}"
    assert f["steps_before"] >= 3, f"fault {f['id']}: {f['steps_before']} steps before"
for a, b in zip(lab["faults"], lab["faults"][1:]):
    assert a["end_unix_ns"] < b["start_unix_ns"], "fault intervals overlap"
ev = lab["events"]
assert [e["t_unix_ns"] for e in ev] == sorted(e["t_unix_ns"] for e in ev)
for j in lab["jobs"]:
    s = [e for e in ev if e["job"] == j["id"] and e["event"] == "start"]
    p = [e for e in ev if e["job"] == j["id"] and e["event"] == "stop"]
    assert len(s) == 1 and len(p) == 1 and s[0]["t_unix_ns"] < p[0]["t_unix_ns"], f"job {j['id']} start/stop events"
    assert j["steps"] > 0, f"job {j['id']} made no step: {j['status']}"
    assert j["status"] in ("ok", "stopped"), f"job {j['id']}: {j['status']}"
assert any(e["event"] == "phase" for e in ev), "no phase event"
assert len(lab["jobs"]) == len(plan["jobs"])
# each job and fault in its own leaf cgroup of the v2 hierarchy, when there is one
if any(os.path.exists(p + "/cgroup.controllers") for p in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")):
    parent = lab["cgroups"]["parent"]
    for x in lab["jobs"] + lab["faults"]:
        assert x["cgroup"] == f"{parent}/{x['id']}", f"{x['id']}: cgroup {x.get('cgroup')}"
    for f in lab["faults"]:
        assert f["job_cgroup"] == f"{parent}/{f['job']}" and isinstance(f["own_processes"], bool), f
    assert all(j["cgroup_cpu_s"] and j["cgroup_cpu_s"] > 1 for j in lab["jobs"]), "a job's cgroup used no CPU"
print(f"labels: {len(lab['faults'])} faults, {len(lab['jobs'])} jobs, {len(ev)} events; "
      f"step effects {[f['step_effect_pct'] for f in lab['faults']]}")
PY

expect_exit 0 "${HD[@]}" score "$T/day" --reveal "$REVEAL"
cat "$T/out"
[[ -s $T/day/scores.md && -s $T/day/scores.json && -s $T/day/detect.json ]] || fail "scores not written"
/usr/bin/python3 - "$T/day" <<'PY' || fail "score checks"
import json, os, sys
d = sys.argv[1]
s, lab = (json.load(open(os.path.join(d, f))) for f in ("scores.json", "labels.json"))
nf = len(lab["faults"])
for src in ("live", "offline"):
    r = s[src]
    assert r["faults"] == nf and len(r["per_fault"]) == nf, f"{src}: faults {r['faults']} != {nf}"
    assert r["hits"] + r["false"] == r["incidents"] and 0 <= r["caught"] <= nf
    assert r["fault_free_h"] > 0 and r["false_per_day"] is not None and r["recall"] is not None
    assert r["false_at_start_stop"] + r["false_at_phase_change"] + r["false_elsewhere"] == r["false"]
    assert r["false_at_workload_events"] == r["false_at_start_stop"] + r["false_at_phase_change"]
    keys = ["precision", "f1", "subsystem_top1", "ttd_median_s", "ttd_p90_s", "outlast_median_s", "outlast_p90_s",
            "outlast_max_s", "longest_incident_s", "false_per_day_at_events", "false_per_day_elsewhere"]
    for k in keys:
        assert k in r, f"{src}: no {k}"
    if r["incidents"]:
        assert r["precision"] is not None and r["f1"] is not None and r["longest_incident_s"] is not None
    if r["caught"]:
        assert None not in (r["subsystem_top1"], r["ttd_median_s"], r["ttd_p90_s"], r["outlast_max_s"]), f"{src}: missing"
    for k in ("aggressor", "victim"):
        t = r["tenants"][k]
        assert 0 <= t["n"] <= t["m"], f"{src}: tenants {k} {t}"
    print(f"{src}: {r['incidents']} incidents, caught {r['caught']}/{nf}, false/day {r['false_per_day']:.1f}, "
          f"cgroups named: aggressor {r['tenants']['aggressor']['n']}/{r['tenants']['aggressor']['m']}, "
          f"victim {r['tenants']['victim']['n']}/{r['tenants']['victim']['m']}")
assert sum(k["faults"] for k in s["per_kind"]) == nf
assert all(k["step_effect_pct"] for k in s["per_kind"]), "a kind without step effect"
st = s["store"]
assert st["covers_day"], f"the store does not hold the whole day: {st}"
assert st["coverage"] >= 0.9, f"the store holds {st['samples']} samples for a {st['day_s']:.0f} s day"
# the agent keeps its incidents in its store as events: the live list and the store agree
assert abs(st["incident_opened_events"] - st["live_incidents"]) <= 1, f"store {st['incident_opened_events']} vs live {st['live_incidents']}"
PY
# a scoring window (a held-out part of the day): spans clipped to it, only its faults counted
expect_exit 0 "${HD[@]}" score "$T/day" --reveal "$REVEAL" --reuse --from 3m
/usr/bin/python3 - "$T/day" <<'PY' || fail "windowed score checks"
import json, os, sys
d = sys.argv[1]
w, s, lab = (json.load(open(os.path.join(d, f))) for f in ("scores_3m-end.json", "scores.json", "labels.json"))
t_from = lab["run_start_unix_ns"] + 180e9
assert w["window"] == {"from": "3m", "until": None}, w.get("window")
inside = [f for f in lab["faults"] if f.get("start_unix_ns") and f["end_unix_ns"] >= t_from]
for src in ("live", "offline", "replay"):
    assert w[src]["span_start_unix_ns"] >= t_from, f"{src}: span starts before the window"
    assert w[src]["faults"] == len(inside), f"{src}: {w[src]['faults']} faults, {len(inside)} in the window"
    assert w[src]["span_h"] < s[src]["span_h"]
PY
expect_exit 2 "${HD[@]}" score "$T/day" --reveal "$REVEAL" --reuse --from 5m --until 4m; one_line "window backwards" "--until must be after"
((fails == 0)) && echo "e2e hostday ok" || exit 1
