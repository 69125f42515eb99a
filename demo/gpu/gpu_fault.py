#!/usr/bin/env python3
"""Faults for Reveal's GPU recordings (device runs, issues #3 and #21), one kind per process.

Prepares first (imports, CUDA context, buffers), waits until --start-at (unix time), runs the
fault until --end-at, undoes it, and prints its real start and end times and what it did.
Changes no clock, power limit or mode.

  compute  a second process multiplying 8192x8192 bf16 matrices back to back on cuda:0, so the
           GPU time-slices between it and the training job
  copy     host<->device copy contention: a pinned 2 GiB host buffer copied to cuda:0 and back
           in a loop (PCIe and the copy engines)
  memory   GPU memory pressure: allocates cuda:0's free memory in 1 GiB blocks, short of full by
           a margin (--margin-gib, default 6 GiB or 5 % of the card, whichever is larger) and
           never past it; held, then freed
  cpu      CPU-side starvation: --hogs-per-cpu busy processes pinned to each of --cpus (the
           training job's data-loader CPUs)
"""
import argparse
import os
import time

from train_gpu import parse_cpus  # same folder: the loader's CPU list syntax ("0-3,8")


def wait_until(t):
    while time.time() < t:
        time.sleep(0.01)


def compute(args):
    import torch
    dev = torch.device("cuda:0")
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    wait_until(args.start_at)
    print(f"compute start {time.time():.3f}", flush=True)
    n = 0
    while time.time() < args.end_at:
        for _ in range(8):
            c = a @ b
        torch.cuda.synchronize()
        n += 8
    del c
    print(f"compute end {time.time():.3f} matmuls {n}", flush=True)


def copy(args):
    import torch
    n = 2 << 30
    host = torch.empty(n, dtype=torch.uint8).pin_memory()
    dev = torch.empty(n, dtype=torch.uint8, device="cuda:0")
    torch.cuda.synchronize()
    wait_until(args.start_at)
    t0 = time.time()
    print(f"copy start {t0:.3f}", flush=True)
    moved = 0
    while time.time() < args.end_at:
        dev.copy_(host, non_blocking=True)
        host.copy_(dev, non_blocking=True)
        torch.cuda.synchronize()
        moved += 2 * n
    t1 = time.time()
    print(f"copy end {t1:.3f} moved {moved / 2**30:.0f} GiB ({moved / (t1 - t0) / 1e9:.1f} GB/s both ways)",
          flush=True)


def memory(args):
    import torch
    wait_until(args.start_at)
    free, total = torch.cuda.mem_get_info(0)
    margin = max(args.margin_gib * 2**30, 0.05 * total)
    blocks = []
    print(f"memory start {time.time():.3f} free {free / 2**30:.1f} GiB of {total / 2**30:.1f}", flush=True)
    while time.time() < args.end_at:
        free, _ = torch.cuda.mem_get_info(0)
        if free - 2**30 < margin:
            break
        blocks.append(torch.ones(2**30, dtype=torch.uint8, device="cuda:0"))  # written: committed
    torch.cuda.synchronize()
    free, _ = torch.cuda.mem_get_info(0)
    print(f"memory held {len(blocks)} GiB, free {free / 2**30:.1f} GiB at {time.time():.3f}", flush=True)
    wait_until(args.end_at)
    blocks.clear()
    torch.cuda.empty_cache()
    print(f"memory end {time.time():.3f}", flush=True)


def _hog(cpu, end_at):
    try:
        os.sched_setaffinity(0, {cpu})
        x = 1.0
        while time.time() < end_at:
            for _ in range(100000):
                x = x * 1.0000001 + 1e-9
    finally:
        os._exit(0)


def cpu(args):
    cpus = sorted(parse_cpus(args.cpus) & os.sched_getaffinity(0))
    wait_until(args.start_at)
    print(f"cpu start {time.time():.3f} hogs {args.hogs_per_cpu} on each of CPUs {cpus}", flush=True)
    pids = []
    for c in cpus:
        for _ in range(args.hogs_per_cpu):
            pid = os.fork()
            if pid == 0:
                _hog(c, args.end_at)
            pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    print(f"cpu end {time.time():.3f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["compute", "copy", "memory", "cpu"])
    ap.add_argument("--start-at", type=float, required=True)
    ap.add_argument("--end-at", type=float, required=True)
    ap.add_argument("--margin-gib", type=float, default=6.0)
    ap.add_argument("--cpus", default="0-3")
    ap.add_argument("--hogs-per-cpu", type=int, default=3)
    args = ap.parse_args()
    {"compute": compute, "copy": copy, "memory": memory, "cpu": cpu}[args.kind](args)


if __name__ == "__main__":
    main()
