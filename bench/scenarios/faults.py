#!/usr/bin/python3
"""Fault injectors for Reveal's labelled fault suite (bench/scenarios) and the compressed host day.

  faults.py list                                     # kind <TAB> true subsystem <TAB> injection
  faults.py inject KIND --duration S [--pgid G] [--pid P] [--rank R] [--tmpdir D] [--label FILE]
                   [--dev DEV|NS:DEV ...] [--model M] [kind options, see inject --help]
  faults.py netns-up ID [--octet N]                  # veth pair root<->netns (prints NETNS= DEV_A= ...)
  faults.py netns-down ID

`inject` applies one fault for S seconds, restores everything it changed, and writes the label
(JSON: fault, subsystem, start_unix_ns, end_unix_ns, what) to --label and stdout. Faults that act on
the job (quota, affinity) need --pgid, the training job's process group; straggler needs --pid or
--pgid (+ --rank); the link kinds (mtu, linkdeg, linkloss) need --dev (a veth end; NS:DEV for one
inside a network namespace). Every process, cgroup, qdisc, nftables table, temp file and link
setting it creates or changes is undone on exit, SIGINT or SIGTERM (setup runs with those signals
blocked, so a stop during setup still undoes all of it). Bad arguments: one line on stderr, exit 2.
Needs root for quota, affinity of other users' processes, netns, the link kinds, straggler on other
users' processes, cachedrop.
"""
import argparse
import contextlib
import ctypes
import json
import mmap
import os
import random
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
    "linkdeg": ("network", "degraded link on the DDP veth path: tbf rate limit (30 Mbit/s) on the egress of each --dev"),
    "linkloss": ("network", "packet loss on the DDP veth path: nftables numgen random drop (3 %) of the packets "
                 "leaving and entering each --dev"),
    "ionoisy": ("storage", "noisy I/O neighbour on the job's disk (--tmpdir): 4 KiB appends with fdatasync each, "
                "and 2 threads of 256 KiB O_DIRECT random reads/writes over a 256 MiB file"),
    "forkstorm": ("cpu", "process-creation storm: stress-ng --fork 2 and a shell loop exec'ing /bin/true"),
    "straggler": ("cpu", "one DDP rank slowed: SIGSTOP/SIGCONT duty cycle (stopped 60 % of every 250 ms) on "
                  "--pid, or on rank --rank (default 1) of process group --pgid"),
    "mempressure": ("memory", "memory pressure short of OOM: anonymous memory touched until MemAvailable falls to "
                    "max(5 % of MemTotal, 1 GiB), given back whenever it falls lower, held, freed at the end"),
    "ctxswitch": ("cpu", "context-switch storm: stress-ng --switch 2 --switch-freq 25000 (about 125k switches/s)"),
    "cachedrop": ("memory", "page-cache eviction loop: echo 1 > /proc/sys/vm/drop_caches every 2 s"),
}
LINK_KINDS = ("mtu", "linkdeg", "linkloss")
STRESS_KINDS = ("cpu", "cache", "membw", "disk", "iometa", "forkstorm", "ctxswitch")
SIGS = {signal.SIGTERM, signal.SIGINT}


class Stop(Exception):
    pass


def _on_signal(signum, frame):
    raise Stop()


def die(msg, code=2):
    print(f"faults.py: {msg}", file=sys.stderr)
    sys.exit(code)


def now_ns():
    return time.time_ns()


@contextlib.contextmanager
def critical():
    """SIGTERM/SIGINT held back: a change and the registration of its undo happen together."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending Stop is raised here


def _stat_fields(pid):
    stat = open(f"/proc/{pid}/stat").read()
    return stat[stat.rindex(")") + 2:].split()  # fields[1] ppid, fields[2] pgrp


def pids_of_pgid(pgid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if int(_stat_fields(d)[2]) == pgid:
                out.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return sorted(out)


def tids_of(pid):
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def _child_setup():
    """In a spawned child before exec: signals unblocked (spawn runs inside critical()), and a
    SIGTERM when the injector dies, even by SIGKILL (PR_SET_PDEATHSIG), so nothing outlives it."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGS)
    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def spawn(cmd, **kw):
    """A child in its own session (killed as a group), ended with the injector."""
    return subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=_child_setup, **kw)


