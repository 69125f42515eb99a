#!/usr/bin/python3
"""Real ML training jobs on CPU for Reveal's labelled fault suite (bench/scenarios).

Each model is plain torch.nn (no torchvision), trained on synthetic data for a fixed wall-clock
duration, one process or N-rank DistributedDataParallel over gloo:

  workloads.py --model resnet18 --duration 120 --step-log steps.log           # one process
  workloads.py --model lstm_lm --duration 120 --ddp 2                         # 2 ranks, 127.0.0.1
  workloads.py --model vit --duration 120 --ddp 2 --rank 1 --master-addr 10.201.0.1 \
      --master-port 29611 --ifname rvB                                        # one rank of 2 (netns)
  workloads.py --list                                                         # the models

Rank 0 (or the single process) appends one line per step to --step-log:
"<unix_time> <step> <step_seconds>". Threads: --threads (default 1 per rank under DDP, 2 alone)
for a 2-core host. Uses only Debian's python3-torch; run it with /usr/bin/python3.
"""
import argparse
import os
import socket
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # a pyenv python3 has no torch
    sys.exit(f"workloads.py: cannot import torch ({e}); run with /usr/bin/python3 (Debian python3-torch)")


# ---------------------------------------------------------------- vision
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(y)) + self.short(x))


class ResNet18(nn.Module):
    """ResNet-18 layout ([2,2,2,2] basic blocks) at reduced width for 3x32x32 inputs."""

    def __init__(self, width=16, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        layers, cin = [], width
        for i, w in enumerate([width, 2 * width, 4 * width, 8 * width]):
            for j in range(2):
                layers.append(BasicBlock(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1).flatten(1))


class MobileNet(nn.Module):
    """MobileNet-v1 style: depthwise 3x3 + pointwise 1x1 blocks."""

    def __init__(self, classes=10):
        super().__init__()
        cfg = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)]
        mods = [nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        for cin, cout, s in cfg:
            mods += [nn.Conv2d(cin, cin, 3, s, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU6(),
                     nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU6()]
        self.features = nn.Sequential(*mods)
        self.head = nn.Linear(512, classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.features(x), 1).flatten(1))


class ViT(nn.Module):
    """A small Vision Transformer: 4x4 patches of 3x32x32, 3 layers of dim 64."""

    def __init__(self, dim=64, depth=3, heads=4, patch=4, classes=10):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (32 // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1) + self.pos
        return self.head(self.enc(t)[:, 0])


class ConvAutoencoder(nn.Module):
    """Convolutional autoencoder on 3x32x32 (reconstruction loss)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(),
                                 nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.ReLU(),
                                 nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
                                 nn.ConvTranspose2d(32, 3, 4, 2, 1))

    def forward(self, x):
        return self.dec(self.enc(x))


# ---------------------------------------------------------------- language / sequence
class TransformerEncoder(nn.Module):
    def __init__(self, vocab=4096, d_model=128, heads=4, layers=2, classes=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


class LSTMLM(nn.Module):
    """2-layer LSTM language model (next-token loss over the whole sequence)."""

    def __init__(self, vocab=2048, dim=128, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, 2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.out(self.lstm(self.embed(tokens))[0])


class GRUClassifier(nn.Module):
    def __init__(self, features=32, hidden=128, classes=8):
        super().__init__()
        self.gru = nn.GRU(features, hidden, 2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.gru(x)[0][:, -1])


class TCN(nn.Module):
    """1-D CNN over multichannel sequences (dilated temporal convolutions)."""

    def __init__(self, features=32, ch=128, classes=8):
        super().__init__()
        mods, cin = [], features
        for d in (1, 2, 4, 8):
            mods += [nn.Conv1d(cin, ch, 3, padding=d, dilation=d), nn.BatchNorm1d(ch), nn.ReLU()]
            cin = ch
        self.net = nn.Sequential(*mods)
        self.head = nn.Linear(ch, classes)

    def forward(self, x):  # x: (B, T, F)
        return self.head(self.net(x.transpose(1, 2)).mean(-1))


# ---------------------------------------------------------------- recommendation / MLP
class DLRM(nn.Module):
    """DLRM-like: large sparse embedding tables (sparse gradients) + dense bottom/top MLPs with
    pairwise dot-product feature interaction."""

    def __init__(self, tables=8, rows=100_000, dim=32, dense_in=13):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum", sparse=True) for _ in range(tables))
        self.bottom = nn.Sequential(nn.Linear(dense_in, 128), nn.ReLU(), nn.Linear(128, dim), nn.ReLU())
        n = tables + 1
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 256), nn.ReLU(), nn.Linear(256, 1))
        self.rows = rows

    def forward(self, dense, idx, offsets):
        feats = [self.bottom(dense)] + [e(idx[k], offsets) for k, e in enumerate(self.emb)]
        z = torch.stack(feats, 1)
        inter = torch.bmm(z, z.transpose(1, 2))
        iu = torch.triu_indices(z.shape[1], z.shape[1], 1)
        return self.top(torch.cat([feats[0], inter[:, iu[0], iu[1]]], 1)).squeeze(1)


class WideMLP(nn.Module):
    def __init__(self, d_in=512, width=1024, classes=100):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                 nn.Linear(width, classes))

    def forward(self, x):
        return self.net(x)


def _img(b):
    return lambda: (torch.randn(b, 3, 32, 32), torch.randint(0, 10, (b,)))


def _dlrm_batch(b=128, tables=8, rows=100_000, bag=4):
    def make():
        idx = [torch.randint(0, rows, (b * bag,)) for _ in range(tables)]
        return (torch.randn(b, 13), idx, torch.arange(0, b * bag, bag)), torch.rand(b)
    return make


# name -> (family, constructor, batch maker, loss)
MODELS = {
    "resnet18": ("vision", ResNet18, _img(16), "ce"),
    "mobilenet": ("vision", MobileNet, _img(16), "ce"),
    "vit": ("vision", ViT, _img(8), "ce"),
    "autoencoder": ("vision", ConvAutoencoder, lambda: ((x := torch.randn(16, 3, 32, 32)), x), "mse"),
    "transformer": ("language", TransformerEncoder,
                    lambda: (torch.randint(0, 4096, (8, 32)), torch.randint(0, 16, (8,))), "ce"),
    "lstm_lm": ("language", LSTMLM, lambda: ((t := torch.randint(0, 2048, (8, 33)))[:, :-1], t[:, 1:]), "lm"),
    "gru": ("sequence", GRUClassifier, lambda: (torch.randn(16, 32, 32), torch.randint(0, 8, (16,))), "ce"),
    "tcn": ("sequence", TCN, lambda: (torch.randn(32, 128, 32), torch.randint(0, 8, (32,))), "ce"),
    "dlrm": ("recommendation", DLRM, _dlrm_batch(), "bce"),
    "wide_mlp": ("mlp", WideMLP, lambda: (torch.randn(64, 512), torch.randint(0, 100, (64,))), "ce"),
}


def loss_of(kind, out, y):
    if kind == "ce":
        return F.cross_entropy(out, y)
    if kind == "lm":
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    if kind == "mse":
        return F.mse_loss(out, y)
    return F.binary_cross_entropy_with_logits(out, y)


def train(rank, args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234 + rank)
    world = args.ddp if args.ddp > 1 else 1
    if world > 1:
        if args.ifname:
            os.environ["GLOO_SOCKET_IFNAME"] = args.ifname
        dist.init_process_group("gloo", rank=rank, world_size=world,
                                init_method=f"tcp://{args.master_addr}:{args.master_port}")
    _, ctor, batch, kind = MODELS[args.model]
    model = ctor()
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    sparse = args.model == "dlrm"
    opt = (torch.optim.SGD(model.parameters(), lr=0.01) if sparse
           else torch.optim.AdamW(model.parameters(), lr=1e-4))
    log = open(args.step_log, "a", buffering=1) if rank == 0 and args.step_log else None
    deadline = time.time() + args.duration
    step = 0
    while True:
        if world > 1:  # all ranks agree on stopping, so that no rank hangs in a collective
            stop = torch.tensor([1.0 if time.time() >= deadline else 0.0])
            dist.all_reduce(stop)
            if stop.item() > 0:
                break
        elif time.time() >= deadline:
            break
        t0 = time.perf_counter()
        x, y = batch()
        opt.zero_grad(set_to_none=True)
        out = model(*x) if isinstance(x, tuple) else model(x)
        loss_of(kind, out, y).backward()
        opt.step()
        step += 1
        if log:
            log.write(f"{time.time():.3f} {step} {time.perf_counter() - t0:.4f}\n")
    if log:
        log.close()
    if world > 1:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="one of: " + ", ".join(MODELS))
    p.add_argument("--duration", type=float, default=120.0, help="seconds of training")
    p.add_argument("--ddp", type=int, default=1, help="world size (DDP over gloo when > 1)")
    p.add_argument("--rank", type=int, default=-1, help="run only this rank (ranks in other netns)")
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=0, help="0: pick a free one (all ranks local)")
    p.add_argument("--ifname", default="", help="GLOO_SOCKET_IFNAME for this rank")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads per rank (0: 1 under DDP, else 2)")
    p.add_argument("--step-log", default="")
    p.add_argument("--list", action="store_true", help="print the models and exit")
    args = p.parse_args()
    if args.list:
        for k, (fam, *_rest) in MODELS.items():
            print(f"{k}\t{fam}")
        return 0
    if args.model not in MODELS:
        print(f"workloads.py: unknown model {args.model!r} (known: {', '.join(MODELS)})", file=sys.stderr)
        return 2
    if args.threads <= 0:
        args.threads = 1 if args.ddp > 1 else 2
    if args.step_log and os.path.exists(args.step_log) and args.rank <= 0:
        os.remove(args.step_log)
    if args.ddp > 1 and args.rank >= 0:
        if args.master_port == 0:
            print("workloads.py: --rank needs --master-port", file=sys.stderr)
            return 2
        train(args.rank, args)
    elif args.ddp > 1:
        if args.master_port == 0:
            with socket.socket() as s:
                s.bind((args.master_addr, 0))
                args.master_port = s.getsockname()[1]
        mp.spawn(train, args=(args,), nprocs=args.ddp, join=True)
    else:
        train(0, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
