#!/usr/bin/env python3
"""A real single-GPU training job for Reveal's GPU recordings (device runs, issues #3 and #21).

Trains a Transformer encoder language model (bf16 autocast, AdamW) on synthetic token data on
cuda:0 for a fixed wall-clock time. Appends one line per step to --step-log:
"<unix_time> <step> <step_seconds>" (each step ends with a CUDA synchronise, so step time is
real time per step); a step that runs out of GPU memory is logged with "oom" appended, skipped,
and training goes on (a neighbour's memory pressure must not end the job).

Input pipeline:
  --loader-workers 0 (default): batches are made in the training process (cheap).
  --loader-workers N: a torch DataLoader with N worker processes, pinned to --loader-cpus,
    each spending --loader-cpu-ms of its own CPU time per batch on preprocessing (sorting and
    hashing token arrays, as tokenisation or augmentation would). The training process itself is
    pinned to the other CPUs. A CPU hog on the loader's CPUs starves the input pipeline.
Needs PyTorch with CUDA (and numpy for the loader).
"""
import argparse
import os
import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab=32000, d_model=1024, heads=16, layers=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def parse_cpus(text):
    """'0-3,8' -> {0, 1, 2, 3, 8}"""
    cpus = set()
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


class TokenBatches(torch.utils.data.IterableDataset):
    """Endless token batches; each costs about cpu_ms of the worker's own CPU time."""

    def __init__(self, batch, seq, cpu_ms, cpus):
        self.batch, self.seq, self.cpu_ms, self.cpus = batch, seq, cpu_ms, cpus

    def __iter__(self):
        import numpy as np
        if self.cpus:
            os.sched_setaffinity(0, self.cpus)
        torch.set_num_threads(1)
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng(1234 + (info.id if info else 0))
        while True:
            t0 = time.thread_time()
            tokens = rng.integers(0, 32000, size=(self.batch, self.seq + 1), dtype=np.int64)
            while (time.thread_time() - t0) * 1000.0 < self.cpu_ms:
                work = rng.integers(0, 1 << 30, size=65536)
                work.sort()
                tokens[:, 0] ^= int(np.bitwise_xor.reduce(work[:64])) & 1  # keep the work live
            yield torch.from_numpy(tokens % 32000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--step-log", required=True)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--loader-workers", type=int, default=0)
    ap.add_argument("--loader-cpus", default="", help="CPUs of the loader workers, e.g. 0-3")
    ap.add_argument("--loader-cpu-ms", type=float, default=60.0)
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = Model().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    batches = None
    if args.loader_workers > 0:
        usable = os.sched_getaffinity(0)
        loader_cpus = parse_cpus(args.loader_cpus) & usable
        others = usable - loader_cpus
        if loader_cpus and others:
            os.sched_setaffinity(0, others)
        data = TokenBatches(args.batch, args.seq, args.loader_cpu_ms, loader_cpus)
        batches = iter(torch.utils.data.DataLoader(data, batch_size=None, num_workers=args.loader_workers,
                                                   pin_memory=True, prefetch_factor=4,
                                                   persistent_workers=True))
    end = time.time() + args.seconds
    step = 0
    with open(args.step_log, "a", buffering=1) as log:
        while time.time() < end:
            t0 = time.perf_counter()
            if batches is None:
                tokens = torch.randint(0, 32000, (args.batch, args.seq + 1)).pin_memory()
            else:
                tokens = next(batches)
            tokens = tokens.to(dev, non_blocking=True)
            oom = ""
            try:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(tokens[:, :-1])
                    loss = loss_fn(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                torch.cuda.synchronize()
            except torch.cuda.OutOfMemoryError:
                oom = " oom"
                logits = loss = None
                opt.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
            step += 1
            log.write(f"{time.time():.3f} {step} {time.perf_counter() - t0:.4f}{oom}\n")


if __name__ == "__main__":
    main()
