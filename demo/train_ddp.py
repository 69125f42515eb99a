#!/usr/bin/python3
"""A real data-parallel training job for the Reveal demo.

Two ranks (torch.multiprocessing) train a Transformer encoder on synthetic token data with
DistributedDataParallel over the gloo backend on 127.0.0.1, for a fixed wall-clock duration.
Rank 0 appends one line per step to --step-log: "<unix_time> <step> <step_seconds>".
Uses only Debian's python3-torch; one intra-op thread per rank.
"""
import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab=4096, d_model=128, heads=4, layers=2, classes=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def run(rank, args):
    torch.set_num_threads(1)
    torch.manual_seed(1234 + rank)
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size,
                            init_method=f"tcp://127.0.0.1:{args.port}")
    model = nn.parallel.DistributedDataParallel(Model())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    log = open(args.step_log, "a", buffering=1) if rank == 0 and args.step_log else None
    deadline = time.time() + args.duration
    step = 0
    while True:
        # All ranks agree on stopping so that no rank hangs in a collective.
        stop = torch.tensor([1.0 if time.time() >= deadline else 0.0])
        dist.all_reduce(stop)
        if stop.item() > 0:
            break
        t0 = time.perf_counter()
        tokens = torch.randint(0, 4096, (args.batch, args.seq))
        labels = torch.randint(0, 16, (args.batch,))
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(tokens), labels)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        step += 1
        if log:
            log.write(f"{time.time():.3f} {step} {dt:.4f}\n")
    if log:
        log.close()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--duration", type=float, default=150.0, help="seconds of training")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--port", type=int, default=0, help="rendezvous port on 127.0.0.1 (0: pick a free one)")
    p.add_argument("--step-log", default="")
    args = p.parse_args()
    if args.port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.port = s.getsockname()[1]
    if args.step_log and os.path.exists(args.step_log):
        os.remove(args.step_log)
    mp.spawn(run, args=(args,), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
