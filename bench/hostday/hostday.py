#!/usr/bin/python3
"""A compressed host day for Reveal (issue #17): one `reveal agent` watches a host on which a
seeded scheduler starts, stops and overlaps real training/serving jobs and injects labelled faults
into them; the agent's live incidents and `reveal detect` on its store are then scored.

  hostday.py run --out DIR --duration 2h [--seed N] [--reveal PATH] [--port P] [--plan-only]
                 [--agent-warmup 120s] [--poll 15s] [--no-faults]
  hostday.py score DIR [--reveal PATH] [--reuse] [--from D] [--until D] [--beside LOG]

run: writes DIR/plan.json first (the whole day, seeded: same seed, duration and workload/fault
lists give the same plan), then executes it: the agent (store DIR/agent.db, 1 s interval), the
primary tenant's jobs one after another with idle gaps, sometimes a second tenant's job on top,
faults (bench/scenarios/faults.py) at planned times into running primary jobs. Every job and every
fault injector runs in a leaf cgroup of its own, <cgroup v2 root>/reveal-hostday/<id> (as a container
runtime would place them), removed when it ends; the v2 root is found as Reveal finds it
(/sys/fs/cgroup, else the hybrid layout's /sys/fs/cgroup/unified; neither: no cgroups). It polls the
agent's /incidents every --poll and appends new or changed incidents to DIR/live_incidents.jsonl,
saves /metrics at the end, stops everything on exit or SIGINT/SIGTERM (the agent last, with
SIGTERM, so its store is flushed) and writes DIR/labels.json (fault intervals with their true
subsystem and step-time effect; the jobs' and faults' cgroups; workload events — NOT faults) and
DIR/run.json.
score: scores the live incidents, `reveal detect DIR/agent.db --json` (self-referenced; the
report is kept as DIR/detect.json) and the agent's detector replayed over the store (`reveal
detect --streaming --agent-config DIR/agent.toml`, kept as DIR/detect_streaming.json: how the
scoring binary's agent would have done live) against the labels, including whether incidents name
the right cgroups (a fault's or a second tenant's among `aggressors`, the job it hurts among
`victims`); writes DIR/scores.md and DIR/scores.json.
Needs root, Debian's python3-torch, stress-ng, iproute2. See bench/hostday/README.md.
"""
import argparse
import json
import math
import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCEN = os.path.join(REPO, "bench", "scenarios")
sys.path.insert(0, SCEN)
from score import pct  # noqa: E402  (percentiles as the suite's scorer computes them)
WORKLOADS = os.path.join(SCEN, "workloads.py")
FAULTS = os.path.join(SCEN, "faults.py")
PY = "/usr/bin/python3"
# The 10 models of the labelled suite (bench/scenarios/README.md); every other name that
# `workloads.py --list` prints is one of the new shapes and joins the pool as well.
SUITE_MODELS = ["resnet18", "mobilenet", "vit", "autoencoder", "transformer", "lstm_lm", "gru", "tcn", "dlrm",
                "wide_mlp"]
# Models used for DDP across the veth pair (dense gradients, small steps).
VETH_MODELS = ["transformer", "resnet18", "lstm_lm", "gru", "wide_mlp", "vit"]
# Fault kinds that need the veth/netns DDP job, and those that need 2 ranks.
VETH_KINDS = {"mtu", "linkdeg", "linkloss"}
DDP_KINDS = {"straggler"}
EVENT_NEAR_S = 30.0  # a false incident starting within this of a workload event is "at an event"
STEP_BEFORE_S = 60.0  # step time before a fault: the victim's steps of the 60 s before it
SETTLE_S = 10.0  # `reveal detect`'s default --settle: no incident can end inside it
BESIDE_NEAR_S = 5.0  # a false incident this near a span of unlabelled work (--beside) is "beside" it
NEIGHBOUR_NEAR_S = 5.0  # an incident opened within this of a second tenant's start is "at" it
# Every job and every fault runs in a leaf cgroup of its own, <v2 root>/reveal-hostday/<id>, as a
# container runtime would place them: Reveal can then name them in an incident (victims: pressure
# rose; aggressors: CPU use rose at the onset).
CG_PARENT = "reveal-hostday"
# Fault kinds whose injector runs processes of its own (a noisy neighbour's container: its cgroup
# should be named among an incident's aggressors), and those that act on the job itself, a link or
# the kernel from an idle injector (bench/scenarios/faults.py). A kind in neither (new in faults.py)
# counts as having its own processes when its cgroup held one besides the injector at two polls.
OWN_PROCESS_KINDS = {"cpu", "cache", "membw", "memleak", "disk", "iometa", "net", "oversub", "ionoisy", "forkstorm",
                     "ctxswitch", "mempressure"}
ON_JOB_KINDS = {"none", "quota", "affinity", "mtu", "linkdeg", "linkloss", "straggler", "cachedrop"}
# Starts the commands of argv[1] (JSON) as its children, in its own session and process group (so a
# job of several processes, e.g. one rank here and one under `ip netns exec`, is one group), and
# exits with the first non-zero status.
GROUP_LAUNCHER = """import json, subprocess, sys
ps = [subprocess.Popen(c) for c in json.loads(sys.argv[1])]
rc = [p.wait() for p in ps]
sys.exit(next((r for r in rc if r), 0))
"""


class Interrupted(Exception):
    pass


def die(msg, code=2):
    print(f"hostday.py: {msg}", file=sys.stderr)
    sys.exit(code)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        die(message.replace("\n", " "))


def parse_duration(text, what="duration"):
    """'2h', '30m', '90s', '1h30m', '500ms' or plain seconds -> seconds (float > 0)."""
    s = str(text).strip()
    if re.fullmatch(r"\d+(\.\d+)?", s):
        v = float(s)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", s)
        if not parts or "".join(a + b for a, b in parts) != s:
            die(f"bad {what} '{text}' (e.g. 2h, 30m, 90s, 1h30m)")
        v = sum(float(a) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}[u] for a, u in parts)
    if not v > 0:
        die(f"bad {what} '{text}': must be > 0")
    return v


def fmt_s(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def git_commit():
    r = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    return (r.stdout.strip() + ("+dirty" if dirty else "")) if r.returncode == 0 else "unknown"


# ------------------------------------------------------------------------------------ capabilities
def capabilities():
    """What bench/scenarios offers right now: workloads (--list), their flags, fault kinds, inject flags."""
    def run(cmd):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"{' '.join(cmd[1:3])} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}", 1)
        return r.stdout
    if not os.path.isfile(WORKLOADS) or not os.path.isfile(FAULTS):
        die(f"bench/scenarios not found next to {HERE}", 1)
    models = []
    for line in run([PY, WORKLOADS, "--list"]).splitlines():
        f = line.split("\t")
        if f and f[0]:
            models.append({"name": f[0], "family": f[1] if len(f) > 1 else "", "info": "\t".join(f[2:])})
    kinds = {}
    for line in run([PY, FAULTS, "list"]).splitlines():
        f = line.split("\t")
        if len(f) >= 2 and f[0] != "none":
            kinds[f[0]] = {"subsystem": f[1], "what": f[2] if len(f) > 2 else ""}
    wflags = set(re.findall(r"--[a-z][a-z0-9-]+", run([PY, WORKLOADS, "--help"])))
    r = subprocess.run([PY, FAULTS, "inject", "--help"], capture_output=True, text=True)
    if r.returncode == 0:
        fflags = set(re.findall(r"--[a-z][a-z0-9-]+", r.stdout))
    else:  # a help text argparse cannot format: the options as declared in the source
        fflags = set(re.findall(r"add_argument\(\s*\"(--[a-z][a-z0-9-]+)\"(?:,\s*\"(--[a-z][a-z0-9-]+)\")?",
                                open(FAULTS).read()))
        fflags = {f for pair in fflags for f in pair if f}
    return {"models": models, "kinds": kinds, "workload_flags": sorted(wflags), "inject_flags": sorted(fflags)}


# ------------------------------------------------------------------------------------ cgroups
def find_cgroup_v2(root="/"):
    """The cgroup v2 hierarchy as Reveal finds it (src/telemetry/cgroup/hierarchy.cpp):
    <root>/sys/fs/cgroup when it has cgroup.controllers (unified), else /sys/fs/cgroup/unified when
    that has it (systemd's hybrid layout: no controllers there, but cpu.stat and the PSI files)."""
    base = os.path.join(root, "sys", "fs", "cgroup")
    for d in (base, os.path.join(base, "unified")):
        if os.path.exists(os.path.join(d, "cgroup.controllers")):
            return d
    return None


def cgroup_plan():
    """({"root", "parent", "hybrid"}, None) where the day's cgroups go, or (None, why not). The parent is
    reveal-hostday, or reveal-hostday-<pid> when reveal-hostday already holds cgroups (another run's,
    or those of a run that was killed)."""
    root = find_cgroup_v2()
    if root is None:
        return None, "no cgroup v2 hierarchy (neither /sys/fs/cgroup nor /sys/fs/cgroup/unified has cgroup.controllers)"
    parent, p = CG_PARENT, os.path.join(root, CG_PARENT)
    try:
        if os.path.isdir(p) and any(os.path.isdir(os.path.join(p, d)) for d in os.listdir(p)):
            parent = f"{CG_PARENT}-{os.getpid()}"
    except OSError:
        parent = f"{CG_PARENT}-{os.getpid()}"
    return {"root": root, "parent": parent, "hybrid": root.endswith("/unified")}, None


def cgroup_of(pid):
    """pid's cgroup in the v2 hierarchy, relative to its root ('' for the root), or None."""
    try:
        for line in open(f"/proc/{pid}/cgroup"):
            if line.startswith("0::"):
                return line[3:].strip().strip("/")
    except OSError:
        pass
    return None


def norm_cg(path):
    return str(path).strip().strip("/") if path else ""


class Cgroups:
    """The day's leaf cgroups under <v2 root>/<parent>: made when a job or fault starts, its process
    moved in before exec (its children, forked later, inherit it), removed when it is over."""

    def __init__(self, root, parent):
        self.root, self.parent = root, parent
        self.made = []  # relative paths of the leaves made, in order
        self.parent_made = False

    def path(self, rel):
        return os.path.join(self.root, rel)

    def up(self):
        """The parent: made, or adopted when it is there and empty (a killed run's); removed at the end."""
        try:
            os.mkdir(self.path(self.parent))
        except FileExistsError:
            pass
        self.parent_made = True

    def make(self, name):
        rel = f"{self.parent}/{name}"
        os.mkdir(self.path(rel))
        self.made.append(rel)
        return rel

    def preexec(self, rel):
        """For Popen(preexec_fn=): the child moves itself into rel before exec. Only os calls (no
        allocation-heavy work between fork and exec); a failure leaves it where it was, checked after."""
        procs = os.path.join(self.path(rel), "cgroup.procs")

        def move():
            try:
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
            except OSError:
                pass
        return move

    def procs(self, rel):
        try:
            return [int(x) for x in open(os.path.join(self.path(rel), "cgroup.procs")).read().split()]
        except (OSError, ValueError):
            return []

    def cpu_s(self, rel):
        """CPU time used in rel (cpu.stat usage_usec; kept after its processes are gone), or None."""
        try:
            for line in open(os.path.join(self.path(rel), "cpu.stat")):
                k, _, v = line.partition(" ")
                if k == "usage_usec":
                    return int(v) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def remove(self, rel, wait_s=5.0):
        """rmdir rel, retrying for wait_s; a process still in it (one of ours that left its group)
        is killed. Returns the pids killed, or None when rel could not be removed."""
        killed = set()
        end = time.time() + wait_s
        while True:
            try:
                os.rmdir(self.path(rel))
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.time() >= end:
                    return None
                for pid in self.procs(rel):
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.add(pid)
                    except OSError:
                        pass
                time.sleep(0.1)
        if rel in self.made:
            self.made.remove(rel)
        return sorted(killed)

    def down(self):
        """Every leaf left, then the parent. Returns what could not be removed."""
        left = [rel for rel in list(self.made) if self.remove(rel) is None]
        if self.parent_made and not left:
            for _ in range(20):
                try:
                    os.rmdir(self.path(self.parent))
                    self.parent_made = False
                    break
                except FileNotFoundError:
                    self.parent_made = False
                    break
                except OSError:
                    time.sleep(0.1)
        return left + ([self.parent] if self.parent_made else [])

    def existing(self):
        """The day's cgroups still there (for the leftover check)."""
        out = [rel for rel in self.made if os.path.isdir(self.path(rel))]
        if os.path.isdir(self.path(self.parent)) and (self.parent_made or out):
            out.append(self.parent)
        return out


# ------------------------------------------------------------------------------------ the plan
def scale(duration):
    """Job, gap and fault lengths for a day of this length (seconds)."""
    if duration <= 900:  # the test's short variant
        return {"job": (100, 150), "gap": (5, 15), "fault": (20, 25), "spacing": (35, 50), "second_p": 0.5,
                "job_settle": 35, "min_faults": 3}
    # job_settle: a fault lands after the victim's start-up and after the STEP_BEFORE_S of steady
    # steps its step effect is measured against (short days: as soon as 35 s, to fit in).
    if duration < 3600:
        return {"job": (150, 240), "gap": (10, 45), "fault": (25, 40), "spacing": (60, 150), "second_p": 0.35,
                "job_settle": STEP_BEFORE_S + 15, "min_faults": 5}
    return {"job": (180, 480), "gap": (15, 120), "fault": (30, 60), "spacing": (90, 300), "second_p": 0.4,
            "job_settle": STEP_BEFORE_S + 15, "min_faults": 10}


