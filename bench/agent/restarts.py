#!/usr/bin/env python3
"""kill -9 the agent again and again (issue #18): what each restart loses and how soon it detects.

Runs `reveal agent` on this host (live sampling), waits until its model is ready, then N times:
waits a random 1-5 s, notes the time, kills it with SIGKILL and starts it again on the same
store. At the end it stops the agent with SIGTERM and reads the store back (`reveal export`):
  - samples lost per kill: the whole sampling intervals between the last stored sample before
    the kill and the kill itself (the head log makes this 0 unless the kill lands inside a write);
  - gaps inside a run (consecutive samples more than 1.5 intervals apart, restarts aside);
  - time to model ready after each restart: from the new process's start to the first /metrics
    scrape with reveal_model_ready 1, and the samples it had taken then (under the 10-s settle,
    the model can only come from the stored history).
Prints a summary; --json writes it. Exit 0, or 1 when a check fails (--max-lost, model not ready
from the history), 2 on a usage or setup error.
usage: restarts.py --reveal BIN [--kills 20] [--seed 1] [--json OUT] [--keep DIR]
"""
import argparse
import csv
import io
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

INTERVAL_S = 1.0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def metrics(url):
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=2) as r:
            text = r.read().decode()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        if line.startswith(("reveal_model_ready ", "reveal_samples_total ")):
            k, v = line.split()
            out[k] = float(v)
    return out


def start(args, d, port, n):
    log = open(os.path.join(d, f"agent-{n}.log"), "w")
    p = subprocess.Popen([args.reveal, "agent", "--config", os.path.join(d, "agent.toml"), "--store",
                          os.path.join(d, "agent.db"), "--listen", f"127.0.0.1:{port}", "--probes", *args.probes],
                         stdout=log, stderr=subprocess.STDOUT)
    return p, time.time()


def wait_ready(url, p, t_start, deadline_s):
    """Seconds from t_start to the first scrape with the model ready, and the samples then."""
    while time.time() - t_start < deadline_s:
        if p.poll() is not None:
            raise SystemExit(f"restarts.py: the agent exited ({p.returncode}) before its model was ready")
        m = metrics(url)
        if m and m.get("reveal_model_ready") == 1:
            return time.time() - t_start, int(m.get("reveal_samples_total", -1))
        time.sleep(0.1)
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reveal", required=True)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--keep", help="directory for the store and logs (kept); default a temporary one")
    ap.add_argument("--max-lost", type=int, default=1, help="samples a kill may lose (check)")
    ap.add_argument("--probes", nargs="+", default=["proc.*", "reveal.*"])
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    d = args.keep or tempfile.mkdtemp(prefix="reveal-restarts-")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "agent.toml"), "w") as f:
        f.write('interval = "1s"\n[detect]\nwarmup = "20s"\nhistory = "10m"\n')
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    p, t0 = start(args, d, port, 0)
    first_ready, _ = wait_ready(url, p, t0, 120)
    if first_ready is None:
        raise SystemExit("restarts.py: the first agent's model was not ready within 120 s")
    kills, restarts = [], []
    for k in range(1, args.kills + 1):
        time.sleep(rnd.uniform(1.0, 5.0))
        t_kill = time.time()
        p.send_signal(signal.SIGKILL)
        p.wait()
        kills.append(t_kill)
        p, t_start = start(args, d, port, k)
        ready_s, samples = wait_ready(url, p, t_start, 60)
        restarts.append({"ready_s": ready_s, "samples_at_ready": samples})
    time.sleep(2)
    p.send_signal(signal.SIGTERM)
    rc = p.wait()
    exp = subprocess.run([args.reveal, "export", os.path.join(d, "agent.db"), "-o", "-", "--channels", "proc.loadavg:*"],
                         capture_output=True, text=True)
    if exp.returncode != 0:
        raise SystemExit("restarts.py: reveal export failed: " + exp.stderr.strip())
    ts = [int(r["t_unix_ns"]) / 1e9 for r in csv.DictReader(io.StringIO(exp.stdout))]
    lost = []
    for t_kill in kills:
        before = [t for t in ts if t <= t_kill]
        lost.append(int((t_kill - before[-1]) // INTERVAL_S) if before else None)
    # Gaps inside runs: consecutive samples > 1.5 intervals apart with no kill between them.
    gaps = [(a, b) for a, b in zip(ts, ts[1:]) if b - a > 1.5 * INTERVAL_S and not any(a <= t <= b for t in kills)]
    ready = [r["ready_s"] for r in restarts if r["ready_s"] is not None]
    primed = all(r["ready_s"] is not None and 0 <= r["samples_at_ready"] < 10 for r in restarts)
    summary = {
        "kills": len(kills), "samples_stored": len(ts), "exit_code": rc,
        "samples_lost_per_kill": lost, "samples_lost_max": max([x for x in lost if x is not None], default=0),
        "gaps_inside_runs": len(gaps),
        "first_model_ready_s": round(first_ready, 2),
        "restart_model_ready_s_median": round(statistics.median(ready), 2) if ready else None,
        "restart_model_ready_s_max": round(max(ready), 2) if ready else None,
        "restarts_ready_from_history": sum(1 for r in restarts if r["ready_s"] is not None and 0 <= r["samples_at_ready"] < 10),
        "restarts": restarts, "dir": d,
    }
    print(f"{summary['kills']} kills: samples lost per kill max {summary['samples_lost_max']} "
          f"(all: {lost}); gaps inside runs {len(gaps)}; {len(ts)} samples stored; exit {rc}")
    print(f"model ready: first start {summary['first_model_ready_s']} s; after a restart median "
          f"{summary['restart_model_ready_s_median']} s, max {summary['restart_model_ready_s_max']} s; "
          f"{summary['restarts_ready_from_history']}/{len(restarts)} ready before 10 samples (from the stored history)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    ok = rc == 0 and None not in lost and summary["samples_lost_max"] <= args.max_lost and not gaps and primed
    if not ok:
        print("FAIL: " + ", ".join(x for x, bad in [
            (f"exit {rc}", rc != 0), ("a kill with no stored sample before it", None in lost),
            (f"{summary['samples_lost_max']} samples lost at a kill", summary["samples_lost_max"] > args.max_lost),
            (f"{len(gaps)} gaps inside runs", bool(gaps)), ("a restart not ready from the history", not primed)] if bad))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
