#!/usr/bin/python3
"""Fault injectors for Reveal's labelled fault suite (bench/scenarios).

  faults.py list                                     # kinds and their true subsystem
  faults.py inject KIND --duration S [--pgid G] [--tmpdir D] [--label FILE] [--model M] [--mtu-dev DEV...]
  faults.py netns-up ID                              # veth pair root<->netns for the mtu kind (prints env)
  faults.py netns-down ID

`inject` applies one fault for S seconds, restores everything it changed, and writes the label
(JSON: fault, subsystem, start_unix_ns, end_unix_ns, what) to --label and stdout. Faults that act on
the job (quota, affinity) need --pgid, the training job's process group. Every process, cgroup,
temp file and link setting it creates or changes is undone on exit, SIGINT or SIGTERM.
Needs root for quota, affinity of other users' processes, netns and mtu.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import socket

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"

# kind -> (true subsystem, description)
KINDS = {
    "none": ("none", "clean run: nothing injected (sleep)"),
    "cpu": ("cpu", "CPU contention: stress-ng --cpu 4"),
    "cache": ("memory", "cache thrash: stress-ng --cache 2"),
    "membw": ("memory", "memory-bandwidth hog: stress-ng --stream 2"),
    "memleak": ("memory", "memory leak: a process allocating and touching 64 MiB every 0.5 s (capped)"),
    "disk": ("storage", "disk bandwidth: stress-ng --hdd 2 with O_DIRECT writes in a temp dir"),
    "iometa": ("storage", "I/O metadata storm: stress-ng --dentry 1 --dir 1 in a temp dir"),
    "net": ("network", "network hog on the DDP path: TCP blaster over 127.0.0.1"),
    "quota": ("cpu", "container CPU quota: the job moved into a cgroup with 25 % of one CPU"),
    "oversub": ("cpu", "thread oversubscription: a second copy of the model with 8 intra-op threads"),
    "affinity": ("cpu", "CPU affinity restriction: taskset -a -p -c 0 on the job, then restored"),
    "mtu": ("network", "link MTU mismatch: the netns end of the DDP veth lowered to 576 while the root end stays 1500"),
}


class Stop(Exception):
    pass


def _on_signal(signum, frame):
    raise Stop()


def die(msg, code=2):
    print(f"faults.py: {msg}", file=sys.stderr)
    sys.exit(code)


def now_ns():
    return time.time_ns()


def pids_of_pgid(pgid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid:
                out.append(int(d))
        except (OSError, ValueError):
            pass
    return sorted(out)


def tids_of(pid):
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def spawn(cmd, **kw):
    return subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def kill_group(p):
    if p is None or p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


# --------------------------------------------------------------------- helper child processes
def leak_main(cap_mb):
    """Child: allocate and touch 64 MiB every 0.5 s up to cap_mb, then hold."""
    held, chunk = [], 64 << 20
    while True:
        if len(held) * 64 < cap_mb:
            held.append(bytearray(b"\x01") * chunk)
        time.sleep(0.5)


def blast_main():
    """Child: a TCP sender and a receiver over 127.0.0.1, as fast as they go."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def sink():
        c, _ = srv.accept()
        while c.recv(1 << 20):
            pass

    threading.Thread(target=sink, daemon=True).start()
    s = socket.create_connection(("127.0.0.1", port))
    buf = b"\0" * (1 << 20)
    while True:
        s.sendall(buf)