def job_args(job, caps, rng):
    """Extra workloads.py flags of a job's shape (only flags workloads.py has). The named workloads
    keep their own phases (checkpoint/eval periods, the server's rate schedule); a suite model
    sometimes gets checkpoints and evaluation passes too, as real training jobs have."""
    flags, d, extra = set(caps["workload_flags"]), job["duration_s"], []
    if job["workload"] in SUITE_MODELS and rng.random() < 0.3:
        if "--checkpoint-every" in flags:
            extra += ["--checkpoint-every", str(int(rng.uniform(0.2, 0.4) * d))]
        if "--eval-every" in flags:
            extra += ["--eval-every", str(int(rng.uniform(0.25, 0.45) * d))]
    if job["workload"] == "infer_server" and "--seed" in flags:
        extra += ["--seed", str(rng.randrange(1000))]
    return extra


def make_plan(duration, seed, caps, warmup_s):
    """Seeded plan of jobs and faults; retried with derived seeds until it meets the minimums."""
    sc = scale(duration)
    best, best_key = None, None
    for attempt in range(60):
        plan = _plan_once(duration, seed, attempt, caps, warmup_s, sc)
        n_kinds = len({f["kind"] for f in plan["faults"]})
        # a day of an hour or more should see every kind; a shorter one at least 3
        want_kinds = len(caps["kinds"]) if duration >= 3600 else min(3, len(caps["kinds"]))
        basic = (len(plan["faults"]) >= sc["min_faults"] and len({j["workload"] for j in plan["jobs"]}) >= 3
                 and (duration < 300 or any(j["tenant"] == "second" for j in plan["jobs"])))
        if basic and n_kinds >= want_kinds:
            return plan
        key = (basic, n_kinds, len(plan["faults"]))
        if best_key is None or key > best_key:
            best, best_key = plan, key
    return best


def _plan_once(duration, seed, attempt, caps, warmup_s, sc):
    rng = random.Random(f"{seed}/{attempt}")
    names = [m["name"] for m in caps["models"]]
    suite = [m for m in SUITE_MODELS if m in names]
    shapes = [m for m in names if m not in SUITE_MODELS]
    veth_models = [m for m in VETH_MODELS if m in names] or suite[:1]
    # the veth job hosts the link faults: twice in the pool of a long day
    pool = suite + shapes + (["veth_ddp"] * (2 if duration >= 3600 else 1) if veth_models else [])
    bag = []

    def draw():
        if not bag:
            bag.extend(rng.sample(pool, len(pool)))
        return bag.pop()

    def new_job(workload, tenant, start, dur):
        j = {"id": "", "workload": workload, "model": workload, "tenant": tenant, "start_s": round(start, 1),
             "duration_s": round(dur, 1), "ddp": 1, "netns": False, "threads": 0}
        if workload == "veth_ddp":
            j.update(model=rng.choice(veth_models), ddp=2, netns=True)
        elif tenant == "primary" and workload not in ("infer_server", "dataloader_train"):
            j["ddp"] = rng.choice([1, 2])
        if tenant == "second":
            j["threads"] = 1
        j["args"] = job_args(j, caps, rng)
        return j

    jobs, t = [], 0.0
    while t < duration - sc["job"][0] / 2:
        dur = min(rng.uniform(*sc["job"]), duration - 5 - t)
        if dur < 60:
            break
        jobs.append(new_job(draw(), "primary", t, dur))
        t += dur + rng.uniform(*sc["gap"])
    second = []
    for p in jobs:
        if p["duration_s"] >= 90 and rng.random() < sc["second_p"]:
            st = p["start_s"] + rng.uniform(15, p["duration_s"] * 0.4)
            dur = min(p["duration_s"] * rng.uniform(0.35, 0.6), duration - 5 - st)
            if dur >= 45:
                wl = rng.choice(sorted({w for w in pool if w != "veth_ddp"}))
                second.append(new_job(wl, "second", st, dur))
    jobs = sorted(jobs + second, key=lambda j: j["start_s"])
    for k, j in enumerate(jobs):
        j["id"] = f"j{k + 1:02d}"

    # faults: none before the agent's model is fitted, none overlapping, spaced apart, none within
    # 15 s before / 10 s after any job's start or stop, only into primary jobs that have run
    # job_settle seconds and run on for 15 s after the fault.
    boundaries = [b for j in jobs for b in (j["start_s"], j["start_s"] + j["duration_s"])]
    kinds = list(caps["kinds"])
    queue = []
    faults, t = [], warmup_s + 15 + rng.uniform(0, 20)
    while True:
        fdur = round(rng.uniform(*sc["fault"]), 1)
        if t + fdur + 30 > duration:
            break
        victims = [j for j in jobs if j["tenant"] == "primary" and j["start_s"] + sc["job_settle"] <= t
                   and t + fdur + 15 <= j["start_s"] + j["duration_s"]]
        clear = not any(t - 15 <= b <= t + fdur + 10 for b in boundaries)
        if not victims or not clear:
            t += 5
            continue
        v = victims[0]
        if not queue:
            queue.extend(rng.sample(kinds, len(kinds)))

        def fits(k):
            return (k not in VETH_KINDS or v["netns"]) and (k not in DDP_KINDS or v["ddp"] >= 2)
        special = [k for k in queue if fits(k) and (k in VETH_KINDS or k in DDP_KINDS)]
        ok = [k for k in queue if fits(k)]
        if not ok:  # the rest of the queue needs another kind of job: pick any that fits
            ok = [k for k in kinds if fits(k)]
            kind = rng.choice(ok)
        else:
            kind = (special or ok)[0]
            queue.remove(kind)
        faults.append({"id": f"f{len(faults) + 1:02d}", "kind": kind, "subsystem": caps["kinds"][kind]["subsystem"],
                       "job": v["id"], "at_s": round(t, 1), "duration_s": fdur})
        t += fdur + rng.uniform(*sc["spacing"])
    return {"schema": "reveal.hostday.plan/1", "seed": seed, "attempt": attempt, "duration_s": duration,
            "agent_warmup_s": warmup_s, "scale": sc, "pool": sorted(set(pool)), "kinds": kinds, "jobs": jobs,
            "faults": faults,
            "workload_flags": caps["workload_flags"]}


def plan_summary(plan):
    lines = [f"plan: seed {plan['seed']} (attempt {plan['attempt']}), {fmt_s(plan['duration_s'])}, "
             f"{len(plan['jobs'])} jobs ({sum(j['tenant'] == 'second' for j in plan['jobs'])} second-tenant), "
             f"{len({j['workload'] for j in plan['jobs']})} workloads, {len(plan['faults'])} faults "
             f"({len({f['kind'] for f in plan['faults']})} kinds)"]
    cg = plan.get("cgroups") or {}
    if cg.get("root"):
        lines.append(f"cgroups: each job and fault in its own, {cg['root']}/{cg['parent']}/<id>"
                     + (" (hybrid host: the controller-less v2 tree)" if cg.get("hybrid") else ""))
    elif cg.get("none"):
        lines.append(f"cgroups: none ({cg['none']}): jobs and faults stay in hostday.py's cgroup")

    def where(x):
        return f"  [{x['cgroup']}]" if x.get("cgroup") else ""
    for j in plan["jobs"]:
        shape = f"{j['model']} ddp={j['ddp']}" + (" veth" if j["netns"] else "")
        lines.append(f"  {j['id']} +{fmt_s(j['start_s'])} {fmt_s(j['duration_s'])} {j['tenant']:7s} {j['workload']:16s} "
                     f"{shape} {' '.join(j['args'])}".rstrip() + where(j))
    for f in plan["faults"]:
        lines.append(f"  {f['id']} +{fmt_s(f['at_s'])} {f['duration_s']:.0f}s {f['kind']:10s} ({f['subsystem']}) -> {f['job']}"
                     + where(f))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ execution
