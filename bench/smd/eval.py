#!/usr/bin/python3
"""SMD (Server Machine Dataset) benchmark: reveal vs scikit-learn IsolationForest and PCA.

Run with Debian's python3 (numpy, scikit-learn from scripts/setup.sh):

    /usr/bin/python3 bench/smd/eval.py [--machines machine-1-6,...] [--out bench/smd/results]

For each machine whose arrays are in $SMD (default /work/shared/datasets/SMD, found through
its MANIFEST.tsv):
  1. `reveal import smd <m>_train.pkl` and `<m>_test.pkl` (1 s spacing; the test store starts
     one interval after the train store ends, as in the dataset).
  2. `reveal detect TEST --baseline TRAIN --json --window-z --settle 0s`: the reference is fitted
     on the train half only.
  3. Point scores, causal: point t gets the score of the window that ENDS at t (window length L
     covers rows t-L+1..t), i.e. only data up to t; the first L-1 points (no such window) get the
     method's lowest score. Same mapping for the baselines.
  4. Metrics against `<m>_test_label.pkl` (read with numpy/pickle): point-wise best-F1 WITHOUT
     point-adjust (the threshold is chosen with the labels: an oracle, an upper bound for any
     fixed threshold, as in the published numbers) and ROC AUC.
  5. Root cause: HitRate@100 % and @150 % against interpretation_label/<m>.txt (lines
     "start-end:d1,d2,..", 0-based [start, end) test rows, 1-based dims, see SMD/SOURCE.md).
     OmniAnomaly (Su et al., KDD 2019, §4.4/§5.5): HitRate@P% = Hit@⌊P%·|GT|⌋ / |GT|, where
     Hit@k counts ground-truth dims among the k dims ranked first. Computed for every labelled
     test point with root-cause dims (not only detected ones, as TranAD's hit_att does; TranAD
     rounds P%·|GT| where we floor, as the OmniAnomaly paper writes) and averaged over points.
     Ties in the ranking at the cut are split in expectation (a uniformly random order among
     equal scores), so constant or zero attributions earn chance level, not a lucky order.
     reveal ranks dims by |channel_z| of the window ending at t; PCA by that window's
     per-channel squared reconstruction error; IsolationForest has no per-channel attribution.

Baselines, on the same windows (L consecutive rows of the 38 raw, already min-max-scaled
columns, flattened to L·38 features), fitted on the train windows only:
  - IsolationForest(n_estimators=100, max_samples=256, random_state=0); score = −score_samples.
  - PCA(n_components=0.95 explained variance); score = squared reconstruction error.
No hyperparameter is chosen with labels.
"""
import argparse
import json
import os
import pickle
import subprocess
import sys
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.ensemble import IsolationForest
from sklearn.metrics import roc_auc_score

PUBLISHED = [  # non-PA best-F1 on all 28 SMD machines (NPSR, NeurIPS 2023; docs/DESIGN.md §5)
    ("NPSR", 0.535), ("GDN", 0.529), ("OmniAnomaly", 0.474), ("USAD", 0.426)]


def load_pkl(path):
    with open(path, "rb") as f:
        return np.asarray(pickle.load(f))


