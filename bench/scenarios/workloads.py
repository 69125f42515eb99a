#!/usr/bin/python3
"""Real ML jobs on CPU for Reveal's labelled fault suite (bench/scenarios) and the compressed host day.

Plain torch.nn models (no torchvision), trained on synthetic data for a fixed wall-clock duration,
one process or N-rank DistributedDataParallel over gloo; plus named workloads with the phases real
jobs have (checkpoints, evaluation passes, a DataLoader reading from disk, an inference server):

  workloads.py --model resnet18 --duration 120 --step-log steps.log         # one process
  workloads.py --model lstm_lm --duration 120 --ddp 2                       # 2 ranks on 127.0.0.1
  workloads.py --model vit --duration 120 --ddp 2 --rank 1 --master-addr 10.201.0.1 \\
      --master-port 29611 --ifname rvB                                      # one rank of 2 (netns)
  workloads.py --model gru --duration 600 --ddp 2 --netns 7 --octet 57      # rank 0 here, rank 1 in
                                                                            # netns reveal-scen-7
  workloads.py --model transformer --checkpoint-every 60 --eval-every 45    # phases on any model
  workloads.py --model transformer_ckpt --duration 600 --phase-log phases.log
  workloads.py --model dataloader_train --workdir /var/tmp/rw               # reads files from disk
  workloads.py --model infer_server --duration 600 --step-log serve.log     # server + load client
  workloads.py --list                                                       # name, family, shape

--step-log: training jobs (rank 0) append "<unix_time> <step> <step_seconds>" per step; the inference
server appends once a second "<unix_time> <requests_done_in_that_second> <mean_latency_s>".
--phase-log: rank 0 / the single process / the server appends "<unix_time> <phase>", phase one of
start, load, train, checkpoint, eval, serve-rate=<req/s>, stop.
SIGTERM or SIGINT stops a job in order (phase stop, checkpoint directory removed, DataLoader
workers and the load client ended, exit 0), also while it waits in a collective.
Threads: --threads (default 1 per rank under DDP, 2 alone) for a 2-core host. Uses only Debian's
python3-torch; run it with /usr/bin/python3.
"""
import argparse
import ctypes
import json
import os
import queue
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
REQ_HDR = struct.Struct("<dI")  # request: scheduled unix time, payload bytes; then the payload
REP_HDR = struct.Struct("<I")   # reply: output bytes; then the output