def pgid_members(pgid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open(f"/proc/{d}/stat").read()
                if int(st[st.rindex(")") + 2:].split()[2]) == pgid:
                    out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def marked_processes(marker):
    """Processes whose environment carries REVEAL_HOSTDAY=marker (everything this run started)."""
    me, out = os.getpid(), []
    needle = f"REVEAL_HOSTDAY={marker}".encode()
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != me:
            try:
                if needle in open(f"/proc/{d}/environ", "rb").read().split(b"\0"):
                    out.append(int(d))
            except OSError:
                pass
    return out


def kill_group(pgid, grace=8.0):
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    end = time.time() + grace
    while time.time() < end and pgid_members(pgid):
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def http_get(url, timeout=5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def metric_value(text, name):
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        return None


class Day:
    def __init__(self, a, plan, caps):
        self.a, self.plan, self.caps = a, plan, caps
        self.out = a.out
        self.marker = f"{os.getpid()}-{time.time_ns()}"
        self.env = {**os.environ, "PYTHONWARNINGS": "ignore", "REVEAL_HOSTDAY": self.marker}
        self.agent = None
        self.jobs = {}  # id -> state
        self.faults = {}  # id -> state
        self.events = []
        self.skipped = []
        self.netns = None
        self.netns_id = f"hd{os.getpid() % 100000}"
        self.seen = {}  # incident key -> (state, end)
        self.changes_seen = set()
        self.change_starts = set()
        self.t0 = None
        self.run_info = {"complete": False, "agent_restarts": 0, "healthz_failures": 0, "polls": 0,
                         "poll_failures": 0, "model_ready_unix_ns": None, "notes": []}
        self.logf = open(os.path.join(self.out, "hostday.log"), "a", buffering=1)
        self.fault_pids = []
        cg = plan.get("cgroups") or {}
        self.cg = Cgroups(cg["root"], cg["parent"]) if cg.get("root") else None
        self.cg_on = False  # new leaves are made: from cgroups_up() on, until a failure (said once)
        self.cg_note = None if self.cg else (f"cgroups: {cg.get('none', 'none planned')}; every job and fault "
                                             "runs in hostday.py's cgroup")

    # ---------------------------------------------------------------- logging
    def say(self, msg):
        rel = "" if self.t0 is None else f" +{fmt_s(time.time() - self.t0)}"
        line = f"[{time.strftime('%H:%M:%S')}{rel}] {msg}"
        for out in (sys.stdout, self.logf):
            try:
                out.write(line + "\n")
                out.flush()
            except (OSError, ValueError):
                pass

    def guarded(self, what, fn, *args, **kw):
        """Runs one step of the shutdown; a failure is noted and the next steps still run."""
        try:
            return fn(*args, **kw)
        except Exception as e:
            self.run_info["notes"].append(f"{what} failed: {e}")
            self.say(f"{what} failed: {e}")
            return None

    def event(self, job, event, phase="", t_ns=None):
        self.events.append({"t_unix_ns": t_ns or time.time_ns(), "job": job["id"], "workload": job["workload"],
                            "tenant": job["tenant"], "event": event, "phase": phase})

    # ---------------------------------------------------------------- the veth pair and the agent
    def netns_up(self):
        octet = random.Random(self.plan["seed"]).randrange(20, 220)
        r = subprocess.run([PY, FAULTS, "netns-up", self.netns_id, "--octet", str(octet)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError(f"netns-up failed: {r.stderr.strip()}")
        self.netns = dict(kv.split("=", 1) for kv in r.stdout.split())
        self.say(f"veth pair {self.netns['DEV_A']} (root, {self.netns['ADDR_A']}) <-> {self.netns['DEV_B']} "
                 f"(netns {self.netns['NETNS']}, {self.netns['ADDR_B']})")

    def netns_down(self):
        if self.netns:
            subprocess.run([PY, FAULTS, "netns-down", self.netns_id], capture_output=True)
            self.netns = None

    def prepare_dataset(self):
        """dataloader_train's sample files are written once per host (workloads.py keeps them under its
        --workdir): written before the day, as a host's dataset is already on disk."""
        t = time.time()
        self.say("preparing dataloader_train's dataset (once per host; a 1 s job)")
        r = subprocess.run([PY, WORKLOADS, "--model", "dataloader_train", "--duration", "1"], capture_output=True,
                           text=True, env=self.env, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"dataloader_train dataset: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        self.say(f"dataset ready ({time.time() - t:.0f} s)")
        subprocess.run(["sync"])

    def start_agent(self):
        a = self.a
        conf = os.path.join(self.out, "agent.toml")
        with open(conf, "w") as f:
            f.write(f'# written by hostday.py\n[detect]\nwarmup = "{int(self.plan["agent_warmup_s"])}s"\n')
        cmd = [a.reveal, "agent", "--config", conf, "--store", os.path.join(self.out, "agent.db"),
               "--listen", f"127.0.0.1:{a.port}", "--interval", "1s", "--store-max-size", "2GiB",
               "--store-max-age", "48h", "-q"]
        self.run_info["agent_command"] = " ".join(cmd)
        self.agent_err = open(os.path.join(self.out, "agent.log"), "a")
        self.agent = subprocess.Popen(cmd, stdout=self.agent_err, stderr=subprocess.STDOUT, start_new_session=True,
                                      env=self.env)
        self.base = f"http://127.0.0.1:{a.port}"
        end = time.time() + 60
        while time.time() < end:
            if self.agent.poll() is not None:
                raise RuntimeError(f"the agent exited with {self.agent.returncode}: "
                                   f"{open(os.path.join(self.out, 'agent.log')).read().strip()[-300:]}")
            try:
                if http_get(self.base + "/healthz", 2)[0] == 200:
                    self.say(f"agent up (pid {self.agent.pid}), store {self.out}/agent.db, {self.base}")
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.5)
        raise RuntimeError("the agent did not answer /healthz within 60 s")

    def stop_agent(self):
        if self.agent is None:
            return
        if self.agent.poll() is not None:
            self.run_info["agent_exit_code"] = self.agent.returncode
            return
        self.agent.send_signal(signal.SIGTERM)
        try:
            self.agent.wait(90)
        except subprocess.TimeoutExpired:
            self.run_info["notes"].append("agent did not stop within 90 s of SIGTERM: killed")
            self.agent.kill()
            self.agent.wait()
        self.run_info["agent_exit_code"] = self.agent.returncode
        self.say(f"agent stopped (exit {self.agent.returncode})")

    # ---------------------------------------------------------------- polling
    def poll(self, final=False):
        self.run_info["polls"] += 1
        try:
            st, body = http_get(self.base + "/incidents")
            j = json.loads(body)
        except (OSError, urllib.error.URLError, ValueError) as e:
            self.run_info["poll_failures"] += 1
            self.say(f"poll /incidents failed: {e}")
            return
        now = time.time_ns()
        lines = []
        groups = [("active", [j["active"]] if j.get("active") else [], "active"),
                  ("recent", j.get("recent") or [], "closed"),
                  ("active_absences", j.get("active_absences") or [], "active"),
                  ("recent_absences", j.get("recent_absences") or [], "closed")]
        if len(j.get("recent") or []) >= 100:
            self.run_info["notes"].append("a poll saw 100 closed incidents: some may have been dropped between polls")
        for src, incs, state in groups:
            for inc in incs:
                key = f"{inc.get('kind', '?')}/{inc['start_unix_ns']}"
                sig = (state, inc.get("end_unix_ns"), inc.get("subsystem"), tenant_names(inc, "victims"),
                       tenant_names(inc, "aggressors"))
                if self.seen.get(key) != sig:
                    if key not in self.seen:
                        self.say(f"agent {'opened' if state == 'active' else 'reported'} incident: {inc.get('kind')} "
                                 f"{inc.get('subsystem')} from {time.strftime('%H:%M:%S', time.localtime(inc['start_unix_ns'] / 1e9))}"
                                 + ("" if state == "active" else f", {(inc['end_unix_ns'] - inc['start_unix_ns']) / 1e9:.0f} s")
                                 + "".join(f"; {w} {', '.join(tenant_names(inc, w))}" for w in ("victims", "aggressors")
                                           if tenant_names(inc, w)))
                    self.seen[key] = sig
                    lines.append({"polled_unix_ns": now, "key": key, "state": state, "list": src, "incident": inc})
        if lines:
            with open(os.path.join(self.out, "live_incidents.jsonl"), "a") as f:
                for line in lines:
                    f.write(json.dumps(line) + "\n")
        # Workload changes (active_workload_change, workload_changes) are not incidents: any other key
        # holding an object or a list of them is logged on its own, never as incidents.
        # ("pending": the open incident not reported yet, in the store as incident_pending events)
        known = {"schema", "host", "active", "pending", "recent", "active_absences", "recent_absences"}
        for k, v in j.items():
            if k in known or not isinstance(v, (list, dict)):
                continue
            new = []
            for item in (v if isinstance(v, list) else [v]):
                if not isinstance(item, dict):
                    continue
                s = json.dumps(item, sort_keys=True)
                if (k, s) not in self.changes_seen:
                    self.changes_seen.add((k, s))
                    if item.get("start_unix_ns") not in self.change_starts:
                        self.change_starts.add(item.get("start_unix_ns"))
                        self.say(f"agent reported a workload change ({k}): {item.get('subsystem', '?')} from "
                                 f"{time.strftime('%H:%M:%S', time.localtime(item.get('start_unix_ns', 0) / 1e9))}")
                    new.append({"polled_unix_ns": now, "key": k,
                                "state": "active" if k.startswith("active") else "closed", "item": item})
            if new:
                with open(os.path.join(self.out, "live_workload_changes.jsonl"), "a") as f:
                    for line in new:
                        f.write(json.dumps(line) + "\n")
        try:
            st, met = http_get(self.base + "/metrics")
            ready = metric_value(met, "reveal_model_ready")
            fit = metric_value(met, "reveal_model_fit_timestamp_seconds")
            if ready == 1 and self.run_info["model_ready_unix_ns"] is None and fit:
                self.run_info["model_ready_unix_ns"] = int(fit * 1e9)
                self.say("agent's model fitted (warm-up over)")
            self.run_info["samples_total"] = metric_value(met, "reveal_samples_total")
            self.run_info["samples_skipped_total"] = metric_value(met, "reveal_samples_skipped_total")
            if final:
                with open(os.path.join(self.out, "metrics_end.txt"), "w") as f:
                    f.write(met)
            if http_get(self.base + "/healthz")[0] != 200:
                self.run_info["healthz_failures"] += 1
        except urllib.error.HTTPError as e:
            self.run_info["healthz_failures"] += 1
            self.say(f"agent /healthz: {e.code}")
        except (OSError, urllib.error.URLError) as e:
            self.run_info["poll_failures"] += 1
            self.say(f"poll /metrics failed: {e}")

    # ---------------------------------------------------------------- cgroups
    def cgroups_up(self):
        if self.cg is None:
            self.say(self.cg_note)
            self.run_info["notes"].append(self.cg_note)
            return
        try:
            self.cg.up()
        except OSError as e:
            self.cg_off(f"cannot make {self.cg.path(self.cg.parent)}: {e}")
            return
        self.cg_on = True
        self.say(f"cgroups: each job and fault in its own leaf, {self.cg.path(self.cg.parent)}/<id>")

    def cg_off(self, why):
        """No cgroups from here on (said once)."""
        self.cg_note = f"cgroups: {why}; jobs and faults run in hostday.py's cgroup from here on"
        self.say(self.cg_note)
        self.run_info["notes"].append(self.cg_note)
        self.cg_on = False

    def cg_make(self, ident):
        """(relative path, preexec_fn) of a new leaf for job/fault ident, or (None, None)."""
        if not self.cg_on:
            return None, None
        try:
            rel = self.cg.make(ident)
        except OSError as e:
            self.cg_off(f"cannot make {self.cg.path(self.cg.parent + '/' + ident)}: {e}")
            return None, None
        return rel, self.cg.preexec(rel)

    def cg_check(self, rel, pid, what):
        """rel if pid landed in it, else None (noted); the leaf is removed then."""
        if rel is None:
            return None
        now = cgroup_of(pid)
        if now == rel or pid in self.cg.procs(rel):
            return rel
        if now is None and pid not in self.cg.procs(rel):  # already exited: it ran there (or never ran)
            return rel
        note = f"{what} (pid {pid}) is in cgroup '{now}', not {rel}: the move failed"
        self.run_info["notes"].append(note)
        self.say(note)
        self.cg_remove(rel, what)
        return None

    def cg_remove(self, rel, what):
        """The leaf's CPU seconds, then the leaf removed (a process still in it is killed, noted)."""
        if rel is None or self.cg is None:
            return None
        cpu = self.cg.cpu_s(rel)
        killed = self.cg.remove(rel)
        if killed is None:
            self.run_info["notes"].append(f"could not remove cgroup {rel} of {what} (retried at the end)")
        elif killed:
            note = f"killed {len(killed)} process(es) left in {what}'s cgroup {rel}: {killed}"
            self.run_info["notes"].append(note)
            self.say(note)
        return cpu

    # ---------------------------------------------------------------- jobs
    def start_job(self, j):
        d = os.path.join(self.out, "jobs", j["id"])
        os.makedirs(d, exist_ok=True)
        train_s = max(20.0, j["duration_s"] - 8)  # start-up (torch import, DDP rendezvous) takes some
        base = [PY, WORKLOADS, "--model", j["model"], "--duration", f"{train_s:.0f}"]
        if j["threads"]:
            base += ["--threads", str(j["threads"])]
        if "--checkpoint-dir" in self.caps["workload_flags"]:  # removed by the job at its end
            base += ["--checkpoint-dir", os.path.join(self.out, "ckpt")]
        logs = ["--step-log", os.path.join(d, "steps.log")]
        if "--phase-log" in self.caps["workload_flags"]:
            logs += ["--phase-log", os.path.join(d, "phases.log")]
        log = open(os.path.join(d, "workload.log"), "w")
        st = {"job": j, "dir": d, "procs": [], "pgid": None, "started_ns": time.time_ns(), "ended_ns": None,
              "status": "running", "phase_pos": 0, "first_step": False, "cgroup": None, "cgroup_cpu_s": None}
        rel, into = self.cg_make(j["id"])
        if j["netns"]:
            if not self.netns:
                raise RuntimeError("veth job without the veth pair")
            n = self.netns
            with socket.socket() as s:
                s.bind((n["ADDR_A"], 0))
                port = s.getsockname()[1]
            common = ["--ddp", "2", "--master-addr", n["ADDR_A"], "--master-port", str(port)] + j["args"]
            ranks = [base + common + ["--rank", "0", "--ifname", n["DEV_A"]] + logs,
                     ["ip", "netns", "exec", n["NETNS"]] + base + common + ["--rank", "1", "--ifname", n["DEV_B"]]]
            p = subprocess.Popen([PY, "-c", GROUP_LAUNCHER, json.dumps(ranks)], stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=self.env, cwd=d, preexec_fn=into)
            st["procs"], st["pgid"] = [p], p.pid
            cmdline = base + common + ["--rank", "0|1"]
        else:
            extra = (["--ddp", str(j["ddp"])] if j["ddp"] > 1 else []) + j["args"]
            p = subprocess.Popen(base + extra + logs, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                 env=self.env, cwd=d, preexec_fn=into)
            st["procs"], st["pgid"] = [p], p.pid
            cmdline = base + extra
        st["command"] = " ".join(os.path.relpath(c, REPO) if c.startswith(REPO) else c for c in cmdline)
        st["cgroup"] = self.cg_check(rel, p.pid, f"job {j['id']}")
        self.jobs[j["id"]] = st
        self.event(j, "start", t_ns=st["started_ns"])
        self.say(f"start {j['id']} {j['tenant']} {j['workload']}"
                 + (f" ({j['model']}" + (", 2 ranks over the veth pair)" if j["netns"] else f", ddp {j['ddp']})")
                    if j["workload"] != j["model"] or j["ddp"] > 1 else "")
                 + f" for {fmt_s(j['duration_s'])}" + "".join(" " + x for x in j["args"])
                 + (f" [cgroup {st['cgroup']}]" if st["cgroup"] else ""))

    def read_phases(self, st):
        j = st["job"]
        path = os.path.join(st["dir"], "phases.log")
        if os.path.exists(path):
            with open(path) as f:
                f.seek(st["phase_pos"])
                while True:
                    line = f.readline()
                    if not line.endswith("\n"):
                        break
                    st["phase_pos"] = f.tell()
                    parts = line.split(None, 1)
                    try:
                        t = float(parts[0])
                    except (ValueError, IndexError):
                        continue
                    phase = parts[1].strip() if len(parts) > 1 else ""
                    if phase in ("start", "stop"):  # the scheduler's own start/stop events cover these
                        phase = "process-" + phase
                    self.event(j, "phase", phase, int(t * 1e9))
        elif not st["first_step"] and "--phase-log" not in self.caps["workload_flags"]:
            steps = os.path.join(st["dir"], "steps.log")
            try:
                with open(steps) as f:
                    first = f.readline()
                if first.endswith("\n"):
                    st["first_step"] = True
                    self.event(j, "phase", "train", int(float(first.split()[0]) * 1e9))
            except (OSError, ValueError, IndexError):
                pass

    def reap_jobs(self, force_all=False):
        now = time.time()
        for st in self.jobs.values():
            if st["status"] != "running":
                continue
            j = st["job"]
            self.read_phases(st)
            deadline = self.t0 + j["start_s"] + j["duration_s"] + 20
            if force_all or now > deadline:
                kill_group(st["pgid"])
                st["status"] = "stopped" if force_all else "killed-at-deadline"
            if (all(p.poll() is not None for p in st["procs"]) and not pgid_members(st["pgid"])) \
                    or st["status"] != "running":
                for p in st["procs"]:
                    try:
                        p.wait(10)
                    except subprocess.TimeoutExpired:
                        pass
                if st["status"] == "running":
                    rc = [p.returncode for p in st["procs"]]
                    st["status"] = "ok" if all(r == 0 for r in rc) else f"exit {rc}"
                st["ended_ns"] = time.time_ns()
                if st["cgroup"]:
                    st["cgroup_cpu_s"] = self.cg_remove(st["cgroup"], f"job {j['id']}")
                self.read_phases(st)
                self.event(j, "stop", t_ns=st["ended_ns"])
                self.say(f"stop  {j['id']} {j['workload']}: {st['status']}")

    # ---------------------------------------------------------------- faults
    def steps_seen(self, st, n=3):
        try:
            with open(os.path.join(st["dir"], "steps.log")) as f:
                return sum(1 for _ in f) >= n
        except OSError:
            return False

    def inject(self, f):
        st = self.jobs.get(f["job"])
        if st is not None and st["status"] == "running" and not self.steps_seen(st):
            # a slow start (busy host): wait up to 20 s for the job's first steps, if it runs on long enough
            end = min(time.time() + 20, self.t0 + st["job"]["start_s"] + st["job"]["duration_s"] - f["duration_s"] - 15)
            while time.time() < end and not self.steps_seen(st) and all(p.poll() is None for p in st["procs"]):
                time.sleep(0.5)
            if self.steps_seen(st):
                self.say(f"fault {f['id']} delayed {time.time() - self.t0 - f['at_s']:.0f} s: {f['job']} was still starting")
        if st is None or st["status"] != "running" or not self.steps_seen(st):
            why = "victim not running" if st is None or st["status"] != "running" else "victim has no steps yet"
            self.skipped.append({**f, "why": why})
            self.say(f"fault {f['id']} {f['kind']} skipped: {why}")
            return
        j = st["job"]
        os.makedirs(os.path.join(self.out, "faults"), exist_ok=True)
        tmp = os.path.join(self.out, "tmp")
        os.makedirs(tmp, exist_ok=True)
        label = os.path.join(self.out, "faults", f"{f['id']}.json")
        cmd = [PY, FAULTS, "inject", f["kind"], "--duration", str(f["duration_s"]), "--pgid", str(st["pgid"]),
               "--model", j["model"], "--tmpdir", tmp, "--label", label]
        flags = set(self.caps["inject_flags"])
        if j["netns"] and self.netns and f["kind"] in VETH_KINDS:
            dev_a, dev_b = self.netns["DEV_A"], f"{self.netns['NETNS']}:{self.netns['DEV_B']}"
            opt = "--dev" if "--dev" in flags else "--mtu-dev"
            # the MTU drops on the namespace's end only (a mismatch); rate limit and loss act on both
            cmd += [opt, dev_b] if f["kind"] == "mtu" else [opt, dev_a, opt, dev_b]
        log = open(os.path.join(self.out, "faults", f"{f['id']}.log"), "w")
        # the injector (and whatever it starts: stress-ng, a second model copy, ...) in a leaf of its
        # own, a neighbour's container; for the kinds acting on the job it merely idles there
        rel, into = self.cg_make(f["id"])
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=self.env,
                             preexec_fn=into)
        self.fault_pids.append(p.pid)
        rel = self.cg_check(rel, p.pid, f"fault {f['id']}")
        self.faults[f["id"]] = {"fault": f, "proc": p, "label": label, "status": "running", "cgroup": rel,
                                "cgroup_cpu_s": None, "others_seen": 0, "started": time.time(), "ended": None,
                                "command": " ".join(os.path.relpath(c, REPO) if c.startswith(REPO) else c for c in cmd)}
        self.say(f"FAULT {f['id']} {f['kind']} ({f['subsystem']}) into {j['id']} {j['workload']} for "
                 f"{f['duration_s']:.0f} s" + (f" [cgroup {rel}]" if rel else ""))

    def reap_faults(self, stop_all=False):
        for fs in self.faults.values():
            if fs["status"] != "running":
                continue
            p = fs["proc"]
            if stop_all and p.poll() is None:
                p.send_signal(signal.SIGTERM)  # faults.py undoes everything on SIGTERM
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    kill_group(p.pid)
            if p.poll() is None:
                if fs["cgroup"] and fs["fault"]["kind"] not in OWN_PROCESS_KINDS | ON_JOB_KINDS and self.cg \
                        and any(x != p.pid for x in self.cg.procs(fs["cgroup"])):
                    fs["others_seen"] += 1  # a kind new to hostday.py: does it run processes of its own?
                continue
            fs["status"] = "done" if p.returncode == 0 else f"exit {p.returncode}"
            fs["ended"] = time.time()
            if fs["cgroup"]:
                fs["cgroup_cpu_s"] = self.cg_remove(fs["cgroup"], f"fault {fs['fault']['id']}")
            try:
                fs["label_data"] = json.load(open(fs["label"]))
            except (OSError, ValueError):
                fs["label_data"] = None
                fs["status"] += " (no label)"
            f = fs["fault"]
            self.say(f"fault {f['id']} {f['kind']} over: {fs['status']}")

    # ---------------------------------------------------------------- the day
    def execute(self):
        plan, D = self.plan, self.plan["duration_s"]
        actions = [(j["start_s"], 0, "job", j) for j in plan["jobs"]] + \
                  [(f["at_s"], 1, "fault", f) for f in plan["faults"]]
        actions.sort(key=lambda x: (x[0], x[1]))
        if any(j["workload"] == "dataloader_train" for j in plan["jobs"]):
            self.prepare_dataset()
        if any(j["netns"] for j in plan["jobs"]):
            self.netns_up()  # before the agent: its probes see the interfaces present at start
        self.cgroups_up()
        self.start_agent()
        self.t0 = time.time()
        self.run_info["t0_unix_ns"] = int(self.t0 * 1e9)
        self.say(f"day starts: {fmt_s(D)}, {len(plan['jobs'])} jobs, {len(plan['faults'])} faults")
        k, next_poll = 0, self.t0 + self.a.poll
        while True:
            now = time.time()
            if now - self.t0 >= D:
                break
            while k < len(actions) and actions[k][0] <= now - self.t0:
                _, _, kind, item = actions[k]
                k += 1
                if kind == "job":
                    self.start_job(item)
                else:
                    self.inject(item)
            self.reap_jobs()
            self.reap_faults()
            if self.agent.poll() is not None:
                self.run_info["notes"].append(f"the agent exited during the day (code {self.agent.returncode})")
                self.say(f"the agent exited (code {self.agent.returncode}): ending the day")
                return
            if now >= next_poll:
                self.poll()
                next_poll += self.a.poll
            nxt = min([next_poll, self.t0 + D] + ([self.t0 + actions[k][0]] if k < len(actions) else []))
            time.sleep(max(0.05, min(1.0, nxt - time.time())))
        self.run_info["complete"] = True

    def finish(self):
        """Everything stopped, in order: faults, jobs, last poll, agent (SIGTERM), veth pair."""
        self.run_info["end_unix_ns"] = time.time_ns()
        self.guarded("stopping the faults", self.reap_faults, stop_all=True)
        if self.jobs:
            self.guarded("stopping the jobs", self.reap_jobs, force_all=True)
        if self.agent is not None and self.agent.poll() is None:
            self.guarded("the last poll", self.poll, final=True)
        self.guarded("stopping the agent", self.stop_agent)
        self.guarded("removing the veth pair", self.netns_down)
        for pid in marked_processes(self.marker):  # anything that escaped its group
            try:
                os.kill(pid, signal.SIGKILL)
                self.run_info["notes"].append(f"killed a leftover process {pid}")
            except OSError:
                pass
        if self.cg is not None:
            self.guarded("removing the cgroups", self.cgroups_down)
        self.run_info["leftovers"] = self.guarded("the leftover check", self.leftovers) or []
        if self.run_info["leftovers"]:
            self.say(f"LEFT BEHIND: {'; '.join(self.run_info['leftovers'])}")

    def cgroups_down(self):
        left = self.cg.down()
        if left:
            self.say(f"could not remove cgroups {left}")

    def leftovers(self):
        left = []
        if self.cg is not None:
            left += [f"cgroup {self.cg.path(rel)}" for rel in self.cg.existing()]
        time.sleep(0.5)
        procs = marked_processes(self.marker)
        if procs:
            left.append(f"processes {procs}")
        ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        if f"reveal-scen-{self.netns_id}" in ns.split():
            left.append(f"netns reveal-scen-{self.netns_id}")
        links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
        if f"rvs{self.netns_id}a" in links:
            left.append(f"link rvs{self.netns_id}a")
        qd = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True).stdout
        for line in qd.splitlines():
            if "netem" in line or "tbf" in line:
                left.append(f"qdisc: {line.strip()}")
        for root, dirs, _ in os.walk("/sys/fs/cgroup"):
            for d in dirs:
                if d.startswith("reveal-scen") and any(d.endswith(f"-{p}") for p in self.fault_pids):
                    left.append(f"cgroup {os.path.join(root, d)}")
            if root.count("/") >= 4:
                dirs[:] = []
        nft = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
        for p in self.fault_pids:
            if f"reveal_scen_{p}" in nft.split():
                left.append(f"nftables table reveal_scen_{p}")
        for sub in ("tmp", "ckpt"):
            d = os.path.join(self.out, sub)
            if os.path.isdir(d) and os.listdir(d):
                left.append(f"files in {d}")
        return left

    # ---------------------------------------------------------------- labels
    def write_labels(self):
        faults = []
        for fid, fs in self.faults.items():
            f, lab = fs["fault"], fs.get("label_data")
            j = self.jobs[f["job"]]["job"]
            rec = {"id": fid, "kind": f["kind"], "subsystem": f["subsystem"], "job": f["job"],
                   "workload": j["workload"], "model": j["model"], "tenant": j["tenant"],
                   "planned_at_s": f["at_s"], "planned_duration_s": f["duration_s"], "status": fs["status"],
                   "command": fs["command"]}
            # cgroups (relative to the v2 root): the injector's own (with the processes it starts:
            # own_processes, the cgroup an incident should name as an aggressor) and the victim job's
            kind = f["kind"]
            own = kind in OWN_PROCESS_KINDS if kind in OWN_PROCESS_KINDS | ON_JOB_KINDS else fs["others_seen"] >= 2
            cpu, ran = fs.get("cgroup_cpu_s"), (fs["ended"] or time.time()) - fs["started"]
            rec.update(cgroup=fs["cgroup"], own_processes=own, job_cgroup=self.jobs[f["job"]]["cgroup"],
                       cgroup_cpu_cores=round(cpu / ran, 3) if cpu is not None and ran > 0 else None)
            if lab:
                rec.update(start_unix_ns=lab["start_unix_ns"], end_unix_ns=lab["end_unix_ns"], what=lab.get("what", ""))
                if lab.get("subsystem") and lab["subsystem"] != f["subsystem"]:
                    rec["subsystem"] = lab["subsystem"]
                rec.update(step_effect(os.path.join(self.jobs[f["job"]]["dir"], "steps.log"), lab["start_unix_ns"],
                                       lab["end_unix_ns"], serving=j["workload"] == "infer_server"))
            faults.append(rec)
        jobs = []
        for jid, st in self.jobs.items():
            j = st["job"]
            jobs.append({**{k: j[k] for k in ("id", "workload", "model", "tenant", "ddp", "netns", "args")},
                         "planned_start_s": j["start_s"], "planned_duration_s": j["duration_s"],
                         "start_unix_ns": st["started_ns"], "end_unix_ns": st["ended_ns"], "status": st["status"],
                         "command": st["command"], "steps": count_lines(os.path.join(st["dir"], "steps.log")),
                         "cgroup": st["cgroup"], "cgroup_cpu_s": (round(st["cgroup_cpu_s"], 1)
                                                                  if st["cgroup_cpu_s"] is not None else None)})
        labels = {"schema": "reveal.hostday.labels/1",
                  "note": "for scoring only: fault intervals and workload events; workload events are NOT faults",
                  "run_start_unix_ns": self.run_info.get("t0_unix_ns"), "run_end_unix_ns": self.run_info.get("end_unix_ns"),
                  "cgroups": ({"root": self.cg.root, "parent": self.cg.parent}
                              if any(x.get("cgroup") for x in jobs + faults) else None),
                  "faults": faults, "skipped_faults": self.skipped,
                  "events": sorted(self.events, key=lambda e: e["t_unix_ns"]), "jobs": jobs}
        write_json(os.path.join(self.out, "labels.json"), labels)
        return labels


def tenant_names(inc, which):
    """The cgroups an incident names as `victims` or `aggressors` (relative to the v2 root), in its
    order; () when it names none or predates the fields."""
    return tuple(norm_cg(t.get("cgroup")) for t in (inc.get(which) or []) if isinstance(t, dict) and t.get("cgroup"))


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def read_steps(path):
    """The rows (t_ns, n, seconds) of a --step-log; [] when it cannot be read."""
    rows = []
    try:
        for line in open(path):
            p = line.split()
            if len(p) >= 3:
                try:
                    rows.append((float(p[0]) * 1e9, float(p[1]), float(p[2])))
                except ValueError:
                    pass
    except OSError:
        pass
    return rows


def step_effect(path, f0, f1, serving=False, rows=None):
    """Mean step time during [f0, f1] vs the STEP_BEFORE_S before f0, from a --step-log (or its
    `rows`, read_steps()). Training jobs log one line per step (<t> <step> <step_s>); the inference
    server one line a second (<t> <requests answered> <their mean latency, or the oldest request's
    wait when none was>): its "step time" is the request latency, weighted by requests."""
    if rows is None:
        rows = read_steps(path)

    def mean(sel):
        if not serving:
            return (statistics.mean(s for _, _, s in sel), len(sel)) if sel else (None, 0)
        n = sum(d for _, d, _ in sel)
        return (sum(d * s for _, d, s in sel) / n, int(n)) if n else (None, 0)
    b, nb = mean([r for r in rows if f0 - STEP_BEFORE_S * 1e9 <= r[0] < f0])
    during = [r for r in rows if f0 <= r[0] <= f1]
    d, nd = mean(during)
    stalled = False
    if d is None:  # nothing finished inside the fault: the step (request) in progress spans it
        if serving:
            waits = [s for _, _, s in during]
            if waits and max(waits) > 0:
                d, stalled = max(waits), True
        else:
            after = [r for r in rows if r[0] > f1]
            if after:
                d, stalled = after[0][2], True
    return {"step_metric": "request latency s (per request)" if serving else "step time s",
            "step_s_before": round(b, 4) if b is not None else None,
            "step_s_during": round(d, 4) if d is not None else None,
            "step_effect_pct": round((d / b - 1) * 100, 1) if b and d is not None else None,
            "steps_before": nb, "steps_during": nd, "stalled": stalled}


# A fault's step effect against what its job varies by on its own (a placebo): the same measure
# over intervals of the fault's length at fault-free times of the same job, every PLACEBO_STEP_S
# from STEP_BEFORE_S + 15 s after its start (the plan's job_settle on days of 15 minutes or more;
# a short day's jobs mostly come out unknown) to 15 s before its end, each with its STEP_BEFORE_S
# before it clear of every fault of the day (host-wide: a fault in another job slows this one
# too) by PLACEBO_RECOVER_S on either side, and of other jobs' starts and stops (from
# PLACEBO_RECOVER_S before it to its end). A fault whose
# effect exceeds the PLACEBO_Q quantile of its job's placebo effects slowed the job measurably;
# one within it did not (the job's own checkpoints, evaluations and load vary its step time by as
# much; unlabelled work beside the day, `--beside`, counts in that variation too). A job with fewer than PLACEBO_MIN placebo intervals borrows
# those of its workload's other jobs that day; without as many there either, it is unknown.
# Neighbouring intervals overlap, so the quantile is a rough one: a description of the day's
# faults, never an input of Reveal.
PLACEBO_STEP_S = 5.0
PLACEBO_RECOVER_S = 30.0
PLACEBO_Q = 0.95
PLACEBO_MIN = 8


def placebo_effects(rows, f0, f1, job_start, job_end, faults, others=(), serving=False):
    """The step effects (%) of step_effect() over the placebo intervals of a fault [f0, f1] in a job
    running [job_start, job_end] (Unix ns), its step-log rows `rows`, the day's fault intervals
    `faults` ((start, end) ns) kept clear, and the other jobs' starts and stops (`others`, ns)."""
    length, out, gap = f1 - f0, [], PLACEBO_RECOVER_S * 1e9
    t = job_start + (STEP_BEFORE_S + 15) * 1e9
    while t + length + 15e9 <= job_end:  # as the plan places faults: 15 s before their job's end
        a, b = t - STEP_BEFORE_S * 1e9, t + length
        # clear of faults (and the gap after one; before one too: with no step finished inside
        # the interval, the step after it is measured) and of other jobs' starts and stops
        if not any(x0 < b + gap and x1 + gap > a for x0, x1 in faults) \
                and not any(a - gap <= x <= b for x in others):
            e = step_effect(None, t, b, serving, rows)["step_effect_pct"]
            if e is not None:
                out.append(e)
        t += PLACEBO_STEP_S * 1e9
    return out


def add_step_noise(out, labels, faults):
    """Sets step_noise_pct (the PLACEBO_Q quantile of the fault's placebo effects), placebo_intervals,
    placebo_pool and effect_measurable (True, False, or None when either is unknown) on each fault
    of `faults` (labels.json's). The placebo intervals are the fault's own job's when it has
    PLACEBO_MIN of them (pool "job"), else those of every job of its workload that day ("workload";
    each interval has the fault's length and is measured against its own job's steps before it);
    else it is unknown. (Not the whole day's jobs: a job with checkpoints varies by tens of %, one
    that a co-tenant's phases slow by hundreds, a steady one by a few.)"""
    jobs = [j for j in labels.get("jobs", []) if j.get("start_unix_ns") and j.get("end_unix_ns")]
    spans = [(f["start_unix_ns"], f["end_unix_ns"]) for f in labels["faults"] if f.get("start_unix_ns")]
    rows_of = {}

    def effects(j, f):
        if j["id"] not in rows_of:
            rows_of[j["id"]] = read_steps(os.path.join(out, "jobs", j["id"], "steps.log"))
        others = [e["t_unix_ns"] for e in labels.get("events", []) if e.get("event") in ("start", "stop")
                  and e.get("job") != j["id"]]
        return placebo_effects(rows_of[j["id"]], f["start_unix_ns"], f["end_unix_ns"], j["start_unix_ns"],
                               j["end_unix_ns"], spans, others, serving=j.get("workload") == "infer_server")
    for f in faults:
        f.update(step_noise_pct=None, placebo_intervals=0, placebo_pool=None, effect_measurable=None)
        own = next((j for j in jobs if j["id"] == f.get("job")), None)
        if not f.get("start_unix_ns") or own is None:
            continue
        for pool, members in (("job", [own]), ("workload", [j for j in jobs if j.get("workload") == own.get("workload")])):
            eff = [e for j in members for e in effects(j, f)]
            if len(eff) >= PLACEBO_MIN:
                break
        f["placebo_intervals"] = len(eff)
        if len(eff) >= PLACEBO_MIN:
            f["step_noise_pct"], f["placebo_pool"] = round(pct(eff, PLACEBO_Q), 1), pool
            if f.get("step_effect_pct") is not None:
                f["effect_measurable"] = f["step_effect_pct"] > f["step_noise_pct"]


def neighbour_starts(out, labels, sources, window_s=15.0):
    """Each second tenant's job start: the primary jobs' step time in the window_s after it (cut
    1 s before a fault into that job begins) against the STEP_BEFORE_S before it, and for each
    incident source (name -> incidents: live, offline, replay) whether an incident opened within
    NEIGHBOUR_NEAR_S of the start, and whether the one nearest the start names the tenant's cgroup
    among its aggressors and the primary's among its victims (None where the labels have no
    cgroups). Workload events are not faults in the labels; this shows how much a co-tenant slows
    the primary, to set against the faults' step effects."""
    jobs = {j["id"]: j for j in labels.get("jobs", [])}
    rows = []
    for e in labels["events"]:
        if e.get("event") != "start" or e.get("tenant") != "second":
            continue
        t = e["t_unix_ns"]
        for j in labels.get("jobs", []):
            if j.get("tenant") != "primary":
                continue
            path = os.path.join(out, "jobs", j["id"], "steps.log")
            if not os.path.isfile(path):
                continue
            f1 = t + window_s * 1e9
            for f in labels["faults"]:
                if f.get("job") == j["id"] and f.get("start_unix_ns") and t <= f["start_unix_ns"] < f1:
                    f1 = f["start_unix_ns"] - 1e9
            eff = step_effect(path, t, f1, serving=j.get("workload") == "infer_server")
            if eff["steps_before"] == 0 or eff["step_s_during"] is None:
                continue  # the primary was not running (steadily) across the start
            row = {"job": e["job"], "workload": jobs.get(e["job"], {}).get("workload", e.get("workload")),
                   "t_unix_ns": t, "primary": j["id"], "primary_workload": j.get("workload"),
                   "step_effect_pct": eff["step_effect_pct"], "window_s": round((f1 - t) / 1e9, 1),
                   "cgroup": jobs.get(e["job"], {}).get("cgroup"), "primary_cgroup": j.get("cgroup")}
            for name, incs in sources.items():
                opened = sorted((i for i in incs if abs(i["start_unix_ns"] - t) <= NEIGHBOUR_NEAR_S * 1e9),
                                key=lambda i: abs(i["start_unix_ns"] - t))
                row[f"{name}_incident_opened"] = bool(opened)
                row[f"{name}_subsystem"] = opened[0].get("subsystem") if opened else None
                if opened:
                    n = named(opened[0], row["cgroup"], row["primary_cgroup"])
                    for k in ("aggressor_named", "victim_named", "named_aggressors", "named_victims"):
                        row[f"{name}_{k}"] = n[k]
            rows.append(row)
    return rows


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def port_free(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def cmd_run(a):
    a.duration = parse_duration(a.duration)
    a.warmup = parse_duration(a.agent_warmup, "--agent-warmup")
    a.poll = parse_duration(a.poll, "--poll")
    if a.duration < 180:
        die(f"--duration {a.duration:.0f}s is too short for a day (at least 3m)")
    if a.warmup + 60 > a.duration:
        die("--agent-warmup leaves no time for faults")
    if not 1 <= a.port <= 65535:
        die(f"bad --port {a.port}")
    if not a.plan_only:
        if not (os.path.isfile(a.reveal) and os.access(a.reveal, os.X_OK)):
            die(f"reveal binary not found or not executable: {a.reveal} (--reveal)")
        if os.geteuid() != 0:
            die("needs root (cgroups, taskset, netns)")
        if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode != 0:
            die(f"{PY} has no torch (install python3-torch: scripts/setup.sh)")
        for tool in ("stress-ng", "ip", "tc", "taskset"):
            if not any(os.access(os.path.join(d, tool), os.X_OK) for d in os.environ.get("PATH", "").split(":")
                       + ["/usr/sbin", "/sbin"]):
                die(f"{tool} missing (scripts/setup.sh)")
        if not port_free(a.port):
            die(f"port {a.port} is in use (--port)")
        a.reveal = os.path.abspath(a.reveal)
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        die(f"--out {a.out} is not a directory")
    for f in ("agent.db", "labels.json"):
        if os.path.exists(os.path.join(a.out, f)):
            die(f"{a.out} already holds a run ({f}); use a new --out")
    os.makedirs(a.out, exist_ok=True)
    a.out = os.path.abspath(a.out)
    caps = capabilities()
    plan = make_plan(a.duration, a.seed, caps, a.warmup)
    if a.no_faults:  # the same jobs, phases and second tenants, nothing injected: false incidents alone
        plan["faults"] = []
        plan["no_faults"] = True
    cg, why = cgroup_plan()  # where each job's and fault's leaf cgroup goes (relative to the v2 root)
    plan["cgroups"] = cg or {"none": why}
    for x in plan["jobs"] + plan["faults"]:
        x["cgroup"] = f"{cg['parent']}/{x['id']}" if cg else None
    plan["command"] = " ".join(["bench/hostday/hostday.py"] + sys.argv[1:])
    plan["commit"] = git_commit()
    write_json(os.path.join(a.out, "plan.json"), plan)
    print(plan_summary(plan), flush=True)
    missing = [w for w in SUITE_MODELS if w not in [m["name"] for m in caps["models"]]]
    if missing:
        print(f"note: workloads.py lacks suite models {missing}", flush=True)
    if a.plan_only:
        print(f"written: {a.out}/plan.json")
        return 0

    day = Day(a, plan, caps)

    def on_signal(signum, frame):
        raise Interrupted()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    rc = 0
    try:
        day.execute()
    except Interrupted:
        day.say("interrupted: stopping everything")
        day.run_info["notes"].append("interrupted")
        rc = 130
    except Exception as e:  # a failure still stops everything and writes what ran
        day.say(f"error: {e}")
        day.run_info["notes"].append(f"error: {e}")
        rc = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            day.finish()
        finally:
            day.write_labels()
            info = {**day.run_info, "marker": day.marker, "seed": a.seed, "duration_s": a.duration, "port": a.port,
                    "reveal": a.reveal, "commit": plan["commit"], "command": plan["command"],
                    "agent_pid": day.agent.pid if day.agent else None,
                    "jobs_started": len(day.jobs), "faults_injected": len(day.faults),
                    "faults_skipped": len(day.skipped)}
            info["agent_stayed_up"] = bool(day.agent is not None and info.get("agent_exit_code") == 0
                                           and not any(n.startswith("the agent exited") for n in info["notes"]))
            write_json(os.path.join(a.out, "run.json"), info)
            day.say(f"day over: {len(day.jobs)} jobs, {len(day.faults)} faults injected, {len(day.skipped)} skipped, "
                    f"{sum(1 for _ in day.seen)} incidents seen live; labels {a.out}/labels.json")
    if rc == 0 and not (info["complete"] and info["agent_stayed_up"]):
        rc = 1
    return rc


# ------------------------------------------------------------------------------------ scoring
def last_states(path, item_of, key_of, end_ns):
    """The last polled state of every item in a poll log (JSON lines with `state` and
    `polled_unix_ns`): an item still active at its last poll lasted at least until then."""
    last = {}
    if os.path.exists(path):
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            it = item_of(r) or {}
            if "start_unix_ns" not in it or "end_unix_ns" not in it:
                continue
            it = dict(it)
            it["_state"] = r.get("state")
            if r.get("state") == "active":
                it["end_unix_ns"] = max(it["end_unix_ns"], min(r["polled_unix_ns"], end_ns))
            last[key_of(r, it)] = it
    return sorted(last.values(), key=lambda i: i["start_unix_ns"])


def live_incidents(out, end_ns):
    """The last state of every incident the agent reported, from live_incidents.jsonl."""
    return last_states(os.path.join(out, "live_incidents.jsonl"), lambda r: r["incident"], lambda r, it: r["key"], end_ns)


def workload_changes_live(out, end_ns):
    """The last state of every workload change the agent reported (live_workload_changes.jsonl)."""
    return last_states(os.path.join(out, "live_workload_changes.jsonl"), lambda r: r.get("item"),
                       lambda r, it: it["start_unix_ns"], end_ns)


def change_stats(changes, faults, events):
    """Workload changes (not incidents): how many, how many overlap a fault (a fault taken for a
    change of workload), how many start within EVENT_NEAR_S of a workload event."""
    fl = [f for f in faults if f.get("start_unix_ns")]
    over = [c for c in changes if any(c["start_unix_ns"] <= f["end_unix_ns"] and c["end_unix_ns"] >= f["start_unix_ns"]
                                      for f in fl)]
    near = [c for c in changes if any(abs(e["t_unix_ns"] - c["start_unix_ns"]) <= EVENT_NEAR_S * 1e9 for e in events)]
    wd = [c for c in changes if c.get("withdrawn") and c.get("kind") != "transient"]
    tr = [c for c in changes if c.get("kind") == "transient"]
    return {"n": len(changes), "overlapping_faults": len(over), "at_workload_events": len(near),
            "faults_overlapped": sum(1 for f in fl if any(c["start_unix_ns"] <= f["end_unix_ns"]
                                                           and c["end_unix_ns"] >= f["start_unix_ns"] for c in changes)),
            # incidents withdrawn as a new workload starting (reveal/tenants.h): how many, how many
            # began within EVENT_NEAR_S of a workload event, and how many overlap a fault
            "withdrawn": len(wd),
            "withdrawn_at_workload_events": sum(1 for c in wd if c in near),
            # transients: incidents shorter than the agent's detect.min_duration (never reported)
            "transients": len(tr),
            "transients_at_workload_events": sum(1 for c in tr if c in near),
            "transients_overlapping_faults": sum(1 for c in tr if c in over),
            "withdrawn_overlapping_faults": sum(1 for c in wd if c in over)}


def store_events(db):
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute("SELECT t_unix_ns, kind, detail FROM events WHERE source = 'agent' ORDER BY t_unix_ns").fetchall()
        con.close()
        return rows
    except sqlite3.Error as e:
        return str(e)


def _f1(p, r):
    if p is None or r is None:
        return None
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def named(inc, aggressor, victim):
    """Whether incident inc names the cgroup `aggressor` among its aggressors and `victim` among its
    victims: True/False, None where none is expected (no cgroup in the labels: an older day, or a
    fault acting on the job itself). Incidents without the fields (an older reveal) name none."""
    ag, vi = tenant_names(inc, "aggressors"), tenant_names(inc, "victims")
    return {"aggressor_named": norm_cg(aggressor) in ag if aggressor else None,
            "victim_named": norm_cg(victim) in vi if victim else None,
            "named_aggressors": list(ag), "named_victims": list(vi),
            "tenant_fields": "aggressors" in inc or "victims" in inc}


def tenant_summary(S, starts, col):
    """Incidents of source S (scored under name col) naming the right cgroups: those matched to a
    fault (faults with processes of their own: their cgroup among the aggressors; every fault with
    a job cgroup: the job's among the victims) and those opened within NEIGHBOUR_NEAR_S of a second
    tenant's start inside S's span (the tenant among the aggressors, the primary among the victims)."""
    s0, s1 = S["span_start_unix_ns"], S["span_end_unix_ns"]
    caught = [r for r in S["per_fault"] if r["caught"]]
    ns = [x for x in starts if s0 <= x["t_unix_ns"] <= s1 and x.get(f"{col}_incident_opened")]

    def count(rows, key):
        v = [r[key] for r in rows if r.get(key) is not None]
        return {"n": sum(v), "m": len(v)}
    agg = count(caught, "aggressor_named")
    nsa = count([{"v": x.get(f"{col}_aggressor_named")} for x in ns], "v")
    vic_own = count([r for r in caught if r.get("own_processes")], "victim_named")
    vic_job = count([r for r in caught if not r.get("own_processes")], "victim_named")
    nsv = count([{"v": x.get(f"{col}_victim_named")} for x in ns], "v")
    return {"aggressor": {"n": agg["n"] + nsa["n"], "m": agg["m"] + nsa["m"], "faults": agg,
                          "second_tenant_starts": nsa},
           "victim": {"n": vic_own["n"] + vic_job["n"] + nsv["n"], "m": vic_own["m"] + vic_job["m"] + nsv["m"],
                      "faults_with_own_processes": vic_own, "faults_on_the_job": vic_job, "second_tenant_starts": nsv},
           "incidents_with_tenant_fields": S.get("incidents_with_tenant_fields")}


def merged_length(spans):
    """Total length of the union of (start, end) spans."""
    total, cur = 0, None
    for a, b in sorted(spans):
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
    return total + (cur[1] - cur[0] if cur else 0)


def read_beside(path):
    """The spans (start_ns, end_ns) of unlabelled work run on the host beside the day, from a log
    bench/hostday/beside.sh writes: "start <unix s> [id=<id>] ..." and "end <unix s> [id=<id>] ..."
    lines, paired by id (by order without one); a start without an end lasts until the next
    start, at most 600 s. "span <unix s> <unix s> ..." adds a span noted by hand (work that ran
    without the wrapper)."""
    spans, open_ = [], {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        die(f"--beside {path}: {e.strerror}")
    for n, line in enumerate(lines, 1):
        p = line.split()
        if len(p) < 2 or p[0] not in ("start", "end", "span"):
            continue
        try:
            t = float(p[1])
            t2 = float(p[2]) if p[0] == "span" and len(p) > 2 else None
        except ValueError:
            t = t2 = math.nan
        if not math.isfinite(t) or (p[0] == "span" and (t2 is None or not math.isfinite(t2))):
            die(f"--beside {path}:{n}: not a time: {line!r}")
        if p[0] == "span":
            spans.append((t, t2))
            continue
        key = p[2] if len(p) > 2 and p[2].startswith("id=") else None
        if p[0] == "start":
            if key is None and None in open_:  # the previous unpaired start ends here
                a = open_.pop(None)
                spans.append((a, min(t, a + 600)))
            open_[key] = t
        elif key in open_:
            spans.append((open_.pop(key), t))
    spans += [(a, a + 600) for a in open_.values()]
    return [(int(a * 1e9), int(b * 1e9)) for a, b in spans if b >= a]


def impact_of(inc, f):
    """Issue #22: the incident's estimated slowdown of the fault's job (its `impact`, the job's
    cgroup among the tenants judged) against the one measured from the job's steps, both as the
    share of its speed lost in %: measured = 1 − step before / step during (a step effect of
    +100 % is 50 % of the speed lost). Only the keys that can be filled."""
    r = {}
    imp = inc.get("impact") or {}
    if imp.get("slowdown") is not None and f.get("job_cgroup"):
        job = norm_cg(f["job_cgroup"])
        t = next((t for t in imp.get("tenants") or [] if norm_cg(t.get("cgroup")) == job), None)
        if t and t.get("throughput") is not None:
            r["impact_est_loss_pct"] = round((1 - t["throughput"]) * 100, 1)
    elif imp and imp.get("slowdown") is None:
        r["impact_unknown"] = imp.get("basis") or "unknown"
    eff = f.get("step_effect_pct")
    if eff is not None and eff > -100:
        r["measured_loss_pct"] = round((1 - 1 / (1 + eff / 100)) * 100, 1)
    if "impact_est_loss_pct" in r and "measured_loss_pct" in r:
        r["impact_error_pts"] = round(r["impact_est_loss_pct"] - r["measured_loss_pct"], 1)
    return r


def score_source(incidents, faults, events, span, absences=0, beside=None):
    """Event-level scores of one incident list against the labels over span = (start_ns, end_ns).
    `beside`: spans of unlabelled work on the host (read_beside()); false incidents within
    BESIDE_NEAR_S of one are counted apart, and the rate away from them over the fault-free time
    outside them."""
    s0, s1 = span
    incs = [i for i in incidents if i["end_unix_ns"] >= s0 and i["start_unix_ns"] <= s1]
    fl = [f for f in faults if f.get("start_unix_ns")]

    def overlaps(i, f):
        return i["start_unix_ns"] <= f["end_unix_ns"] and i["end_unix_ns"] >= f["start_unix_ns"]
    hits = [i for i in incs if any(overlaps(i, f) for f in fl)]
    false = [i for i in incs if i not in hits]
    per_fault = []
    for f in fl:
        ov = sorted([i for i in incs if overlaps(i, f)], key=lambda i: i["start_unix_ns"])
        r = {"id": f["id"], "kind": f["kind"], "subsystem": f["subsystem"], "caught": bool(ov),
             "step_effect_pct": f.get("step_effect_pct"), "step_noise_pct": f.get("step_noise_pct"),
             "effect_measurable": f.get("effect_measurable"), "own_processes": f.get("own_processes")}
        if ov:
            # the incident judged for the cgroups: the first one whose onset is at the fault (its
            # tenants are judged around its onset), else the first overlapping one
            m = next((i for i in ov if f["start_unix_ns"] - NEIGHBOUR_NEAR_S * 1e9 <= i["start_unix_ns"]
                      <= f["end_unix_ns"]), ov[0])
            r.update(named(m, f.get("cgroup") if f.get("own_processes") else None, f.get("job_cgroup")))
            if ov[0].get("opened_unix_ns"):
                r["ttr_s"] = (ov[0]["opened_unix_ns"] - f["start_unix_ns"]) / 1e9
            if ov[0].get("pending_unix_ns") or ov[0].get("opened_unix_ns"):
                r["ttp_s"] = ((ov[0].get("pending_unix_ns") or ov[0]["opened_unix_ns"]) - f["start_unix_ns"]) / 1e9
            r.update(ttd_s=(ov[0]["start_unix_ns"] - f["start_unix_ns"]) / 1e9, detected_subsystem=ov[0]["subsystem"],
                     subsystem_ok=ov[0]["subsystem"] == f["subsystem"],
                     # the subsystem of the incident judged for the cgroups (opened at the fault's
                     # onset, else the first overlapping): where an incident already open when the
                     # fault began (another tenant's start) ends and one for the fault follows
                     onset_subsystem=m["subsystem"], onset_subsystem_ok=m["subsystem"] == f["subsystem"],
                     outlast_s=(max(i["end_unix_ns"] for i in ov) - f["end_unix_ns"]) / 1e9, incidents=len(ov),
                     opened_inside=any(f["start_unix_ns"] <= i["start_unix_ns"] <= f["end_unix_ns"] for i in ov))
            r.update(impact_of(m, f))
        per_fault.append(r)
    caught = [r for r in per_fault if r["caught"]]
    measurable = [r for r in per_fault if r.get("effect_measurable")]
    precision = len(hits) / len(incs) if incs else None
    recall = len(caught) / len(fl) if fl else None
    f1 = (2 * precision * recall / (precision + recall) if precision is not None and recall is not None
          and precision + recall > 0 else (0.0 if precision is not None and recall is not None else None))
    # fault-free time: the span minus the fault intervals (clipped to the span, merged)
    iv = sorted((max(f["start_unix_ns"], s0), min(f["end_unix_ns"], s1)) for f in fl
                if f["end_unix_ns"] > s0 and f["start_unix_ns"] < s1)
    free_h = max(0, (s1 - s0) - merged_length(iv)) / 3.6e12
    # false incidents at workload events: starting within EVENT_NEAR_S of a start/stop, else of a phase change
    near_ns = EVENT_NEAR_S * 1e9
    at_startstop, at_phase, elsewhere = [], [], []
    for i in false:
        d = [e for e in events if abs(e["t_unix_ns"] - i["start_unix_ns"]) <= near_ns]
        if any(e["event"] in ("start", "stop") for e in d):
            at_startstop.append(i)
        elif d:
            at_phase.append(i)
        else:
            elsewhere.append(i)
    # false incidents whose symptom is hypervisor steal: a real condition of the VM's physical host
    # that no label covers (the benchmark injects no steal); still counted as false above
    by_steal = [i for i in false if (i.get("symptom") or {}).get("channel", "").startswith("derived:cpu_steal_pct")]
    near_work = BESIDE_NEAR_S * 1e9
    beside_work = [i for i in false if any(a - near_work <= i["end_unix_ns"] and b + near_work >= i["start_unix_ns"]
                                           for a, b in beside or [])]
    # the work spans with the margin that counts an incident as beside them, clipped to the span
    work_in_span = [(max(a - near_work, s0), min(b + near_work, s1)) for a, b in beside or []
                    if b + near_work > s0 and a - near_work < s1]
    away_h = max(0, (s1 - s0) - merged_length(iv + [(int(a), int(b)) for a, b in work_in_span])) / 3.6e12
    ttd = [r["ttd_s"] for r in caught]
    ttr = [r["ttr_s"] for r in caught if "ttr_s" in r]
    ttp = [r["ttp_s"] for r in caught if "ttp_s" in r]
    outl = [r["outlast_s"] for r in caught]
    longest = max(incs, key=lambda i: i["end_unix_ns"] - i["start_unix_ns"], default=None)
    per_day = (lambda n: n / free_h * 24 if free_h > 0 else None)
    return {
        "span_start_unix_ns": s0, "span_end_unix_ns": s1, "span_h": (s1 - s0) / 3.6e12, "fault_free_h": free_h,
        "incidents": len(incs), "absence_incidents": absences, "hits": len(hits), "false": len(false),
        "incidents_with_tenant_fields": sum(1 for i in incs if "victims" in i or "aggressors" in i),
        "incidents_naming_cgroups": sum(1 for i in incs if tenant_names(i, "victims") or tenant_names(i, "aggressors")),
        "faults": len(fl), "caught": len(caught),
        "precision": precision, "recall": recall, "f1": f1,
        # the faults that slowed their job beyond what it varies by on its own (add_step_noise())
        "faults_measurable": len(measurable), "caught_measurable": sum(r["caught"] for r in measurable),
        "faults_not_measurable": sum(1 for r in per_fault if r.get("effect_measurable") is False),
        "recall_measurable": sum(r["caught"] for r in measurable) / len(measurable) if measurable else None,
        # issue #22: the caught faults whose incident estimated their job's slowdown, and how far
        # off it was (points of the share of speed lost), against the steps
        "impact_estimated": sum(1 for r in caught if "impact_est_loss_pct" in r),
        "impact_compared": sum(1 for r in caught if "impact_error_pts" in r),
        "impact_mae_pts": (statistics.mean(abs(r["impact_error_pts"]) for r in caught if "impact_error_pts" in r)
                           if any("impact_error_pts" in r for r in caught) else None),
        "caught_opened_inside": sum(1 for r in caught if r["opened_inside"]),
        "recall_opened_inside": sum(1 for r in caught if r["opened_inside"]) / len(fl) if fl else None,
        # the stricter reading: a fault counts as found only when an incident opened inside it (an
        # incident already open since a job's start merely overlaps it)
        "f1_opened_inside": _f1(precision, sum(1 for r in caught if r["opened_inside"]) / len(fl) if fl else None),
        "false_per_day": per_day(len(false)),
        "false_at_workload_events": len(at_startstop) + len(at_phase),
        "false_at_start_stop": len(at_startstop), "false_at_phase_change": len(at_phase),
        "false_elsewhere": len(elsewhere), "false_opened_by_steal": len(by_steal),
        "beside_work_h": merged_length(work_in_span) / 3.6e12 if beside is not None else None,
        "false_beside_work": len(beside_work) if beside is not None else None,
        "fault_free_away_from_work_h": away_h if beside is not None else None,
        "false_per_day_away_from_work": ((len(false) - len(beside_work)) / away_h * 24 if away_h > 0 else None)
                                        if beside is not None else None,
        "false_per_day_at_events": per_day(len(at_startstop) + len(at_phase)),
        "false_per_day_elsewhere": per_day(len(elsewhere)),
        "subsystem_top1": sum(r["subsystem_ok"] for r in caught) / len(caught) if caught else None,
        "subsystem_top1_onset": sum(r["onset_subsystem_ok"] for r in caught) / len(caught) if caught else None,
        "subsystem_top1_of_all_faults": sum(r["subsystem_ok"] for r in caught) / len(fl) if fl else None,
        "ttd_median_s": statistics.median(ttd) if ttd else None, "ttd_p90_s": pct(ttd, 0.9),
        "ttr_median_s": statistics.median(ttr) if ttr else None, "ttr_p90_s": pct(ttr, 0.9),
        "ttp_median_s": statistics.median(ttp) if ttp else None, "ttp_p90_s": pct(ttp, 0.9),
        "outlast_median_s": statistics.median(outl) if outl else None, "outlast_p90_s": pct(outl, 0.9),
        "outlast_max_s": max(outl) if outl else None,
        "longest_incident_s": (longest["end_unix_ns"] - longest["start_unix_ns"]) / 1e9 if longest else None,
        "longest_incident": ({"start_unix_ns": longest["start_unix_ns"], "end_unix_ns": longest["end_unix_ns"],
                              "subsystem": longest["subsystem"],
                              "overlaps_fault": longest in hits} if longest else None),
        "per_fault": per_fault,
        "false_list": [{"start_unix_ns": i["start_unix_ns"], "end_unix_ns": i["end_unix_ns"], "subsystem": i["subsystem"],
                        "at": "start/stop" if i in at_startstop else "phase" if i in at_phase else "elsewhere",
                        "beside_work": i in beside_work}
                       for i in false],
    }


def fmt(x, d=2):
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return f"{x:.{d}f}" if isinstance(x, float) else str(x)


def cmd_score(a):
    out = a.dir
    for f in ("labels.json", "run.json", "agent.db"):
        if not os.path.isfile(os.path.join(out, f)):
            die(f"{out}: no {f} (not a finished hostday.py run directory)")
    if not (os.path.isfile(a.reveal) and os.access(a.reveal, os.X_OK)):
        die(f"reveal binary not found or not executable: {a.reveal} (--reveal)")
    try:
        labels = json.load(open(os.path.join(out, "labels.json")))
        run = json.load(open(os.path.join(out, "run.json")))
        plan = json.load(open(os.path.join(out, "plan.json")))
    except (OSError, ValueError) as e:
        die(f"{out}: unreadable run files: {e}")
    db = os.path.join(out, "agent.db")
    agent_toml = os.path.join(out, "agent.toml")
    streaming = ["--streaming"] + (["--agent-config", agent_toml] if os.path.isfile(agent_toml) else [])
    # The offline column is the whole-run analysis: a reveal that analyses long stores as
    # --streaming does (issue #19) is asked for it (older ones have no --whole-run and always do it).
    helptext = subprocess.run([a.reveal, "detect", "--help"], capture_output=True, text=True).stdout
    whole = ["--whole-run"] if "--whole-run" in helptext else []
    detect_s = {}
    for name, extra in (("detect.json", whole), ("detect_streaming.json", streaming)):
        rep_path = os.path.join(out, name)
        if a.reuse and os.path.exists(rep_path) and os.path.getmtime(rep_path) >= os.path.getmtime(db):
            continue
        t = time.time()
        r = subprocess.run([a.reveal, "detect", db, "--json", "--no-progress"] + extra, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"reveal detect {' '.join(extra)} failed on {db}: {(r.stderr.strip().splitlines() or ['?'])[-1]}", 1)
        with open(rep_path, "w") as f:
            f.write(r.stdout)
        detect_s[name] = time.time() - t
    rep = json.load(open(os.path.join(out, "detect.json")))
    rep_st = json.load(open(os.path.join(out, "detect_streaming.json")))
    faults, events = labels["faults"], labels["events"]
    t0, t1 = labels["run_start_unix_ns"], labels["run_end_unix_ns"]
    if not t0 or not t1:
        die(f"{out}: labels.json has no run interval (the day never started)")

    # A scoring window (--from/--until, offsets into the day): every span below is clipped to it,
    # so a part of a day that was looked at while changing Reveal can be left out of the score.
    w0 = t0 + int(parse_duration(a.window_from, "--from") * 1e9) if a.window_from else None
    w1 = t0 + int(parse_duration(a.window_until, "--until") * 1e9) if a.window_until else None
    if w0 is not None and w1 is not None and w1 <= w0:
        die("--until must be after --from")

    def clip(span):
        lo, hi = span
        return (max(lo, w0) if w0 is not None else lo, min(hi, w1) if w1 is not None else hi)
    if w0 is not None or w1 is not None:  # the faults (and what they are scored on) inside the window
        faults = [f for f in faults if f.get("start_unix_ns") and f["end_unix_ns"] >= (w0 or t0)
                  and f["start_unix_ns"] <= (w1 or t1)]
    add_step_noise(out, labels, faults)
    live_all = live_incidents(out, t1)
    live_abs = [i for i in live_all if i.get("kind") == "absence"]
    live_changes = workload_changes_live(out, t1) + [i for i in live_all if i.get("kind") == "workload_change"]
    # An incident the agent withdrew (a new workload starting, nobody hurt) was polled as an
    # incident and later as a workload change with the same start and `withdrawn` set: scored as
    # the change it became; the withdrawal counts apart (workload_changes.withdrawn).
    withdrawn_starts = {c["start_unix_ns"] for c in live_changes if c.get("withdrawn")}
    live = [i for i in live_all if i.get("kind", "anomaly") == "anomaly" and i["start_unix_ns"] not in withdrawn_starts]
    ready = run.get("model_ready_unix_ns") or int(t0 + plan["agent_warmup_s"] * 1e9)
    off = [i for i in rep["incidents"] if i.get("kind", "anomaly") == "anomaly"]
    off_changes = rep.get("workload_changes", []) + [i for i in rep["incidents"] if i.get("kind") == "workload_change"]
    st0, st1 = rep["run"]["start_unix_ns"], rep["run"]["end_unix_ns"]
    beside = read_beside(a.beside) if a.beside is not None else None
    off_scores = score_source(off, faults, events, clip((st0 + int(SETTLE_S * 1e9), st1)),
                              sum(1 for i in rep["incidents"] if i.get("kind") == "absence"), beside)
    off_scores["workload_changes"] = change_stats(off_changes, faults, events)

    # the store: does it hold the whole day, and its incident events against the live list
    ev = store_events(db)
    if not isinstance(ev, str):  # when the agent decided: its incident_opened events, in order
        opened = sorted(t for t, kind, _ in ev if kind == "incident_opened")
        k = 0
        for inc in live:
            while k < len(opened) and opened[k] < inc["start_unix_ns"] - 1e9:
                k += 1
            if k < len(opened) and opened[k] <= inc["end_unix_ns"] + 60e9:
                inc["opened_unix_ns"] = opened[k]
                k += 1
        # when the agent first showed it, pending (agents since the twenty-sixth session note
        # incident_pending; an incident reported at once has none): the first such event from
        # its start to when it was reported
        # (noted at or after its start; each event credited to one incident at most)
        pending = sorted(t for t, kind, _ in ev if kind == "incident_pending")
        used = set()
        for inc in live:
            until = inc.get("opened_unix_ns", inc["end_unix_ns"])
            first = next((t for t in pending if t not in used and inc["start_unix_ns"] <= t <= until), None)
            if first is not None:
                inc["pending_unix_ns"] = first
                used.add(first)
    store = {"start_unix_ns": st0, "end_unix_ns": st1, "samples": rep["run"]["samples"],
             "day_s": (t1 - t0) / 1e9, "covers_day": st0 <= t0 and st1 >= t1 - 5e9,
             "coverage": min(1.0, rep["run"]["samples"] / max(1.0, (t1 - t0) / 1e9)),
             "detect_s": detect_s.get("detect.json"), "detect_streaming_s": detect_s.get("detect_streaming.json")}
    if isinstance(ev, str):
        store["events_error"] = ev
    else:
        store["incident_opened_events"] = sum(1 for e in ev if e[1] == "incident_opened")
        store["incident_closed_events"] = sum(1 for e in ev if e[1] == "incident_closed")
        store["absence_opened_events"] = sum(1 for e in ev if e[1] == "absence_opened")
        store["workload_change_events"] = sum(1 for e in ev if e[1].startswith("workload_change"))
        store["incident_withdrawn_events"] = sum(1 for e in ev if e[1] == "incident_withdrawn")
        store["transient_events"] = sum(1 for e in ev if e[1] == "transient")
        store["incident_pending_events"] = sum(1 for e in ev if e[1] == "incident_pending")
    live_scores = score_source(live, faults, events, clip((max(t0, ready), t1)), len(live_abs), beside)
    live_scores["workload_changes"] = change_stats(live_changes, faults, events)
    # the agent's detector replayed over its store (`reveal detect --streaming`), over the live span
    rp = [i for i in rep_st["incidents"] if i.get("kind", "anomaly") == "anomaly"]
    replay_scores = score_source(rp, faults, events, clip((max(t0, ready), t1)),
                                 sum(1 for i in rep_st["incidents"] if i.get("kind") == "absence"), beside)
    replay_scores["workload_changes"] = change_stats(rep_st.get("workload_changes", []), faults, events)
    store["live_incidents"] = len(live)
    store["live_absences"] = len(live_abs)
    workload_changes = live_scores["workload_changes"]["n"]

    # per kind, with the step effects
    kinds = sorted({f["kind"] for f in faults})
    per_kind = []
    for k in kinds:
        fk = [f for f in faults if f["kind"] == k]
        eff = [f["step_effect_pct"] for f in fk if f.get("step_effect_pct") is not None]
        row = {"kind": k, "subsystem": fk[0]["subsystem"], "faults": len(fk),
               "step_effect_pct_mean": statistics.mean(eff) if eff else None, "step_effect_pct": eff}
        for col, S in (("live", live_scores), ("offline", off_scores), ("replay", replay_scores)):
            rk = [r for r in S["per_fault"] if r["kind"] == k]
            row[f"{col}_caught"] = sum(r["caught"] for r in rk)
            row[f"{col}_ttd_s"] = [round(r["ttd_s"], 1) for r in rk if r["caught"]]
            row[f"{col}_subsystems"] = [r["detected_subsystem"] for r in rk if r["caught"]]
            row[f"{col}_impact_error_pts"] = [r["impact_error_pts"] for r in rk if "impact_error_pts" in r]
        per_kind.append(row)
    n_ev = {e: sum(1 for x in events if x["event"] == e) for e in ("start", "stop", "phase")}
    fault_list = [{k: f.get(k) for k in ("id", "kind", "subsystem", "job", "workload", "start_unix_ns", "end_unix_ns",
                                         "step_effect_pct", "step_noise_pct", "placebo_intervals", "placebo_pool",
                                         "effect_measurable",
                                         "cgroup", "own_processes", "job_cgroup", "cgroup_cpu_cores")}
                  for f in faults if f.get("start_unix_ns")]
    result = {"schema": "reveal.hostday.scores/1", "dir": os.path.abspath(out), "commit": run.get("commit"),
              "run_start_unix_ns": t0, "fault_list": fault_list,
              "command": run.get("command"), "seed": run.get("seed"), "day_s": (t1 - t0) / 1e9,
              "complete": run.get("complete"), "agent_stayed_up": run.get("agent_stayed_up"),
              "jobs": len(labels["jobs"]), "workloads": sorted({j["workload"] for j in labels["jobs"]}),
              "faults": len(faults), "faults_skipped": len(labels.get("skipped_faults", [])),
              "workload_events": n_ev, "workload_changes_reported": workload_changes,
              "live": live_scores, "offline": off_scores, "replay": replay_scores, "per_kind": per_kind,
              "store": store,
              "definitions": {
                  "hit": "an incident overlapping a fault interval", "caught": "a fault overlapped by any incident",
                  "false_per_day": "incidents overlapping no fault / fault-free hours of the scored span × 24",
                  "at_workload_events": f"false incidents starting within ±{EVENT_NEAR_S:.0f} s of a job start/stop "
                                        "(at_start_stop) or else of a phase change (at_phase_change)",
                  "subsystem_top1": "caught faults whose first overlapping incident names the true subsystem",
                  "subsystem_top1_onset": "caught faults whose incident opened at the fault (within NEIGHBOUR_NEAR_S "
                                          "before its start, to its end), else first overlapping one, names the true "
                                          "subsystem",
                  "effect_measurable": f"the fault's step effect exceeds the {PLACEBO_Q:.0%} quantile (step_noise_pct) "
                                       "of the same effect measured over intervals of its length at fault-free times "
                                       f"of its job, every {PLACEBO_STEP_S:.0f} s, clear of faults and of other jobs' starts and "
                                       f"stops (a placebo; placebo_pool: its job's, else its workload's jobs', "
                                       f"whichever first has {PLACEBO_MIN}; None: unknown)",
                  "ttd": "first overlapping incident start − fault start",
                  "ttr": "live only: when the agent opened that incident (its store's incident_opened event) − fault start",
                  "ttp": "live only: when the agent first showed that incident, pending (its incident_pending event; "
                         "else incident_opened) − fault start",
                  "outlast": "last end of the incidents overlapping a fault − fault end",
                  "live_span": "from the agent's first model fit to the end of the day",
                  "offline_span": f"the store's whole recording after detect's {SETTLE_S:.0f} s settle",
                  "replay": "`reveal detect --streaming --agent-config DIR/agent.toml` on the store: the agent's "
                            "detector of the scoring reveal binary, replayed; scored over the live span"}}
    result["neighbour_starts"] = neighbour_starts(out, labels, {"live": live, "offline": off, "replay": rp})
    for col, S in (("live", live_scores), ("offline", off_scores), ("replay", replay_scores)):
        S["tenants"] = tenant_summary(S, result["neighbour_starts"], col)
    stem = "scores"
    if w0 is not None or w1 is not None:
        result["window"] = {"from": a.window_from, "until": a.window_until}
        stem += f"_{a.window_from or '0'}-{a.window_until or 'end'}"
    write_json(os.path.join(out, stem + ".json"), result)
    md = render_md(result)
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write(md)
    print(md, end="")
    print(f"written: {out}/{stem}.md {out}/{stem}.json")
    return 0


COLUMNS = (("live", "live (agent /incidents)"), ("offline", "offline (`reveal detect` on the store)"),
           ("replay", "replay (`reveal detect --streaming`)"))


def render_md(r):
    cols = [(c, t) for c, t in COLUMNS if c in r]
    S = {c: r[c] for c, _ in cols}

    def row(label, f):
        return f"| {label} | " + " | ".join(f(S[c]) if f(S[c]) is not None else "–" for c, _ in cols) + " |"
    wc = "{n}, {at_workload_events}, {overlapping_faults}"

    def nm(x, who, parts):  # "n/m (n/m; n/m)", or – where nothing was to be named (no cgroups in the labels)
        t = (x.get("tenants") or {}).get(who)
        if not t or not t["m"]:
            return "–"
        return f"{t['n']}/{t['m']} (" + "; ".join(f"{t[p]['n']}/{t[p]['m']}" if t[p]["m"] else "–" for p in parts) + ")"
    rows = [row("scored span h (fault-free h)", lambda x: f"{fmt(x['span_h'])} ({fmt(x['fault_free_h'])})"),
            row("incidents (hits / false)", lambda x: f"{x['incidents']} ({x['hits']} / {x['false']})"),
            row("faults caught", lambda x: f"{x['caught']}/{x['faults']}"),
            row("event precision", lambda x: fmt(x["precision"])),
            row("event recall", lambda x: fmt(x["recall"])),
            row("event F1", lambda x: fmt(x["f1"])),
            row("faults that slowed their job beyond its own variation (placebo p95): caught; faults within it; "
                "unknown",
                lambda x: f"{x['caught_measurable']}/{x['faults_measurable']}; {x['faults_not_measurable']}; "
                          f"{x['faults'] - x['faults_measurable'] - x['faults_not_measurable']}"
                if "faults_measurable" in x else None),
            row("faults with an incident opened inside them", lambda x: f"{x['caught_opened_inside']}/{x['faults']}"),
            row("event F1 counting only those as found", lambda x: fmt(x.get("f1_opened_inside"))),
            row("false incidents per host-day (fault-free time)", lambda x: fmt(x["false_per_day"], 1)),
            row("… of which at workload events: start/stop, phase",
                lambda x: f"{x['false_at_start_stop']}, {x['false_at_phase_change']} "
                          f"({fmt(x['false_per_day_at_events'], 1)}/day)"),
            row("… elsewhere", lambda x: f"{x['false_elsewhere']} ({fmt(x['false_per_day_elsewhere'], 1)}/day)"),
            *([row("… of all false: beside unlabelled work on the host (`--beside`), and the rate away from it",
                   lambda x: f"{x['false_beside_work']} ({fmt(x['beside_work_h'], 2)} h of work); "
                             f"{fmt(x['false_per_day_away_from_work'], 1)}/day over "
                             f"{fmt(x['fault_free_away_from_work_h'], 2)} fault-free h away from it")]
              if r["live"].get("false_beside_work") is not None else []),
            row("… of all false: opened by hypervisor steal (the VM's host, unlabelled)",
                lambda x: str(x.get("false_opened_by_steal", "–"))),
            row("subsystem top-1 (of caught)", lambda x: fmt(x["subsystem_top1"])),
            row("… judged on the incident opened at the fault (from 5 s before it), else the first overlapping",
                lambda x: fmt(x.get("subsystem_top1_onset"))),
            row("TTD median / p90 s", lambda x: f"{fmt(x['ttd_median_s'], 1)} / {fmt(x['ttd_p90_s'], 1)}"),
            row("time to report (the agent's incident_opened event − fault start): median / p90 s",
                lambda x: f"{fmt(x['ttr_median_s'], 1)} / {fmt(x['ttr_p90_s'], 1)}" if x is S["live"] else "–"),
            row("time to first show it, pending (its incident_pending event, else incident_opened − fault start): "
                "median / p90 s",
                lambda x: f"{fmt(x.get('ttp_median_s'), 1)} / {fmt(x.get('ttp_p90_s'), 1)}" if x is S["live"] else "–"),
            row("incident outlasts fault: median / p90 / max s",
                lambda x: f"{fmt(x['outlast_median_s'], 1)} / {fmt(x['outlast_p90_s'], 1)} / {fmt(x['outlast_max_s'], 1)}"),
            row("longest incident s", lambda x: fmt(x["longest_incident_s"], 0)),
            row("absence incidents (not scored)", lambda x: str(x["absence_incidents"])),
            row("workload changes (not incidents): n, at workload events, overlapping a fault",
                lambda x: wc.format(**x["workload_changes"])),
            row("… of which incidents withdrawn as a new workload (new cgroup, nobody hurt): n, at workload events, "
                "overlapping a fault",
                lambda x: "{withdrawn}, {withdrawn_at_workload_events}, {withdrawn_overlapping_faults}".format(
                    **{"withdrawn": 0, "withdrawn_at_workload_events": 0, "withdrawn_overlapping_faults": 0,
                       **x["workload_changes"]})),
            row("… of which transients (symptoms over within detect.min_duration, never reported): n, at workload "
                "events, overlapping a fault",
                lambda x: "{transients}, {transients_at_workload_events}, {transients_overlapping_faults}".format(
                    **{"transients": 0, "transients_at_workload_events": 0, "transients_overlapping_faults": 0,
                       **x["workload_changes"]})),
            row("incidents naming the aggressor cgroup: n/m (faults with processes of their own; second tenant's starts)",
                lambda x: nm(x, "aggressor", ("faults", "second_tenant_starts"))),
            row("… the victim: n/m (those faults; faults acting on the job; second tenant's starts)",
                lambda x: nm(x, "victim", ("faults_with_own_processes", "faults_on_the_job", "second_tenant_starts")))]
    st = r["store"]
    win = r.get("window")
    lines = [f"# Compressed host day: scores ({r['dir']})"
             + (f", window {win['from'] or '0'}–{win['until'] or 'end'} of the day" if win else ""), "",
             f"Day {fmt_s(r['day_s'])}, seed {r['seed']}, commit {r['commit']}, {r['jobs']} jobs of "
             f"{len(r['workloads'])} workloads, {r['faults']} faults ({r['faults_skipped']} skipped), workload events: "
             f"{r['workload_events']['start']} starts, {r['workload_events']['stop']} stops, "
             f"{r['workload_events']['phase']} phase changes; agent stayed up: {fmt(r['agent_stayed_up'])}; "
             f"workload changes the agent reported (not incidents): {r['workload_changes_reported']}.", "",
             "| metric | " + " | ".join(t for _, t in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    lines += rows
    lines += ["", f"Store: {st['samples']} samples over a {fmt_s(st['day_s'])} day (covers it: {fmt(st['covers_day'])}); "
              f"incident events in the store: {st.get('incident_opened_events', '?')} opened, "
              f"{st.get('incident_closed_events', '?')} closed, {st.get('incident_withdrawn_events', 0)} withdrawn, "
              f"{st.get('workload_change_events', '?')} workload-change events, {st.get('transient_events', 0)} transients, "
              f"{st.get('incident_pending_events', 0)} pending (none from agents before the twenty-sixth session: "
              f"time to first show is then time to report); live incidents polled: {st['live_incidents']}."]
    if any(f.get("cgroup") or f.get("job_cgroup") for f in r["fault_list"]) \
            or any(x.get("cgroup") for x in r.get("neighbour_starts") or []):
        quiet = [c for c, _ in cols if S[c]["incidents"] and not S[c].get("incidents_naming_cgroups")]
        lines += ["", "Cgroups: every job and fault ran in its own (labels.json `cgroup`); incidents name them in "
                  "`victims`/`aggressors`."
                  + (f" No {' or '.join(quiet)} incident names any cgroup (the fields absent or empty in all of them: "
                     "a reveal without tenants, or nothing named)." if quiet else "")]
    lines += ["",
              "| kind | true subsystem | faults | step effect % | "
              + " | ".join(f"{c} caught | {c} TTD s | {c} subsystem" for c, _ in cols) + " |",
              "|---" * (4 + 3 * len(cols)) + "|"]
    for k in r["per_kind"]:
        cells = [f"{k[c + '_caught']}/{k['faults']} | {', '.join(map(str, k[c + '_ttd_s'])) or '–'} | "
                 f"{', '.join(k[c + '_subsystems']) or '–'}" for c, _ in cols if c + "_caught" in k]
        lines.append(f"| {k['kind']} | {k['subsystem']} | {k['faults']} | "
                     f"{', '.join(f'{e:+.0f}' for e in k['step_effect_pct']) or '–'} | " + " | ".join(cells) + " |")
    lines += ["", "| fault | kind | job (workload) | at | s | step effect % (its job's placebo p95) | "
              + " | ".join(f"{c}: TTD s, subsystem, outlasts s; cgroups named: aggressor / victim" for c, _ in cols)
              + " |", "|---" * (6 + len(cols)) + "|"]
    t0 = r["run_start_unix_ns"]

    def cell(x):
        if not x["caught"]:
            return "missed"
        imp = ""
        if "impact_est_loss_pct" in x:
            imp = f"; slowdown est {x['impact_est_loss_pct']:.0f} %" + (
                f" vs {x['measured_loss_pct']:.0f} % measured" if "measured_loss_pct" in x else "")
        return (f"{x['ttd_s']:.1f}, {x['detected_subsystem']}, {x['outlast_s']:.0f}; "
                f"{fmt(x.get('aggressor_named'))} / {fmt(x.get('victim_named'))}{imp}")
    for i, f in enumerate(r["fault_list"]):
        eff = f.get("step_effect_pct")
        noise = "" if f.get("step_noise_pct") is None else f" ({f['step_noise_pct']:+.0f})"
        lines.append(f"| {f['id']} | {f['kind']} ({f['subsystem']}) | {f['job']} ({f['workload']}) | "
                     f"+{fmt_s((f['start_unix_ns'] - t0) / 1e9)} | {(f['end_unix_ns'] - f['start_unix_ns']) / 1e9:.0f} | "
                     f"{'–' if eff is None else f'{eff:+.0f}'}{noise} | "
                     + " | ".join(cell(S[c]["per_fault"][i]) for c, _ in cols) + " |")
    ns = r.get("neighbour_starts") or []
    if ns:
        ncols = [c for c, _ in cols if f"{c}_incident_opened" in ns[0]] or ["live"]
        lines += ["", "Second tenant's job starts (workload events, not faults): the primary's step time in the "
                  "seconds after the start (cut before a fault) vs the 60 s before, and whether an incident opened "
                  f"within {NEIGHBOUR_NEAR_S:.0f} s of the start: its subsystem, and whether it names the tenant's "
                  "cgroup among its aggressors / the primary's among its victims.", "",
                  "| start | second tenant | primary | window s | primary step effect % | "
                  + " | ".join(f"{c}: incident opened; cgroups named: aggressor / victim" for c in ncols) + " |",
                  "|---" * (5 + len(ncols)) + "|"]

        def ncell(x, c):
            if not x.get(f"{c}_incident_opened"):
                return "no"
            return (f"yes, {x.get(f'{c}_subsystem')}; {fmt(x.get(f'{c}_aggressor_named'))} / "
                    f"{fmt(x.get(f'{c}_victim_named'))}")
        for x in ns:
            eff = x["step_effect_pct"]
            lines.append(f"| +{fmt_s((x['t_unix_ns'] - t0) / 1e9)} | {x['job']} ({x['workload']}) | "
                         f"{x['primary']} ({x['primary_workload']}) | {x['window_s']:.0f} | "
                         f"{'–' if eff is None else f'{eff:+.0f}'} | " + " | ".join(ncell(x, c) for c in ncols) + " |")
    for name, _ in cols:
        if S[name]["false_list"]:
            lines += ["", f"False incidents ({name}): " + ", ".join(
                f"+{fmt_s((i['start_unix_ns'] - t0) / 1e9)} {(i['end_unix_ns'] - i['start_unix_ns']) / 1e9:.0f} s "
                f"{i['subsystem']} ({i['at']})" for i in S[name]["false_list"]) + "."]
    return "\n".join(lines) + "\n"


def main():
    p = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", parser_class=Parser)
    r = sub.add_parser("run", help="plan and run a host day")
    r.add_argument("--out", required=True, help="run directory (new or empty)")
    r.add_argument("--duration", required=True, help="wall time of the day: 2h, 30m, 6m30s, seconds")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--reveal", default=os.environ.get("REVEAL", os.path.join(REPO, "build", "reveal")))
    r.add_argument("--port", type=int, default=9877, help="the agent's HTTP port on 127.0.0.1")
    r.add_argument("--agent-warmup", default="120s", help="the agent's [detect] warmup (no faults before it ends)")
    r.add_argument("--poll", default="15s", help="how often /incidents is polled")
    r.add_argument("--plan-only", action="store_true", help="write DIR/plan.json, print it and exit")
    r.add_argument("--no-faults", action="store_true",
                   help="inject nothing: the seed's jobs, phases and second tenants alone (every incident is false; "
                        "a clean recording for calibration)")
    s = sub.add_parser("score", help="score a finished run directory")
    s.add_argument("dir")
    s.add_argument("--reveal", default=os.environ.get("REVEAL", os.path.join(REPO, "build", "reveal")))
    s.add_argument("--reuse", action="store_true", help="reuse DIR/detect.json and DIR/detect_streaming.json when newer than the store")
    s.add_argument("--from", dest="window_from", default=None,
                   help="score only from this offset into the day (e.g. 1h): a held-out part of a day")
    s.add_argument("--until", dest="window_until", default=None, help="score only up to this offset into the day")
    s.add_argument("--beside", default=None,
                   help="a log of unlabelled work run on the host during the day (bench/hostday/beside.sh): false "
                        "incidents near it are counted apart, with the rate away from it")
    a = p.parse_args()
    if a.cmd == "run":
        return cmd_run(a)
    if a.cmd == "score":
        return cmd_score(a)
    die("usage: hostday.py run --out DIR --duration D [...] | hostday.py score DIR [--reveal PATH]")


if __name__ == "__main__":
    sys.exit(main())
