#!/usr/bin/env python3
"""A real single-GPU training job for Reveal's GPU recording (issue #3, device run).

Trains a Transformer encoder language model (bf16 autocast, AdamW) on synthetic token data on
cuda:0 for a fixed wall-clock time, with a CPU-side batch generator like a real input pipeline.
Appends one line per step to --step-log: "<unix_time> <step> <step_seconds>" (each step ends
with a CUDA synchronise, so step time is real GPU time). Needs PyTorch with CUDA.
"""
import argparse
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--step-log", required=True)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = Model().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    end = time.time() + args.seconds
    step = 0
    with open(args.step_log, "a", buffering=1) as log:
        while time.time() < end:
            t0 = time.perf_counter()
            tokens = torch.randint(0, 32000, (args.batch, args.seq + 1)).pin_memory()
            tokens = tokens.to(dev, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(tokens[:, :-1])
                loss = loss_fn(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            step += 1
            log.write(f"{time.time():.3f} {step} {time.perf_counter() - t0:.4f}\n")


if __name__ == "__main__":
    main()