def _pdeathsig(sig=signal.SIGTERM):
    """Ask the kernel to send sig to this process when its parent dies (no orphans)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


# ---------------------------------------------------------------- infer_server's load generator
def client_main(argv):
    """`workloads.py _client PORT T0 SCHEDULE SPEC CONNS SEED` (started by the server, no torch):
    open-loop Poisson arrivals at the rate of SCHEDULE ([[offset_s, req_per_s], ...] from T0),
    sent over CONNS persistent TCP connections to 127.0.0.1:PORT; a request waits in a bounded
    queue (1000) when every connection is busy and is dropped when the queue is full. Exits when
    the server closes the connections, or on SIGTERM (summary on stderr)."""
    from array import array
    port, t0, sched, spec = int(argv[0]), float(argv[1]), json.loads(argv[2]), json.loads(argv[3])
    conns, seed = int(argv[4]), int(argv[5])
    _pdeathsig()
    rng = random.Random(seed + 1)
    pays = []
    for _ in range(16):
        if spec["dtype"] == "f":
            pays.append(array("f", (rng.gauss(0.0, 1.0) for _ in range(spec["n"]))).tobytes())
        else:
            pays.append(array("q", (rng.randrange(spec["vocab"]) for _ in range(spec["n"]))).tobytes())
    work = queue.Queue(maxsize=1000)
    st = {"issued": 0, "done": 0, "dropped": 0, "lat": 0.0}
    lock = threading.Lock()

    def summary(*_):
        with lock:
            mean = st["lat"] / st["done"] if st["done"] else 0.0
            print(f"workloads.py client: {st['issued']} issued, {st['done']} answered, {st['dropped']} dropped "
                  f"(queue full), mean latency {mean:.4f} s", file=sys.stderr, flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, summary)
    signal.signal(signal.SIGINT, summary)

    def worker(i):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as e:
            print(f"workloads.py client: cannot connect to 127.0.0.1:{port}: {e}", file=sys.stderr)
            os._exit(1)
        k = i
        while True:
            ts = work.get()
            p = pays[k % len(pays)]
            k += 1
            try:
                s.sendall(REQ_HDR.pack(ts, len(p)) + p)
                hdr = _recv_exact(s, REP_HDR.size)
                if hdr is None or _recv_exact(s, REP_HDR.unpack(hdr)[0]) is None:
                    raise OSError("server closed the connection")
            except OSError:
                summary()
            with lock:
                st["done"] += 1
                st["lat"] += time.time() - ts

    for i in range(conns):
        threading.Thread(target=worker, args=(i,), daemon=True).start()
    i, t = 0, max(time.time(), t0)
    while True:  # arrivals; a Poisson process restarts at each breakpoint (memoryless)
        rel = t - t0
        while i + 1 < len(sched) and sched[i + 1][0] <= rel:
            i += 1
        bp = t0 + sched[i + 1][0] if i + 1 < len(sched) else float("inf")
        gap = rng.expovariate(sched[i][1])
        if t + gap >= bp:
            # Next segment. Advance i here: (t0 + x) - t0 may come out below x in floating
            # point, and the loop above would then never move past this breakpoint.
            t, i = bp, i + 1
            continue
        t += gap
        delay = t - time.time()
        if delay > 0:
            time.sleep(delay)
        try:
            work.put_nowait(t)
            with lock:
                st["issued"] += 1
        except queue.Full:
            with lock:
                st["dropped"] += 1


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "_client":
    sys.exit(client_main(sys.argv[2:]))

try:
    import torch
    import torch.distributed as dist
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



SHAPES = {
    "resnet18": "ResNet-18 layout ([2,2,2,2] basic blocks, widths 16-128), 16x3x32x32",
    "mobilenet": "MobileNet-v1 depthwise-separable blocks, 16x3x32x32",
    "vit": "ViT, 4x4 patches, 3 layers of dim 64, 8x3x32x32",
    "autoencoder": "convolutional autoencoder, MSE reconstruction, 16x3x32x32",
    "transformer": "2-layer Transformer encoder (d 128), 8x32 tokens, classification",
    "lstm_lm": "2-layer LSTM language model (hidden 128, vocab 2048), 8x32 tokens",
    "gru": "2-layer GRU classifier (hidden 128) over 16x32x32 multichannel sequences",
    "tcn": "dilated 1-D CNN over 32x128x32 sequences",
    "dlrm": "8 EmbeddingBag tables of 100000x32 (sparse gradients) + bottom/top MLPs, batch 128",
    "wide_mlp": "512-1024-1024-100 MLP, batch 64",
}


class LoaderCNN(nn.Module):
    """The dataloader_train model: 3x128x128 uint8 images, 2x2 average-pooled, then 4 strided 3x3
    convs (16-128 channels)."""

    def __init__(self, classes=10):
        super().__init__()
        mods, cin = [], 3
        for c in (16, 32, 64, 128):
            mods += [nn.Conv2d(cin, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
            cin = c
        self.net = nn.Sequential(*mods)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.net(F.avg_pool2d(x.float().div_(255.0), 2)), 1).flatten(1))


# named workloads: name -> (family, shape, base model, option defaults). dataloader_train and
# infer_server default to 1 intra-op thread (the loader workers and the load client need the other
# core; on a busy 2-core host, 2 OpenMP threads made their steps and requests 10-30x slower).
WORKLOADS = {
    "transformer_ckpt": ("language", "transformer + a checkpoint (model + AdamW state, ~11 MB, fsync) every "
                         "60 s and a 20-batch eval pass every 45 s", "transformer",
                         {"checkpoint_every": 60.0, "eval_every": 45.0}),
    "dlrm_ckpt": ("recommendation", "dlrm + a checkpoint (~100 MB, fsync) every 90 s and a 20-batch eval "
                  "pass every 60 s", "dlrm", {"checkpoint_every": 90.0, "eval_every": 60.0}),
    "dataloader_train": ("vision", "4-conv CNN, batch 32 of 3x128x128 uint8 sample files (48 KiB each, "
                         "384 MiB dataset under --workdir) read by 2 DataLoader workers, page cache dropped "
                         "after each read; eval over the held-out 5 % every 60 s", "_loader",
                         {"eval_every": 60.0, "threads": 1}),
    "infer_server": ("serving", "resnet18 served over 127.0.0.1 TCP (dynamic batching of up to 8 requests "
                     "of 4 images) to a Poisson load client whose rate steps or ramps between 2 and 30 "
                     "req/s every 30-90 s (seeded)", "_server", {"threads": 1}),
}


def loss_of(kind, out, y):
    if kind == "ce":
        return F.cross_entropy(out, y)
    if kind == "lm":
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    if kind == "mse":
        return F.mse_loss(out, y)
    return F.binary_cross_entropy_with_logits(out, y)


# ---------------------------------------------------------------- lifecycle: phases, orderly stop
class Lifecycle:
    """The phase log, and an orderly stop on SIGTERM/SIGINT. The signal's C-level handler writes to
    a wakeup pipe at once, so a watcher thread acts even while the main thread is inside a long
    torch op or a gloo collective whose peer is gone: phase stop, the cleanups, exit 0."""

    def __init__(self, phase_log):
        self.fd = os.open(phase_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if phase_log else -1
        self.cleanups = []
        self.lock = threading.Lock()
        self.done = False

    def phase(self, name):
        if self.fd >= 0:
            os.write(self.fd, f"{time.time():.3f} {name}\n".encode())

    def catch_signals(self):
        r, w = os.pipe()
        os.set_blocking(w, False)
        signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, lambda *_: None)

        def watch():
            os.read(r, 64)
            self.finish()
            os._exit(0)
        threading.Thread(target=watch, daemon=True, name="stop-watch").start()

    def finish(self):
        with self.lock:  # once; a second caller waits until the first is through
            if self.done:
                return
            self.done = True
            self.phase("stop")
            for c in reversed(self.cleanups):
                try:
                    c()
                except Exception as e:  # keep cleaning up
                    print(f"workloads.py: cleanup: {e}", file=sys.stderr)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Checkpointer:
    """torch.save of model + optimizer state to DIR/ckpt-<model>-<pid>/step-N.pt (written to a .tmp
    file, fsync, rename, fsync of the directory), keeping the last 2; the directory is removed at
    the end unless keep."""

    def __init__(self, root, model_name, keep, life):
        os.makedirs(root, exist_ok=True)
        self.dir = os.path.join(root, f"ckpt-{model_name}-{os.getpid()}")
        os.makedirs(self.dir, exist_ok=True)
        self.files = []
        if not keep:
            life.cleanups.append(lambda: shutil.rmtree(self.dir, ignore_errors=True))

    def save(self, step, model, opt):
        path = os.path.join(self.dir, f"step-{step}.pt")
        with open(path + ".tmp", "wb") as f:
            torch.save({"step": step, "model": model.state_dict(), "optimizer": opt.state_dict()}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(path + ".tmp", path)
        _fsync_dir(self.dir)
        self.files.append(path)
        while len(self.files) > 2:
            try:
                os.remove(self.files.pop(0))
            except OSError:
                pass


# ---------------------------------------------------------------- dataloader_train: files on disk
SAMPLE_SHAPE = (3, 128, 128)
SAMPLE_BYTES = 3 * 128 * 128
SAMPLE_HDR = 16  # byte 0: the label; the rest padding


def ensure_dataset(workdir, mb):
    """Write the dataset once: DIR/dataset-<mb>mb-v1/NNNNNN.bin (16-byte header + 3x128x128 uint8),
    deterministic content, synced and dropped from the page cache; later runs reuse it (a .complete
    marker; an flock serializes jobs that start together). Returns the sorted file list."""
    d = os.path.join(workdir, f"dataset-{mb}mb-v1")
    n = max(64, (mb << 20) // (SAMPLE_BYTES + SAMPLE_HDR))
    os.makedirs(workdir, exist_ok=True)
    import fcntl
    with open(d + ".lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(d, ".complete")):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            rng = random.Random(20240517)
            for i in range(n):
                with open(os.path.join(d, f"{i:06d}.bin"), "wb") as f:
                    f.write(bytes([rng.randrange(10)]) + bytes(SAMPLE_HDR - 1) + rng.randbytes(SAMPLE_BYTES))
            os.sync()
            for i in range(n):
                fd = os.open(os.path.join(d, f"{i:06d}.bin"), os.O_RDONLY)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(fd)
            open(os.path.join(d, ".complete"), "w").close()
            _fsync_dir(d)
    return [os.path.join(d, f"{i:06d}.bin") for i in range(n)]


class FileDataset(torch.utils.data.Dataset):
    """One sample per file; every read goes to the disk (POSIX_FADV_DONTNEED after reading)."""

    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        fd = os.open(self.files[i], os.O_RDONLY)
        try:
            buf = bytearray(SAMPLE_HDR + SAMPLE_BYTES)
            view, got = memoryview(buf), 0
            while got < len(buf):
                k = os.readv(fd, [view[got:]])
                if k == 0:
                    raise OSError(f"{self.files[i]}: short file")
                got += k
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        x = torch.frombuffer(buf, dtype=torch.uint8, offset=SAMPLE_HDR).view(*SAMPLE_SHAPE)
        return x, buf[0]


def _loader_worker_init(_):
    signal.set_wakeup_fd(-1)  # the rank's stop pipe is not the worker's
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the rank ends its workers
    _pdeathsig(signal.SIGKILL)


# ---------------------------------------------------------------- training (one rank)
def run_rank(rank, args):
    world = args.ddp if args.ddp > 1 else 1
    life = Lifecycle(args.phase_log if rank == 0 else "")
    life.catch_signals()
    life.phase("start")
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234 + rank)
    if world > 1:
        if args.ifname:
            os.environ["GLOO_SOCKET_IFNAME"] = args.ifname
        dist.init_process_group("gloo", rank=rank, world_size=world,
                                init_method=f"tcp://{args.master_addr}:{args.master_port}")
    loader = eval_loader = None
    if args.base == "_loader":
        life.phase("load")
        files = ensure_dataset(args.workdir, args.dataset_mb)
        n_eval = max(32, len(files) // 20)
        train_files, eval_files = files[:-n_eval], files[-n_eval:]
        ds = FileDataset(train_files)
        sampler = (torch.utils.data.distributed.DistributedSampler(ds, world, rank, shuffle=True, seed=7)
                   if world > 1 else torch.utils.data.RandomSampler(ds))
        workers = args.loader_workers
        loader = torch.utils.data.DataLoader(ds, batch_size=32, sampler=sampler, num_workers=workers,
                                             drop_last=True, worker_init_fn=_loader_worker_init,
                                             persistent_workers=workers > 0)
        eval_loader = torch.utils.data.DataLoader(FileDataset(eval_files[rank::world]), batch_size=32)
        import multiprocessing

        def end_workers():  # on a signal (the main thread is left as it is): kill them
            for p in multiprocessing.active_children():
                p.kill()
                p.join(5)
        life.cleanups.append(end_workers)
        model, kind = LoaderCNN(), "ce"
        epoch = [0]

        def batches():
            while True:
                if world > 1:
                    sampler.set_epoch(epoch[0])
                epoch[0] += 1
                yield from loader
        it = batches()

        def next_batch():
            return next(it)

        def held_out():
            for k, b in enumerate(eval_loader):
                if k >= args.eval_batches:
                    break
                yield b
    else:
        _, ctor, batch, kind = MODELS[args.base]
        model = ctor()
        next_batch = batch
        held = []
        if args.eval_every > 0:  # a fixed held-out set, the same on every run
            state = torch.get_rng_state()
            torch.manual_seed(4321 + rank)
            held = [batch() for _ in range(args.eval_batches)]
            torch.set_rng_state(state)

        def held_out():
            return held
    core = model
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    sparse = args.base == "dlrm"
    opt = (torch.optim.SGD(model.parameters(), lr=0.01) if sparse
           else torch.optim.AdamW(model.parameters(), lr=1e-4))
    ckpt = None
    if args.checkpoint_every > 0 and rank == 0:
        ckpt = Checkpointer(args.checkpoint_dir or args.workdir, args.model, args.keep_checkpoints, life)
    log = open(args.step_log, "a", buffering=1) if rank == 0 and args.step_log else None
    if log:
        life.cleanups.append(log.flush)

    def evaluate():
        core.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for x, y in held_out():
                out = core(*x) if isinstance(x, tuple) else core(x)
                total += float(loss_of(kind, out, y))
                n += 1
        core.train()
        if world > 1:  # the ranks' mean held-out loss, as a trainer would report it
            t = torch.tensor([total, float(n)])
            dist.all_reduce(t)
            total, n = t[0].item(), int(t[1].item())
        return total / max(n, 1)

    t_start = time.time()
    deadline = t_start + args.duration
    next_ckpt = t_start + args.checkpoint_every
    next_eval = t_start + args.eval_every
    step = 0
    try:
        while True:
            now = time.time()
            do_stop = now >= deadline
            do_eval = rank == 0 and args.eval_every > 0 and now >= next_eval
            do_ckpt = rank == 0 and args.checkpoint_every > 0 and now >= next_ckpt
            if world > 1:  # all ranks agree on stopping and on the phases, so none hangs in a collective
                flags = torch.tensor([float(do_stop), float(do_eval), float(do_ckpt)])
                dist.all_reduce(flags)
                do_stop, do_eval, do_ckpt = (bool(v > 0) for v in flags.tolist())
            if do_stop:
                break
            if do_eval:
                life.phase("eval")
                evaluate()
                life.phase("train")
                next_eval = time.time() + args.eval_every  # S s of training between passes
            if do_ckpt:
                life.phase("checkpoint")
                if ckpt:
                    ckpt.save(step, core, opt)
                if world > 1:
                    dist.barrier()
                life.phase("train")
                next_ckpt = time.time() + args.checkpoint_every
            t0 = time.perf_counter()
            x, y = next_batch()
            opt.zero_grad(set_to_none=True)
            out = model(*x) if isinstance(x, tuple) else model(x)
            loss_of(kind, out, y).backward()
            opt.step()
            step += 1
            if log:
                log.write(f"{time.time():.3f} {step} {time.perf_counter() - t0:.4f}\n")
            if step == 1:
                life.phase("train")  # after the warm-up step (lazy initialisation, first batches)
    finally:
        if loader is not None:
            it.close()  # the DataLoader iterator goes: its workers are shut down in order
        life.finish()
    if log:
        log.close()
    if world > 1:
        dist.destroy_process_group()
    return 0


# ---------------------------------------------------------------- infer_server
def rate_schedule(seed, duration, low, high):
    """Breakpoints [(offset_s, req_per_s)]: every 30-90 s the rate goes to a new level, alternately in
    the lower and the upper half of [low, high], as a step or as a ramp over 10-30 s (5-s steps)."""
    rng = random.Random(seed)
    mid = (low + high) / 2
    cur = round(rng.uniform(low, mid), 1)
    pts, t, up = [(0.0, cur)], 0.0, True
    while True:
        t += rng.uniform(30, 90)
        if t >= duration:
            return pts
        target = round(rng.uniform(mid, high) if up else rng.uniform(low, mid), 1)
        up = not up
        if rng.random() < 0.5:
            pts.append((round(t, 1), target))
        else:
            k = int(rng.uniform(10, 30) // 5)
            for j in range(1, k + 1):
                if t + 5 * (j - 1) < duration:
                    pts.append((round(t + 5 * (j - 1), 1), round(cur + (target - cur) * j / k, 1)))
        cur = target


def serve(args):
    life = Lifecycle(args.phase_log)
    life.catch_signals()
    life.phase("start")
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    life.phase("load")
    _, ctor, batch, _ = MODELS[args.serve_model]
    model = ctor().eval()
    x0 = batch()[0][:args.request_batch]
    spec = ({"dtype": "f", "n": x0.numel()} if x0.is_floating_point()
            else {"dtype": "q", "n": x0.numel(), "vocab": int(x0.max()) + 1})
    dtype, shape = x0.dtype, tuple(x0.shape[1:])
    with torch.no_grad():
        for _ in range(5):
            model(x0)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", args.serve_port))
    srv.listen(64)
    port = srv.getsockname()[1]
    sched = rate_schedule(args.seed, args.duration, args.rate_low, args.rate_high)
    t0 = time.time() + 1.0
    client = subprocess.Popen([PY, os.path.abspath(__file__), "_client", str(port), f"{t0:.6f}", json.dumps(sched),
                               json.dumps(spec), str(args.serve_conns), str(args.seed)])
    life.cleanups.append(lambda: (client.terminate(), client.wait(10)))
    life.cleanups.append(srv.close)
    work = queue.Queue()
    lock = threading.Lock()
    stats = {"done": 0, "lat": 0.0}
    inflight = {}  # id -> scheduled time of requests received and not yet answered

    def reader(c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            try:
                hdr = _recv_exact(c, REQ_HDR.size)
                if hdr is None:
                    return
                ts, n = REQ_HDR.unpack(hdr)
                payload = _recv_exact(c, n)
            except OSError:
                return
            if payload is None:
                return
            rid = object()
            with lock:
                inflight[rid] = ts
            work.put((c, rid, ts, payload))

    def acceptor():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=reader, args=(c,), daemon=True).start()

    def ticker():  # the per-second step log and the serve-rate phase events
        log = open(args.step_log, "a", buffering=1) if args.step_log else None
        k, nxt = 0, time.time() + 1.0
        while True:
            while k < len(sched) and time.time() >= t0 + sched[k][0]:
                life.phase(f"serve-rate={sched[k][1]:g}")
                k += 1
            wake = min(nxt, t0 + sched[k][0]) if k < len(sched) else nxt
            time.sleep(max(0.0, wake - time.time()))
            if time.time() >= nxt:
                now = time.time()
                with lock:
                    done, lat = stats["done"], stats["lat"]
                    stats["done"], stats["lat"] = 0, 0.0
                    oldest = min(inflight.values(), default=now)
                mean = lat / done if done else now - oldest  # nothing answered: the oldest wait so far
                if log:
                    log.write(f"{now:.3f} {done} {mean:.4f}\n")
                nxt += 1.0

    threading.Thread(target=acceptor, daemon=True).start()
    threading.Thread(target=ticker, daemon=True).start()
    deadline = time.time() + args.duration
    try:
        with torch.no_grad():
            while time.time() < deadline:
                try:
                    reqs = [work.get(timeout=0.2)]
                except queue.Empty:
                    if client.poll() is not None:
                        raise RuntimeError(f"the load client exited ({client.returncode})")
                    continue
                while len(reqs) < args.max_batch:  # dynamic batching of what is already queued
                    try:
                        reqs.append(work.get_nowait())
                    except queue.Empty:
                        break
                xs = [torch.frombuffer(bytearray(p), dtype=dtype).view(-1, *shape) for _, _, _, p in reqs]
                out = model(torch.cat(xs))
                off = 0
                for (c, rid, ts, _), x in zip(reqs, xs):
                    o = out[off:off + x.shape[0]].contiguous().numpy().tobytes()
                    off += x.shape[0]
                    try:
                        c.sendall(REP_HDR.pack(len(o)) + o)
                    except OSError:
                        pass
                    with lock:
                        inflight.pop(rid, None)
                        stats["done"] += 1
                        stats["lat"] += time.time() - ts
    finally:
        life.finish()
    return 0


# ---------------------------------------------------------------- launcher of local / netns ranks
def launch(args, argv):
    """Start the ranks as child processes (torchrun-like: env RANK, LOCAL_RANK, WORLD_SIZE,
    MASTER_ADDR, MASTER_PORT; command line --rank R), all in this process group; with --netns ID,
    create the veth pair (faults.py netns-up), run rank 0 here on end A and ranks 1.. in the
    namespace on end B, and remove the pair at the end. SIGTERM/SIGINT: forwarded to the ranks."""
    netns = None
    addr, ifn = [args.master_addr] * args.ddp, [args.ifname] * args.ddp
    if args.netns:
        r = subprocess.run([PY, os.path.join(HERE, "faults.py"), "netns-up", args.netns, "--octet", str(args.octet)],
                           capture_output=True, text=True)
        if r.returncode:
            print((r.stderr.strip() or "workloads.py: netns-up failed").splitlines()[-1], file=sys.stderr)
            return 1
        env = dict(kv.split("=", 1) for kv in r.stdout.split())
        netns = env["NETNS"]
        print(f"workloads.py: {r.stdout.strip()}", file=sys.stderr, flush=True)
        addr = [env["ADDR_A"]] * args.ddp
        ifn = [env["DEV_A"]] + [env["DEV_B"]] * (args.ddp - 1)
    with socket.socket() as s:
        s.bind((addr[0], 0))
        port = s.getsockname()[1]
    procs, stopping = [], [False]

    def forward(signum, _):
        stopping[0] = True
        for p in procs:
            if p.poll() is None:
                try:
                    p.send_signal(signum)
                except OSError:
                    pass
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    rc = 0
    try:
        for rank in range(args.ddp):
            cmd = [PY, os.path.abspath(__file__), *argv, "--rank", str(rank), "--master-addr", addr[rank],
                   "--master-port", str(port), "--ifname", ifn[rank]]
            if netns and rank > 0:
                cmd = ["ip", "netns", "exec", netns] + cmd
            env = {**os.environ, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(args.ddp),
                   "MASTER_ADDR": addr[rank], "MASTER_PORT": str(port)}
            procs.append(subprocess.Popen(cmd, env=env, preexec_fn=_pdeathsig))
        while any(p.poll() is None for p in procs):
            bad = [p for p in procs if p.poll() not in (None, 0)]
            if bad and not stopping[0]:
                print(f"workloads.py: a rank exited with status {bad[0].returncode}; stopping the others",
                      file=sys.stderr)
                rc = 1
                forward(signal.SIGTERM, None)
            time.sleep(0.2)
        if not stopping[0] and any(p.returncode != 0 for p in procs):
            rc = 1
    finally:
        end = time.time() + 15
        for p in procs:
            try:
                p.wait(max(0.1, end - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if netns:
            subprocess.run([PY, os.path.join(HERE, "faults.py"), "netns-down", args.netns], capture_output=True)
    return rc


# ---------------------------------------------------------------- command line
class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"workloads.py: {message}\n")


def _argv_without(argv, opts):
    """argv minus the options in opts (each with its value, as '--opt v' or '--opt=v')."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in opts:
            skip = True
        elif not any(a.startswith(o + "=") for o in opts):
            out.append(a)
    return out