def manifest_machines(smd):
    ms = set()
    with open(os.path.join(smd, "MANIFEST.tsv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("file\t"):
                continue
            name = os.path.basename(line.split("\t")[0])
            if name.endswith("_test_label.pkl"):
                ms.add(name[: -len("_test_label.pkl")])
    return sorted(ms)


def best_f1(scores, labels):
    """Best point-wise F1 over every threshold 'score >= s' (no point-adjust)."""
    order = np.argsort(-scores, kind="mergesort")
    s, y = scores[order], labels[order].astype(np.int64)
    tp = np.cumsum(y)
    fp = np.cumsum(1 - y)
    last = np.r_[np.nonzero(np.diff(s))[0], len(s) - 1]  # last index of each distinct score
    tp, fp = tp[last], fp[last]
    P = y.sum()
    prec = tp / np.maximum(tp + fp, 1)
    rec = tp / max(P, 1)
    f1 = np.where(prec + rec > 0, 2 * prec * rec / np.maximum(prec + rec, 1e-300), 0.0)
    i = int(np.argmax(f1))
    return float(f1[i]), float(prec[i]), float(rec[i]), float(s[last[i]])


def hit_rate(attr, gt_dims, p):
    """Expected Hit@⌊p·|GT|⌋/|GT| for one point; attr: score per dim (higher = more blamed)."""
    k = int(np.floor(p * len(gt_dims) + 1e-9))
    if k <= 0:
        return 0.0
    a = np.nan_to_num(np.asarray(attr, dtype=float), nan=0.0)
    k = min(k, len(a))
    thr = np.sort(a)[::-1][k - 1]
    above = a > thr
    tie = a == thr
    is_gt = np.zeros(len(a), bool)
    is_gt[list(gt_dims)] = True
    hits = float(np.sum(above & is_gt))
    need = k - int(above.sum())
    if need > 0:
        hits += need * np.sum(tie & is_gt) / np.sum(tie)
    return hits / len(gt_dims)


def interpretation(path, n):
    """Per test row: set of 0-based root-cause dims (union of the segments covering it)."""
    dims = [set() for _ in range(n)]
    segs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rng, ds = line.split(":")
            a, b = (int(x) for x in rng.split("-"))
            d = {int(x) - 1 for x in ds.split(",") if x}
            segs.append((a, b, sorted(d)))
            for t in range(a, min(b, n)):
                dims[t] |= d
    return dims, segs


def rc_hitrates(attr_rows, dims, ps=(1.0, 1.5)):
    """attr_rows(t) -> per-dim attribution at test row t (or None). Mean over labelled rows."""
    out = {}
    rows = [t for t in range(len(dims)) if dims[t]]
    for p in ps:
        hs = []
        for t in rows:
            a = attr_rows(t)
            if a is not None:
                hs.append(hit_rate(a, sorted(dims[t]), p))
        out[f"hitrate@{int(p * 100)}"] = float(np.mean(hs)) if hs else None
    out["rc_points"] = len(rows)
    return out


def metrics(point_scores, labels):
    f1, p, r, thr = best_f1(point_scores, labels)
    return {"best_f1": f1, "precision": p, "recall": r, "threshold": thr,
            "roc_auc": float(roc_auc_score(labels, point_scores))}


def windows_of(x, L):
    """Row t-L+1..t flattened, for t = L-1..n-1 (window k ends at row k+L-1)."""
    n, d = x.shape
    idx = np.arange(L)[None, :] + np.arange(n - L + 1)[:, None]
    return x[idx].reshape(n - L + 1, L * d)


def to_points(win_scores, n, L):
    """Causal: point t gets the window ending at t; the first L-1 points the lowest score."""
    out = np.full(n, np.min(win_scores), dtype=float)
    out[L - 1:] = win_scores
    return out


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return r


def eval_reveal(reveal, smd, m, work, n, L, extra=()):
    tr, te = os.path.join(work, f"{m}_train.db"), os.path.join(work, f"{m}_test.db")
    ntrain = load_pkl(os.path.join(smd, "processed", f"{m}_train.pkl")).shape[0]
    t0 = time.time()
    run([reveal, "import", "smd", os.path.join(smd, "processed", f"{m}_train.pkl"), "-o", tr,
         "--start", "2020-01-01T00:00:00Z"])
    # The test half follows the train half in time: start it one 1 s interval after the last train row.
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1577836800 + ntrain))
    run([reveal, "import", "smd", os.path.join(smd, "processed", f"{m}_test.pkl"), "-o", te, "--start", start])
    t1 = time.time()
    r = run([reveal, "detect", te, "--baseline", tr, "--json", "--window-z", "--settle", "0s",
             "--window", str(L), *extra])
    t2 = time.time()
    j = json.loads(r.stdout)
    w = j["windows"]
    dt = j["run"]["interval_s"] or 1.0
    end_row = np.rint(np.asarray(w["end_s"], float) / dt).astype(int)
    fused = np.asarray([np.nan if v is None else v for v in w["fused"]], float)
    fused = np.nan_to_num(fused, nan=0.0)
    pts = np.full(n, np.min(fused))
    pts[end_row] = fused  # causal: the window that ends at row t scores t
    chan_idx = [int(c.split("col")[-1]) for c in w["channels"]]
    Z = np.zeros((n, 38))
    have = np.zeros(n, bool)
    cz = np.abs(np.asarray([[np.nan if v is None else v for v in row] for row in w["channel_z"]], float))
    Z[np.ix_(end_row, chan_idx)] = np.nan_to_num(cz, nan=0.0)
    have[end_row] = True
    # The two detectors' calibrated traces alone (diagnostic: which one carries the fused score).
    per_det = {}
    for d in w["detectors"]:
        c = np.nan_to_num(np.asarray([np.nan if v is None else v for v in d["calibrated"]], float), nan=-1e9)
        dp = np.full(n, np.min(c))
        dp[end_row] = c
        per_det[d["name"]] = dp
    info = {"import_s": round(t1 - t0, 2), "detect_s": round(t2 - t1, 2), "windows": len(fused),
            "channels_scored": j["channels"]["scored"], "channels_model": j["channels"]["model"],
            "incidents": len(j["incidents"]),
            "anomalous_windows": int(np.sum(fused >= 1.0)), "first_window_end_row": int(end_row[0])}
    return pts, (lambda t: Z[t] if have[t] else None), info, per_det