def kill_group(p):
    if p is None:
        return
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    for _ in range(50):  # members that outlived their leader (stress-ng's forks, the shell's children)
        left = pids_of_pgid(p.pid)
        if not left:
            return
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def mem_available_mb():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    return 0


def mem_total_mb():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 0


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


def mempressure_main(floor_mb, rate_mb):
    """Child: touch anonymous memory in 64 MiB mappings (at most rate_mb MiB/s) while MemAvailable
    stays above floor_mb + 128 MiB; unmap mappings as soon as it falls below floor_mb; check every
    50 ms. First in line for the OOM killer (oom_score_adj 1000) should anything else still cause one."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    chunk_mb = 64
    populate = getattr(mmap, "MAP_POPULATE", 0)  # the kernel faults the pages in (write faults: real pages)
    pattern = b"\x5a" * (1 << 20)
    held, pace = [], chunk_mb / rate_mb
    while True:
        avail = mem_available_mb()
        if avail < floor_mb:
            for _ in range(min(len(held), (floor_mb - avail) // chunk_mb + 1)):
                held.pop().close()
            time.sleep(0.05)
        elif avail > floor_mb + chunk_mb + 128:
            t = time.monotonic()
            m = mmap.mmap(-1, chunk_mb << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate)
            if not populate:
                for _ in range(chunk_mb):
                    m.write(pattern)
            held.append(m)
            time.sleep(max(0.0, pace - (time.monotonic() - t)))
        else:
            time.sleep(0.05)


def ionoisy_main(d, threads):
    """Child: a noisy I/O neighbour in directory d. One thread appends 4 KiB and fdatasyncs after
    each write (a database log; the file restarts at 16 MiB); two threads do 256 KiB random reads
    and writes with O_DIRECT over a 256 MiB file written first (buffered + fdatasync where the
    file system refuses O_DIRECT, as tmpfs does); threads: how many random-I/O threads."""
    size, blk = 256 << 20, 256 << 10
    path = os.path.join(d, "neighbour.dat")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
        direct = True
    except OSError:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        direct = False
    buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT wants
    buf.write(os.urandom(1 << 20))
    for off in range(0, size, 1 << 20):
        os.pwritev(fd, [buf], off)
    os.fdatasync(fd)

    def random_io(seed):
        rng = random.Random(seed)
        b = mmap.mmap(-1, blk)
        b.write(os.urandom(blk))
        while True:
            off = rng.randrange(size // blk) * blk
            if rng.random() < 0.5:
                os.preadv(fd, [b], off)
                if not direct:
                    os.posix_fadvise(fd, off, blk, os.POSIX_FADV_DONTNEED)
            else:
                os.pwritev(fd, [b], off)
                if not direct:
                    os.fdatasync(fd)

    def wal():
        w = os.open(os.path.join(d, "neighbour.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        rec, n = os.urandom(4096), 0
        while True:
            os.write(w, rec)
            os.fdatasync(w)
            n += 1
            if n % 4096 == 0:
                os.ftruncate(w, 0)

    for k in range(threads):
        threading.Thread(target=random_io, args=(k,), daemon=True).start()
    wal()


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
    target = straggler_target(args) if kind == "straggler" else None
    t0 = t1 = None
    hold = None  # the fault's own loop for the interval, else a plain sleep
    end = None
    try:
        with critical():
            t0 = now_ns()
            end = time.monotonic() + args.duration
            if kind in ("disk", "iometa", "ionoisy"):
                tmp = tempfile.mkdtemp(prefix="reveal-scen-", dir=args.tmpdir)
            if kind == "none":
                pass
            elif kind == "cpu":
                procs.append(spawn(["stress-ng", "--cpu", "4", "--quiet"]))
            elif kind == "cache":
                procs.append(spawn(["stress-ng", "--cache", "2", "--quiet"]))
            elif kind == "membw":
                procs.append(spawn(["stress-ng", "--stream", "2", "--quiet"]))
            elif kind == "memleak":
                cap = min(args.leak_cap_mb, int(mem_available_mb() * 0.4))
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
                                    "--duration", str(args.duration + 30)],
                                   env={**os.environ, "PYTHONWARNINGS": "ignore"}))
            elif kind == "affinity":
                undo.append(affinity_apply(pids))
            elif kind == "quota":
                undo.append(quota_apply(pids, args.quota_pct))
            elif kind == "mtu":
                undo.append(mtu_apply(args.dev, args.mtu))
            elif kind == "linkdeg":
                tbf_apply(args.dev, args.rate_mbit, undo)
                what = what.replace("30 Mbit/s", f"{args.rate_mbit:g} Mbit/s") + f": {' '.join(args.dev)}"
            elif kind == "linkloss":
                nft_apply(args.dev, args.loss_pct, undo)
                what = what.replace("3 %", f"{args.loss_pct:g} %") + f": {' '.join(args.dev)}"
            elif kind == "ionoisy":
                procs.append(spawn([PY, os.path.abspath(__file__), "_ionoisy", tmp, str(args.workers or 2)]))
                what = what.replace("2 threads", f"{args.workers or 2} threads") + f" in {os.path.dirname(tmp)}"
            elif kind == "forkstorm":
                procs.append(spawn(["stress-ng", "--fork", str(args.workers or 2), "--quiet"]))
                procs.append(spawn(["/bin/sh", "-c", "while :; do /bin/true; done"]))
                what = what.replace("--fork 2", f"--fork {args.workers or 2}")
            elif kind == "ctxswitch":
                freq = ["--switch-freq", str(args.switch_freq)] if args.switch_freq else []
                procs.append(spawn(["stress-ng", "--switch", str(args.workers or 2), *freq, "--quiet"]))
                what = what.replace("--switch 2 --switch-freq 25000",
                                    f"--switch {args.workers or 2} " + (" ".join(freq) or "(no --switch-freq)"))
            elif kind == "straggler":
                pid, how = target
                undo.append(lambda: _signal(pid, signal.SIGCONT))
                hold = lambda: straggler_hold(pid, args.stop_pct, args.period_ms, end)  # noqa: E731
                what = (what.replace("60 %", f"{args.stop_pct:g} %").replace("250 ms", f"{args.period_ms:g} ms")
                        + f": pid {pid} ({how})")
            elif kind == "mempressure":
                floor = args.mem_floor_mb or max(mem_total_mb() * 5 // 100, 1024)
                p = spawn([PY, os.path.abspath(__file__), "_mempressure", str(floor), str(args.mem_rate_mb)])
                procs.append(p)
                peak = {"rss": 0, "avail": mem_available_mb()}
                hold = lambda: mempressure_hold(p, peak, end)  # noqa: E731
                what = what.replace("max(5 % of MemTotal, 1 GiB)", f"{floor} MiB")
            elif kind == "cachedrop":
                hold = lambda: cachedrop_hold(args.drop_every, end)  # noqa: E731
                what = what.replace("every 2 s", f"every {args.drop_every:g} s")
        if hold:
            hold()
        else:
            time.sleep(max(0.0, end - time.monotonic()))
    except Stop:
        pass
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGS)  # undo runs to the end, once
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
    if kind == "mempressure":
        what += f"; peak {peak['rss']} MiB held, MemAvailable down to {peak['avail']} MiB{peak.get('note', '')}"
    label = {"fault": kind, "subsystem": subsystem, "start_unix_ns": t0, "end_unix_ns": t1, "what": what}
    text = json.dumps(label)
    if args.label:
        with open(args.label, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def affinity_apply(pids):
    saved = {}
    for pid in pids:
        for tid in tids_of(pid):
            try:
                saved[tid] = os.sched_getaffinity(tid)
            except OSError:
                pass

    def restore_affinity():
        allcpus = os.sched_getaffinity(0)
        for pid in pids:
            for tid in tids_of(pid):  # threads born during the fault get the whole set
                try:
                    os.sched_setaffinity(tid, saved.get(tid, allcpus))
                except OSError:
                    pass
    for pid in pids:
        subprocess.run(["taskset", "-a", "-p", "-c", "0", str(pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    return restore_affinity


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


# --------------------------------------------------------------------- links (mtu, linkdeg, linkloss)
def _in_ns(dev, cmd):
    """cmd (a list; '{dev}' replaced by the device) run in the namespace of dev ('NS:DEV' or 'DEV')."""
    ns, _, d = dev.rpartition(":")
    pre = ["ip", "netns", "exec", ns] if ns else []
    return subprocess.run(pre + [a.replace("{dev}", d) for a in cmd], capture_output=True, text=True, check=False)


def _ip(dev, *args):
    return _in_ns(dev, ["ip", "link", *args])


def check_dev(dev):
    ns, _, d = dev.rpartition(":")
    if not d:
        die(f"--dev {dev!r}: empty device name")
    if ns and not os.path.exists(f"/run/netns/{ns}"):
        die(f"--dev {dev}: no network namespace {ns!r} (ip netns)")
    if _ip(dev, "show", "{dev}").returncode:
        die(f"--dev {dev}: no such link" + (f" in namespace {ns}" if ns else ""))


def mtu_apply(devs, mtu):
    saved = {}
    for dev in devs:
        out = _ip(dev, "show", "{dev}").stdout.split()
        if "mtu" not in out:
            die(f"no such link {dev}", 1)
        saved[dev] = out[out.index("mtu") + 1]

    def undo():
        for dev, m in saved.items():
            _ip(dev, "set", "{dev}", "mtu", m)
    for dev in devs:
        _ip(dev, "set", "{dev}", "mtu", str(mtu))
    return undo


def tbf_apply(devs, rate_mbit, undo):
    """A tbf root qdisc on each device (its egress); refuses a device that already has a root
    qdisc of its own (not the default one), which it would otherwise replace."""
    for dev in devs:
        burst = max(64, int(rate_mbit * 1e6 / 8 / 100 / 1024))  # >= 10 ms at the rate, in KiB
        r = _in_ns(dev, ["tc", "qdisc", "add", "dev", "{dev}", "root", "handle", "7e57:", "tbf",
                         "rate", f"{rate_mbit}mbit", "burst", f"{burst}kb", "latency", "100ms"])
        if r.returncode:
            die(f"linkdeg: tc qdisc add on {dev}: {r.stderr.strip() or r.returncode} "
                "(a root qdisc already there?)", 1)
        undo.append(lambda dev=dev: _in_ns(dev, ["tc", "qdisc", "del", "dev", "{dev}", "root", "handle", "7e57:"]))


def nft_apply(devs, loss_pct, undo):
    """One nftables table per namespace, dropping a random loss_pct % of the packets each device
    sends (output hook) and receives (input hook)."""
    table = f"reveal_scen_{os.getpid()}"
    per_ns = {}
    for dev in devs:
        ns, _, d = dev.rpartition(":")
        per_ns.setdefault(ns, []).append(d)
    n = int(round(loss_pct * 100))
    for ns, ds in per_ns.items():
        out = " ".join(f'oifname "{d}" numgen random mod 10000 < {n} counter drop;' for d in ds)
        inp = " ".join(f'iifname "{d}" numgen random mod 10000 < {n} counter drop;' for d in ds)
        rules = (f"table inet {table} {{\n chain out {{\n  type filter hook output priority -10; policy accept;\n"
                 f"  {out}\n }}\n chain in {{\n  type filter hook input priority -10; policy accept;\n  {inp}\n }}\n}}\n")
        pre = ["ip", "netns", "exec", ns] if ns else []
        r = subprocess.run(pre + ["nft", "-f", "-"], input=rules, capture_output=True, text=True)
        if r.returncode:
            die(f"linkloss: nft in {ns or 'the root namespace'}: {r.stderr.strip().splitlines()[0]}", 1)
        undo.append(lambda pre=pre: subprocess.run(pre + ["nft", "delete", "table", "inet", table],
                                                   capture_output=True))


# --------------------------------------------------------------------- straggler, mempressure, cachedrop
def _proc_words(pid, name):
    try:
        return open(f"/proc/{pid}/{name}", "rb").read().decode(errors="replace").split("\0")
    except OSError:
        return []


def _is_rank(pid, rank):
    if f"RANK={rank}" in _proc_words(pid, "environ"):
        return True
    cmd = _proc_words(pid, "cmdline")
    return f"--rank={rank}" in cmd or any(a == "--rank" and b == str(rank) for a, b in zip(cmd, cmd[1:]))


def straggler_target(args):
    """(pid, how): --pid, or the rank --rank of --pgid (environment RANK=R, as workloads.py and
    torchrun set it, or --rank R on the command line); the rank itself, not its DataLoader workers
    (forked copies whose parent is the rank)."""
    if args.pid is not None:
        if not os.path.exists(f"/proc/{args.pid}"):
            die(f"straggler: no process {args.pid}")
        return args.pid, "--pid"
    if args.pgid is None:
        die("straggler needs --pid P or --pgid G [--rank R]")
    pids = pids_of_pgid(args.pgid)
    if not pids:
        die(f"no process in process group {args.pgid}")
    cands = [p for p in pids if _is_rank(p, args.rank)]
    top = [p for p in cands if int(_stat_fields(p)[1]) not in cands]
    if not top:
        die(f"straggler: no rank {args.rank} in process group {args.pgid} (a DDP job of workloads.py?)")
    return top[0], f"rank {args.rank} of process group {args.pgid}"


def straggler_hold(pid, stop_pct, period_ms, end):
    stop_s = period_ms * stop_pct / 100 / 1000
    run_s = period_ms / 1000 - stop_s
    while time.monotonic() < end:
        with critical():  # never leave the rank stopped
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                return
        try:
            time.sleep(min(stop_s, max(0.0, end - time.monotonic())))
        finally:
            _signal(pid, signal.SIGCONT)
        time.sleep(min(run_s, max(0.0, end - time.monotonic())))


def _rss_mb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def mempressure_hold(p, peak, end):
    while time.monotonic() < end:
        time.sleep(min(0.5, max(0.0, end - time.monotonic())))
        peak["avail"] = min(peak["avail"], mem_available_mb())
        peak["rss"] = max(peak["rss"], _rss_mb(p.pid))
        if p.poll() is not None:  # killed from outside: the fault ends here, and the label says so
            peak["note"] = f"; the allocating process exited early ({p.returncode})"
            return


def cachedrop_hold(every, end):
    while time.monotonic() < end:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
        time.sleep(min(every, max(0.0, end - time.monotonic())))


# --------------------------------------------------------------------- netns for the link kinds
def netns_names(ident):
    return f"reveal-scen-{ident}", f"rvs{ident}a"[:15], f"rvs{ident}b"[:15]


def _check_id(ident):
    if not (ident.isalnum() and ident.isascii() and len(ident) <= 11):
        die(f"netns ID {ident!r}: letters and digits, at most 11")


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
            if c[2] != "add" or c[1] != "netns":  # do not remove a pair that was there before us
                netns_down(ident)
            die(f"netns-up: {' '.join(c)}: {r.stderr.strip()}", 1)
    print(f"NETNS={ns} DEV_A={a} DEV_B={b} ADDR_A={net}.1 ADDR_B={net}.2")
    return 0


def netns_down(ident):
    ns, a, _ = netns_names(ident)
    subprocess.run(["ip", "link", "del", a], capture_output=True)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return 0


def inject_checked(args):
    """inject after checking the arguments (one-line errors, exit 2)."""
    k = args.kind
    if k not in KINDS:
        die(f"unknown fault {k!r} (known: {', '.join(KINDS)})")
    if args.duration <= 0:
        die("--duration must be > 0")
    if k in STRESS_KINDS and not shutil.which("stress-ng"):
        die("stress-ng missing: run scripts/setup.sh", 1)
    if k in ("disk", "iometa", "ionoisy") and args.tmpdir is not None and not os.path.isdir(args.tmpdir):
        die(f"--tmpdir {args.tmpdir}: no such directory")
    if k in LINK_KINDS:
        if not args.dev:
            die(f"{k} needs --dev DEV (a veth end; NS:DEV inside a namespace), once per link")
        for dev in args.dev:
            check_dev(dev)
    elif args.dev:
        die(f"--dev is for {', '.join(LINK_KINDS)}")
    if k == "linkdeg" and not 0.01 <= args.rate_mbit <= 100000:
        die("--rate-mbit must be in [0.01, 100000]")
    if k == "linkloss":
        if not 0 < args.loss_pct <= 100:
            die("--loss-pct must be in (0, 100]")
        if not shutil.which("nft"):
            die("nft missing (Debian nftables): run scripts/setup.sh", 1)
    if k == "mtu" and not 68 <= args.mtu <= 65535:
        die("--mtu must be in [68, 65535]")
    if not 0 <= args.workers <= 64:
        die("--workers must be in [0, 64]")
    if args.switch_freq < 0:
        die("--switch-freq must be >= 0")
    if k == "straggler" and not (0 < args.stop_pct < 100 and args.period_ms >= 20):
        die("--stop-pct must be in (0, 100) and --period-ms >= 20")
    if k == "mempressure" and (args.mem_floor_mb and args.mem_floor_mb < 256 or args.mem_rate_mb < 64):
        die("--mem-floor-mb must be >= 256 and --mem-rate-mb >= 64")
    if k == "cachedrop" and args.drop_every < 0.1:
        die("--drop-every must be >= 0.1")
    if k == "cachedrop" and not os.access("/proc/sys/vm/drop_caches", os.W_OK):
        die("cachedrop needs root (/proc/sys/vm/drop_caches)", 1)
    if k in ("quota",) and not 1 <= args.quota_pct <= 100:
        die("--quota-pct must be in [1, 100]")
    return inject(args)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"faults.py: {message}\n")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_leak":
        return leak_main(int(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "_blast":
        return blast_main()
    if len(sys.argv) > 1 and sys.argv[1] == "_mempressure":
        return mempressure_main(int(sys.argv[2]), int(sys.argv[3]))
    if len(sys.argv) > 1 and sys.argv[1] == "_ionoisy":
        return ionoisy_main(sys.argv[2], int(sys.argv[3]))
    p = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)
    sub.add_parser("list")
    i = sub.add_parser("inject")
    i.add_argument("kind")
    i.add_argument("--duration", type=float, required=True)
    i.add_argument("--pgid", type=int, help="the job's process group (quota, affinity, straggler)")
    i.add_argument("--pid", type=int, help="straggler: the process to slow")
    i.add_argument("--rank", type=int, default=1, help="straggler with --pgid: the DDP rank to slow (default 1)")
    i.add_argument("--tmpdir", default=None, help="disk, iometa, ionoisy: where the temp dir goes (the job's disk)")
    i.add_argument("--label", default="")
    i.add_argument("--model", default="transformer", help="model of the oversub copy")
    i.add_argument("--quota-pct", type=int, default=25)
    i.add_argument("--leak-cap-mb", type=int, default=4096)
    i.add_argument("--mtu", type=int, default=576)
    i.add_argument("--dev", "--mtu-dev", dest="dev", action="append", default=[],
                   help="mtu, linkdeg, linkloss: a link (NS:DEV inside a namespace); repeatable")
    i.add_argument("--rate-mbit", type=float, default=30.0, help="linkdeg: tbf rate")
    i.add_argument("--loss-pct", type=float, default=3.0, help="linkloss: drop probability per packet and direction")
    i.add_argument("--workers", type=int, default=0, help="forkstorm, ctxswitch: stress-ng workers; ionoisy: random-I/O threads (default 2)")
    i.add_argument("--switch-freq", type=int, default=25000,
                   help="ctxswitch: stress-ng --switch-freq per worker (0: unlimited)")
    i.add_argument("--stop-pct", type=float, default=60.0, help="straggler: %% of each period stopped")
    i.add_argument("--period-ms", type=float, default=250.0, help="straggler: duty-cycle period")
    i.add_argument("--mem-floor-mb", type=int, default=0,
                   help="mempressure: MemAvailable to leave (default max(5 %% of MemTotal, 1024))")
    i.add_argument("--mem-rate-mb", type=int, default=512, help="mempressure: allocation rate, MiB/s (at most)")
    i.add_argument("--drop-every", type=float, default=2.0, help="cachedrop: seconds between drops")
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
        signal.signal(signal.SIGTERM, _on_signal)  # from here on a stop is orderly
        signal.signal(signal.SIGINT, _on_signal)
        try:
            return inject_checked(args)
        except Stop:  # before the fault began: nothing applied, no label
            die("stopped before the fault began", 1)
    if args.cmd == "netns-up":
        _check_id(args.id)
        if not 0 <= args.octet <= 255:
            die("--octet must be 0..255")
        return netns_up(args.id, args.octet)
    if args.cmd == "netns-down":
        _check_id(args.id)
        return netns_down(args.id)
    p.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