def main():
    p = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="one of: " + ", ".join([*MODELS, *WORKLOADS]))
    p.add_argument("--duration", type=float, default=120.0, help="seconds of training / serving")
    p.add_argument("--ddp", type=int, default=1, help="world size (DDP over gloo when > 1)")
    p.add_argument("--rank", type=int, default=-1, help="run only this rank (ranks in other netns)")
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=0, help="0: pick a free one (all ranks local)")
    p.add_argument("--ifname", default="", help="GLOO_SOCKET_IFNAME for this rank")
    p.add_argument("--netns", default="", metavar="ID",
                   help="with --ddp N: veth pair reveal-scen-ID (rvsIDa here, rvsIDb in the netns); rank 0 "
                        "here, ranks 1.. in the namespace; the pair is removed at the end")
    p.add_argument("--octet", type=int, default=0, help="with --netns: addresses 10.201.OCTET.1/.2")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads per rank (0: 1 under DDP, for dataloader_train and infer_server, else 2)")
    p.add_argument("--step-log", default="")
    p.add_argument("--phase-log", default="", help="append '<unix_time> <phase>' lines")
    p.add_argument("--workdir", default="/var/tmp/reveal-workloads",
                   help="dataset and default checkpoint directory (on disk, not tmpfs)")
    p.add_argument("--checkpoint-every", type=float, default=None, metavar="S",
                   help="torch.save model+optimizer every S s (0: never; default: the workload's)")
    p.add_argument("--checkpoint-dir", default="", help="checkpoints go to DIR/ckpt-<model>-<pid>/ (default --workdir)")
    p.add_argument("--keep-checkpoints", action="store_true", help="do not remove the checkpoint directory at exit")
    p.add_argument("--eval-every", type=float, default=None, metavar="S",
                   help="no_grad pass over held-out batches every S s (0: never; default: the workload's)")
    p.add_argument("--eval-batches", type=int, default=20, help="held-out batches per eval pass")
    p.add_argument("--dataset-mb", type=int, default=384, help="dataloader_train: dataset size")
    p.add_argument("--loader-workers", type=int, default=2, help="dataloader_train: DataLoader workers per rank")
    p.add_argument("--serve-model", default="resnet18", help="infer_server: the served model (not dlrm)")
    p.add_argument("--request-batch", type=int, default=4, help="infer_server: samples per request")
    p.add_argument("--max-batch", type=int, default=8, help="infer_server: requests merged per forward pass")
    p.add_argument("--rate-low", type=float, default=2.0, help="infer_server: lowest request rate, req/s")
    p.add_argument("--rate-high", type=float, default=30.0, help="infer_server: highest request rate, req/s")
    p.add_argument("--serve-conns", type=int, default=4, help="infer_server: client connections")
    p.add_argument("--serve-port", type=int, default=0, help="infer_server: port on 127.0.0.1 (0: a free one)")
    p.add_argument("--seed", type=int, default=0, help="infer_server: seed of the rate schedule and arrivals")
    p.add_argument("--list", action="store_true", help="print the workloads (name, family, shape) and exit")
    args = p.parse_args()
    if args.list:
        for k, (fam, *_rest) in MODELS.items():
            print(f"{k}\t{fam}\t{SHAPES[k]}")
        for k, (fam, shape, *_rest) in WORKLOADS.items():
            print(f"{k}\t{fam}\t{shape}")
        return 0
    err = lambda m: p.error(m)  # noqa: E731
    if not args.model:
        err("--model is required (workloads.py --list)")
    if args.model in MODELS:
        args.base, defaults = args.model, {}
    elif args.model in WORKLOADS:
        args.base, defaults = WORKLOADS[args.model][2], WORKLOADS[args.model][3]
    else:
        err(f"unknown model {args.model!r} (known: {', '.join([*MODELS, *WORKLOADS])})")
    for opt in ("checkpoint_every", "eval_every"):
        if getattr(args, opt) is None:
            setattr(args, opt, defaults.get(opt, 0.0))
    if args.duration <= 0:
        err("--duration must be > 0")
    if args.ddp < 1:
        err("--ddp must be >= 1")
    if args.threads < 0:
        err("--threads must be >= 0")
    if args.checkpoint_every < 0 or args.eval_every < 0:
        err("--checkpoint-every and --eval-every must be >= 0")
    if args.eval_batches < 1:
        err("--eval-batches must be >= 1")
    if args.rank >= args.ddp or (args.rank >= 0 and args.ddp < 2):
        err(f"--rank {args.rank} needs --ddp N with N > rank")
    if args.netns:
        if not (args.netns.isalnum() and len(args.netns) <= 11):
            err("--netns ID: letters and digits, at most 11")
        if args.ddp < 2:
            err("--netns needs --ddp 2 or more")
        if not 0 <= args.octet <= 255:
            err("--octet must be 0..255")
    if args.base == "_server":
        if args.ddp > 1:
            err("infer_server runs one server process (no --ddp)")
        if args.checkpoint_every or args.eval_every:
            err("infer_server has no --checkpoint-every / --eval-every")
        if args.serve_model not in MODELS or args.serve_model == "dlrm":
            err(f"--serve-model: one of {', '.join(m for m in MODELS if m != 'dlrm')}")
        if not 0 < args.rate_low <= args.rate_high:
            err("need 0 < --rate-low <= --rate-high")
        if args.request_batch < 1 or args.max_batch < 1 or args.serve_conns < 1:
            err("--request-batch, --max-batch and --serve-conns must be >= 1")
        if not 0 <= args.serve_port <= 65535:
            err("--serve-port must be 0..65535")
    if args.base == "_loader":
        if args.dataset_mb < 16:
            err("--dataset-mb must be >= 16")
        if args.loader_workers < 0:
            err("--loader-workers must be >= 0")
    if args.base == "_loader" or args.checkpoint_every > 0:
        d = args.workdir if args.base == "_loader" else (args.checkpoint_dir or args.workdir)
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as e:
            err(f"cannot create {d}: {e.strerror}")
        if not os.access(d, os.W_OK):
            err(f"{d} is not writable")
    if args.threads <= 0:
        args.threads = defaults.get("threads", 1 if args.ddp > 1 else 2)
    if args.step_log and os.path.exists(args.step_log) and args.rank <= 0:
        os.remove(args.step_log)
    if args.base == "_server":
        return serve(args)
    if args.ddp > 1 and args.rank >= 0:
        if args.master_port == 0:
            err("--rank needs --master-port")
        return run_rank(args.rank, args)
    if args.ddp > 1:
        if args.netns and os.geteuid() != 0:
            err("--netns needs root")
        return launch(args, _argv_without(sys.argv[1:], {"--netns", "--octet", "--rank", "--master-addr",
                                                          "--master-port", "--ifname"}))
    return run_rank(0, args)


if __name__ == "__main__":
    sys.exit(main())