def eval_baselines(xtr, xte, L, seed):
    out = {}
    wtr, wte = windows_of(xtr, L), windows_of(xte, L)
    n = xte.shape[0]
    t0 = time.time()
    iso = IsolationForest(n_estimators=100, max_samples=256, random_state=seed).fit(wtr)
    s_if = -iso.score_samples(wte)
    out["iforest"] = (to_points(s_if, n, L), lambda t: None, {"fit_score_s": round(time.time() - t0, 2)})
    t0 = time.time()
    pca = PCA(n_components=0.95, svd_solver="full").fit(wtr)
    rec = pca.inverse_transform(pca.transform(wte))
    err = (wte - rec) ** 2                                   # windows × (L·38), row-major by time
    per_dim = err.reshape(len(wte), L, xte.shape[1]).sum(axis=1)
    s_pca = err.sum(axis=1)
    P = np.zeros((n, xte.shape[1]))
    P[L - 1:] = per_dim
    out["pca"] = (to_points(s_pca, n, L), (lambda t: P[t] if t >= L - 1 else None),
                  {"fit_score_s": round(time.time() - t0, 2), "n_components": int(pca.n_components_)})
    return out


def fmt(v, nd=3):
    return "n/a" if v is None else f"{v:.{nd}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smd", default=os.environ.get("SMD", "/work/shared/datasets/SMD"))
    ap.add_argument("--reveal", default=os.environ.get("REVEAL", "build/reveal"))
    ap.add_argument("--machines", default="", help="comma-separated (default: every machine in MANIFEST.tsv)")
    ap.add_argument("--work", default="/tmp/reveal-smd", help="folder for the imported stores")
    ap.add_argument("--out", default="bench/smd/results", help="writes <out>.json and <out>.md")
    ap.add_argument("--window", type=int, default=3, help="window length in rows (reveal's default 3)")
    ap.add_argument("--seed", type=int, default=0, help="IsolationForest random_state")
    ap.add_argument("--detect-arg", action="append", default=[],
                    help="extra argument for `reveal detect` (repeatable), e.g. --detect-arg=--pca=fuse")
    a = ap.parse_args()
    machines = [m for m in a.machines.split(",") if m] or manifest_machines(a.smd)
    os.makedirs(a.work, exist_ok=True)
    L = a.window
    results = {"dataset": a.smd, "window": L, "reveal": a.reveal, "machines": {}}
    for m in machines:
        xtr = load_pkl(os.path.join(a.smd, "processed", f"{m}_train.pkl")).astype(np.float64)
        xte = load_pkl(os.path.join(a.smd, "processed", f"{m}_test.pkl")).astype(np.float64)
        y = load_pkl(os.path.join(a.smd, "processed", f"{m}_test_label.pkl")).astype(int)
        assert y.shape[0] == xte.shape[0] and set(np.unique(y)) <= {0, 1}
        dims, segs = interpretation(os.path.join(a.smd, "interpretation_label", f"{m}.txt"), len(y))
        n = len(y)
        row = {"test_rows": n, "anomalous_points": int(y.sum()), "rc_segments": len(segs)}
        pts, attr, info, per_det = eval_reveal(a.reveal, a.smd, m, a.work, n, L, a.detect_arg)
        row["reveal"] = {**metrics(pts, y), **rc_hitrates(attr, dims), **info}
        row["reveal_detectors"] = {k: metrics(v, y) for k, v in per_det.items()}
        for name, (p, at, inf) in eval_baselines(xtr, xte, L, a.seed).items():
            row[name] = {**metrics(p, y), **rc_hitrates(at, dims), **inf}
        results["machines"][m] = row
        print(f"{m}: " + "  ".join(f"{k} F1 {row[k]['best_f1']:.3f} AUC {row[k]['roc_auc']:.3f} "
                                    f"HR@100 {fmt(row[k]['hitrate@100'])}" for k in ("reveal", "iforest", "pca")),
              file=sys.stderr, flush=True)
    keys = ["best_f1", "roc_auc", "hitrate@100", "hitrate@150"]
    mean = {}
    for meth in ("reveal", "iforest", "pca"):
        mean[meth] = {}
        for k in keys:
            v = [r[meth][k] for r in results["machines"].values() if r[meth][k] is not None]
            mean[meth][k] = float(np.mean(v)) if v else None
    results["mean"] = mean
    results["published_non_pa_best_f1_all_28"] = dict(PUBLISHED)
    lines = ["| machine | anom. % | reveal F1 | IF F1 | PCA F1 | reveal AUC | IF AUC | PCA AUC | "
             "reveal HR@100 | PCA HR@100 | reveal HR@150 | PCA HR@150 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    def line(name, pct, r):
        return (f"| {name} | {pct} | " + " | ".join(fmt(r[m]['best_f1']) for m in ("reveal", "iforest", "pca")) + " | "
                + " | ".join(fmt(r[m]['roc_auc']) for m in ("reveal", "iforest", "pca")) + " | "
                + " | ".join(fmt(r[m][h]) for h in ("hitrate@100", "hitrate@150") for m in ("reveal", "pca")) + " |")
    for m, r in results["machines"].items():
        lines.append(line(m, f"{100 * r['anomalous_points'] / r['test_rows']:.1f}", r))
    lines.append(line(f"**mean ({len(results['machines'])})**", "", mean))
    lines += ["", "reveal's two detectors alone (calibrated trace, same point mapping): best-F1 / ROC AUC", "",
              "| machine | robust_z | iforest |", "|---|---|---|"]
    for m, r in results["machines"].items():
        d = r["reveal_detectors"]
        lines.append(f"| {m} | " + " | ".join(f"{d[k]['best_f1']:.3f} / {d[k]['roc_auc']:.3f}" for k in ("robust_z", "iforest")) + " |")
    dm = {k: [np.mean([r["reveal_detectors"][k][x] for r in results["machines"].values()]) for x in ("best_f1", "roc_auc")]
          for k in ("robust_z", "iforest")}
    results["mean"]["reveal_detectors"] = {k: {"best_f1": float(v[0]), "roc_auc": float(v[1])} for k, v in dm.items()}
    lines.append("| **mean** | " + " | ".join(f"{dm[k][0]:.3f} / {dm[k][1]:.3f}" for k in ("robust_z", "iforest")) + " |")
    lines.append("")
    lines.append("Published non-PA best-F1, mean of all 28 machines (NPSR paper, NeurIPS 2023): "
                 + ", ".join(f"{k} {v:.3f}" for k, v in PUBLISHED) + ".")
    with open(a.out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
