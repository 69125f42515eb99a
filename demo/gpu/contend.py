#!/usr/bin/env python3
"""GPU compute contention: a second process running bf16 matrix multiplies on cuda:0.

Waits (after CUDA start-up) until --start-at (unix time), then multiplies 8192x8192 bf16
matrices back to back until --end-at, so the GPU time-slices between this process and the
training job. Prints the real start and end times. Changes no clock, power limit or mode.
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start-at", type=float, required=True)
    ap.add_argument("--end-at", type=float, required=True)
    args = ap.parse_args()
    dev = torch.device("cuda:0")
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    while time.time() < args.start_at:
        time.sleep(0.01)
    print(f"contention start {time.time():.3f}", flush=True)
    n = 0
    while time.time() < args.end_at:
        for _ in range(8):
            c = a @ b
        torch.cuda.synchronize()
        n += 8
    print(f"contention end {time.time():.3f} matmuls {n}", flush=True)
    del c


if __name__ == "__main__":
    main()