# --------------------------------------------------------------------- injectors
def inject(args):
    kind = args.kind
    subsystem, what = KINDS[kind]
    procs, undo, tmp = [], [], None
    pids = []
    if kind in ("quota", "affinity"):
        if args.pgid is None:
            die(f"{kind} needs --pgid (the training job's process group)")
        pids = pids_of_pgid(args.pgid)
        if not pids:
            die(f"no process in process group {args.pgid}")
    if kind in ("disk", "iometa"):
        tmp = tempfile.mkdtemp(prefix="reveal-scen-", dir=args.tmpdir)
    if kind == "mtu" and not args.mtu_dev:
        die("mtu needs --mtu-dev DEV (the veth ends; netns ones as NS:DEV)")
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    t0 = t1 = None
    try:
        t0 = now_ns()
        if kind == "none":
            pass
        elif kind == "cpu":
            procs.append(spawn(["stress-ng", "--cpu", "4", "--quiet"]))
        elif kind == "cache":
            procs.append(spawn(["stress-ng", "--cache", "2", "--quiet"]))
        elif kind == "membw":
            procs.append(spawn(["stress-ng", "--stream", "2", "--quiet"]))
        elif kind == "memleak":
            avail = 0
            for line in open("/proc/meminfo"):
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) // 1024
            cap = min(args.leak_cap_mb, int(avail * 0.4))
            procs.append(spawn([PY, os.path.abspath(__file__), "_leak", str(cap)]))
            what += f" up to {cap} MiB"
        elif kind == "disk":
            procs.append(spawn(["stress-ng", "--hdd", "2", "--hdd-bytes", "256M", "--hdd-opts", "direct",
                                "--temp-path", tmp, "--quiet"]))
        elif kind == "iometa":
            procs.append(spawn(["stress-ng", "--dentry", "1", "--dir", "1", "--temp-path", tmp, "--quiet"]))
        elif kind == "net":
            procs.append(spawn([PY, os.path.abspath(__file__), "_blast"]))
        elif kind == "oversub":
            procs.append(spawn([PY, os.path.join(HERE, "workloads.py"), "--model", args.model, "--threads", "8",
                                "--duration", str(args.duration + 30)], env={**os.environ, "PYTHONWARNINGS": "ignore"}))
        elif kind == "affinity":
            saved = {}
            for pid in pids:
                for tid in tids_of(pid):
                    try:
                        saved[tid] = os.sched_getaffinity(tid)
                    except OSError:
                        pass
                subprocess.run(["taskset", "-a", "-p", "-c", "0", str(pid)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)

            def restore_affinity():
                allcpus = os.sched_getaffinity(0)
                for pid in pids:
                    for tid in tids_of(pid):  # threads born during the fault get the whole set
                        try:
                            os.sched_setaffinity(tid, saved.get(tid, allcpus))
                        except OSError:
                            pass
            undo.append(restore_affinity)
        elif kind == "quota":
            undo.append(quota_apply(pids, args.quota_pct))
        elif kind == "mtu":
            undo.append(mtu_apply(args.mtu_dev, args.mtu))
        time.sleep(args.duration)
    except Stop:
        pass
    finally:
        t1 = now_ns()
        for p in procs:
            kill_group(p)
        for u in reversed(undo):
            try:
                u()
            except Exception as e:  # keep undoing the rest
                print(f"faults.py: undo failed: {e}", file=sys.stderr)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    label = {"fault": kind, "subsystem": subsystem, "start_unix_ns": t0, "end_unix_ns": t1, "what": what}
    text = json.dumps(label)
    if args.label:
        with open(args.label, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def _cgroup_of(pid, controller):
    for line in open(f"/proc/{pid}/cgroup"):
        hid, ctrls, path = line.rstrip("\n").split(":", 2)
        if (controller == "" and hid == "0") or controller in ctrls.split(","):
            return path
    return "/"


def quota_apply(pids, pct):
    """Move the job into a fresh cgroup limited to pct % of one CPU; returns the undo."""
    v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers") and \
        "cpu" in open("/sys/fs/cgroup/cgroup.controllers").read().split()
    name = f"reveal-scen-quota-{os.getpid()}"
    if v2:
        root, ctrl = "/sys/fs/cgroup", ""
    elif os.path.isdir("/sys/fs/cgroup/cpu"):
        root, ctrl = "/sys/fs/cgroup/cpu", "cpu"
    else:
        die("no cgroup cpu controller (v2 cpu or v1 /sys/fs/cgroup/cpu)", 1)
    orig = {pid: _cgroup_of(pid, ctrl) for pid in pids}
    cg = os.path.join(root, name)
    os.mkdir(cg)
    period = 100000
    if v2:
        open(os.path.join(cg, "cpu.max"), "w").write(f"{period * pct // 100} {period}")
    else:
        open(os.path.join(cg, "cpu.cfs_period_us"), "w").write(str(period))
        open(os.path.join(cg, "cpu.cfs_quota_us"), "w").write(str(period * pct // 100))

    def undo():
        for pid, path in orig.items():
            try:
                open(os.path.join(root, path.lstrip("/"), "cgroup.procs"), "w").write(str(pid))
            except OSError:
                pass
        for _ in range(50):  # rmdir fails while a task is still leaving
            try:
                os.rmdir(cg)
                return
            except OSError:
                time.sleep(0.1)
        print(f"faults.py: could not remove {cg}", file=sys.stderr)

    try:
        for pid in pids:
            open(os.path.join(cg, "cgroup.procs"), "w").write(str(pid))
    except OSError:
        undo()
        raise
    return undo


def _ip(dev, *args):
    ns, _, d = dev.rpartition(":")
    pre = ["ip", "netns", "exec", ns] if ns else []
    return subprocess.run(pre + ["ip", "link", *[a.replace("{dev}", d) for a in args]],
                          capture_output=True, text=True, check=False)


def mtu_apply(devs, mtu):
    saved = {}
    for dev in devs:
        out = _ip(dev, "show", "{dev}").stdout.split()
        if "mtu" not in out:
            die(f"no such link {dev}", 1)
        saved[dev] = out[out.index("mtu") + 1]
    for dev in devs:
        _ip(dev, "set", "{dev}", "mtu", str(mtu))

    def undo():
        for dev, m in saved.items():
            _ip(dev, "set", "{dev}", "mtu", m)
    return undo


# --------------------------------------------------------------------- netns for the mtu kind
def netns_names(ident):
    return f"reveal-scen-{ident}", f"rvs{ident}a"[:15], f"rvs{ident}b"[:15]


def netns_up(ident, octet):
    ns, a, b = netns_names(ident)
    net = f"10.201.{octet}"
    cmds = [["ip", "netns", "add", ns],
            ["ip", "link", "add", a, "type", "veth", "peer", "name", b],
            ["ip", "link", "set", b, "netns", ns],
            ["ip", "addr", "add", f"{net}.1/24", "dev", a],
            ["ip", "link", "set", a, "up"],
            ["ip", "netns", "exec", ns, "ip", "addr", "add", f"{net}.2/24", "dev", b],
            ["ip", "netns", "exec", ns, "ip", "link", "set", b, "up"],
            ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]]
    for c in cmds:
        r = subprocess.run(c, capture_output=True, text=True)
        if r.returncode:
            netns_down(ident)
            die(f"netns-up: {' '.join(c)}: {r.stderr.strip()}", 1)
    print(f"NETNS={ns} DEV_A={a} DEV_B={b} ADDR_A={net}.1 ADDR_B={net}.2")
    return 0


def netns_down(ident):
    ns, a, _ = netns_names(ident)
    subprocess.run(["ip", "link", "del", a], capture_output=True)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_leak":
        return leak_main(int(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "_blast":
        return blast_main()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    sub.add_parser("list")
    i = sub.add_parser("inject")
    i.add_argument("kind")
    i.add_argument("--duration", type=float, required=True)
    i.add_argument("--pgid", type=int)
    i.add_argument("--tmpdir", default=None)
    i.add_argument("--label", default="")
    i.add_argument("--model", default="transformer", help="model of the oversub copy")
    i.add_argument("--quota-pct", type=int, default=25)
    i.add_argument("--leak-cap-mb", type=int, default=4096)
    i.add_argument("--mtu", type=int, default=576)
    i.add_argument("--mtu-dev", action="append", default=[])
    for name in ("netns-up", "netns-down"):
        n = sub.add_parser(name)
        n.add_argument("id")
        if name == "netns-up":
            n.add_argument("--octet", type=int, default=0)
    args = p.parse_args()
    if args.cmd == "list":
        for k, (s, w) in KINDS.items():
            print(f"{k}\t{s}\t{w}")
        return 0
    if args.cmd == "inject":
        if args.kind not in KINDS:
            die(f"unknown fault {args.kind!r} (known: {', '.join(KINDS)})")
        if args.duration <= 0:
            die("--duration must be > 0")
        if args.kind in ("cpu", "cache", "membw", "disk", "iometa") and not shutil.which("stress-ng"):
            die("stress-ng missing: run scripts/setup.sh", 1)
        return inject(args)
    if args.cmd == "netns-up":
        return netns_up(args.id, args.octet)
    if args.cmd == "netns-down":
        return netns_down(args.id)
    p.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
