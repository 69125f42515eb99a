#!/usr/bin/env python3
"""Scores a `reveal detect --json` report against an injected fault interval.

usage: check_incidents.py report.json fault.txt [steps.log]
fault.txt holds one line "<kind> <start_unix_s> <end_unix_s>". With steps.log (lines "<unix_s>
<step> <seconds>", the training job's steps), each detected incident's estimated impact (issue #22)
is printed beside the slowdown the steps measured over the fault (printed, not scored). Kinds map to the subsystem a
correct attribution names. Exit 0 when an incident overlaps the fault with the right subsystem
and no incident lies elsewhere; 1 otherwise. An incident elsewhere that names an aggressor
outside the demo's own cgroups (scripts/demo.sh: reveal-demo/...) — another tenant, or "/",
processes outside every cgroup such as a build in a shell — is something else on this host
hurting the job: printed as such, not counted as a false alarm. One that names no outside
aggressor is, and so is every incident of a clean run (kind none). The rule needs the demo's
cgroups: when the report names none of them (not root, no v2 tree: everything ran in the
script's own cgroup, which would look like an outsider), every incident elsewhere is a false
alarm.
"""
import json
import math
import sys

DEMO_CGROUPS = "reveal-demo/"  # scripts/demo.sh's cgroups: <v2 root>/reveal-demo/{train,neighbour,fault}
EXPECTED = {"cpu": "cpu", "membw": "memory", "memory": "memory", "disk": "storage", "net": "network"}


def print_impact(inc, steps_path, f0, f1):
    """The incident's estimated slowdown beside the one the job's steps measured (1 - before/during)."""
    before, during = [], []
    try:
        with open(steps_path, errors="replace") as f:
            for line in f:
                x = line.split()
                try:
                    t, dt = float(x[0]), float(x[2])
                except (ValueError, IndexError):
                    continue  # a header, a partial last line
                if len(x) == 3 and math.isfinite(t) and math.isfinite(dt) and dt > 0:
                    (before if t < f0 else during if t <= f1 else []).append(dt)
    except OSError as e:
        print(f"   IMPACT: the steps are unreadable ({e.strerror}: {steps_path})")
        return
    measured = f"{100 * (1 - (sum(before) / len(before)) / (sum(during) / len(during))):.0f} %" if before and during else "unknown"
    imp = inc.get("impact")
    est = "none (no tenant scans)" if not imp else (
        f"{100 * imp['slowdown']:.0f} % ({imp['text']})" if imp.get("slowdown") is not None else imp.get("basis", "unknown"))
    print(f"   IMPACT: estimated slowdown {est}; the job's steps measured {measured}")


def main():
    report = json.load(open(sys.argv[1]))
    kind, f0, f1 = open(sys.argv[2]).read().split()
    f0, f1 = float(f0), float(f1)
    want = EXPECTED.get(kind, kind)
    hits, false_alarms = [], []
    named = [t.get("cgroup", "") for inc in report["incidents"] for t in (inc.get("aggressors") or []) + (inc.get("victims") or [])]
    demo_cgroups = any(str(c).startswith(DEMO_CGROUPS) for c in named)
    for inc in report["incidents"]:
        s, e = inc["start_unix_ns"] / 1e9, inc["end_unix_ns"] / 1e9
        (hits if s <= f1 and e >= f0 else false_alarms).append(inc)
    ok = True
    if kind == "none":  # clean run: every incident is a false alarm
        false_alarms, hits = report["incidents"], []
    elif not hits:
        print(f"   MISSED: no incident overlaps the injected {kind} fault")
        ok = False
    for inc in hits:
        delay = inc["start_unix_ns"] / 1e9 - f0
        right = inc["subsystem"] == want
        ok &= right
        print(f"   {'DETECTED' if right else 'WRONG SUBSYSTEM'}: incident {inc['start']} → {inc['end']}, "
              f"subsystem {inc['subsystem']} ({inc['confidence']*100:.0f} %), expected {want}; "
              f"detected {delay:+.1f} s after onset")
    if len(sys.argv) > 3 and hits:
        print_impact(hits[0], sys.argv[3], f0, f1)
    for inc in false_alarms:
        outside = [a for a in inc.get("aggressors") or [] if not str(a.get("cgroup", "")).startswith(DEMO_CGROUPS)]
        if outside and kind != "none" and demo_cgroups:
            print(f"   ANOTHER NEIGHBOUR: incident {inc['start']} → {inc['end']} ({inc['subsystem']}) outside the "
                  f"injected fault names a neighbour outside the demo: {outside[0].get('text', outside[0].get('cgroup'))} "
                  "(something else on this host; not a false alarm)")
            continue
        print(f"   FALSE ALARM: incident {inc['start']} → {inc['end']} ({inc['subsystem']}) outside the fault")
        ok = False
    print("   RESULT:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
