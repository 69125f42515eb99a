#!/usr/bin/python3
"""Scores `reveal detect --json` on the labelled runs of bench/scenarios/run.sh.

  score.py OUT/manifest.tsv [more manifests] [--reveal build/reveal] [--baseline clean.db ... | --split S]
           [--detect-arg=--flag=value ...] [--md scores.md] [--json scores.json] [--reuse]

--split unseen is the generalisation split: every run is scored against the clean runs of the
other models (fitted on workloads it never saw; clean runs against the other clean runs).
--split seen: against the other clean runs of its own model (runs without one are skipped).

Per fault kind and overall (docs/DESIGN.md §5; thresholds are never tuned on these labels):
  event precision / recall / F1  an incident is a hit if it overlaps a labelled interval, an
                                 interval is caught if any incident overlaps it; every incident of
                                 a clean run, and every non-overlapping one, is false
  TTD median / p90               first overlapping incident's start − fault start (caught faults)
  false incidents per clean hour over the clean runs' recorded time
  subsystem top-1                caught faults whose first overlapping incident names the true one
  point-wise best-F1 (no PA)     over windows' fused scores, a window labelled 1 when it overlaps
                                 the fault; best over all cut-offs, and F1 at the detector's own
                                 threshold (1) for reference
Per-kind point-wise figures pool that kind's runs with all clean runs.
A run whose workload died during its fault (status workload-died: an MTU black hole breaks
DDP's connection) is scored like the others and marked in the table: the fault happened.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys


def die(msg):
    print(f"score.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_manifest(path):
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        if head[:4] != ["name", "model", "ddp", "fault"]:
            die(f"{path}: not a run.sh manifest")
        for line in f:
            if line.strip():
                r = dict(zip(head, line.rstrip("\n").split("\t")))
                rows.append(r)
    return rows


def detect(reveal, db, baselines, reuse, tag="", extra=()):
    out = os.path.join(os.path.dirname(db), f"report{tag}.json")
    if reuse and os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(db):
        return json.load(open(out))
    cmd = [reveal, "detect", db, "--json", *extra]
    for b in baselines:
        cmd += ["--baseline", b]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"score.py: detect failed on {db}: {r.stderr.strip()[:300]}", file=sys.stderr)
        return None
    with open(out, "w") as f:
        f.write(r.stdout)
    return json.loads(r.stdout)


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def f1(p, r):
    return 2 * p * r / (p + r) if p is not None and r is not None and p + r > 0 else (0.0 if p is not None and r is not None else None)


def best_f1(points):
    """points: [(score, label)]; best F1 over every cut-off 'score >= c' (no point adjust)."""
    pos = sum(l for _, l in points)
    if pos == 0:
        return None
    pts = sorted(points, key=lambda x: -x[0])
    tp = fp = 0
    best = 0.0
    i = 0
    while i < len(pts):
        s = pts[i][0]
        while i < len(pts) and pts[i][0] == s:  # ties enter together
            tp += pts[i][1]
            fp += 1 - pts[i][1]
            i += 1
        p, r = tp / (tp + fp), tp / pos
        best = max(best, f1(p, r))
    return best


def f1_at(points, cut):
    pos = sum(l for _, l in points)
    tp = sum(1 for s, l in points if s >= cut and l)
    fp = sum(1 for s, l in points if s >= cut and not l)
    if pos == 0:
        return None
    return f1(tp / (tp + fp) if tp + fp else 0.0, tp / pos)


def score_run(row, rep):
    clean = row["fault"] == "none"
    f0 = None if clean else int(row["fault_start_unix_ns"])
    f1_ = None if clean else int(row["fault_end_unix_ns"])
    incs = rep["incidents"]
    hits = [] if clean else [i for i in incs if i["start_unix_ns"] <= f1_ and i["end_unix_ns"] >= f0]
    res = {"name": row["name"], "model": row["model"], "fault": row["fault"], "subsystem": row["subsystem"],
           "incidents": len(incs), "hits": len(hits), "false": len(incs) - len(hits),
           "caught": None if clean else bool(hits),
           "hours": (rep["run"]["end_unix_ns"] - rep["run"]["start_unix_ns"]) / 3.6e12,
           "incident_list": [(i["start_s"], i["end_s"], i["subsystem"], round(i["confidence"], 2)) for i in incs],
           # false incidents whose symptom is hypervisor steal: a real condition of the VM's host
           # that no label covers (the suite injects no steal); still counted as false
           "false_by_steal": sum(1 for i in incs if i not in hits and (i.get("symptom") or {}).get(
               "channel", "").startswith("derived:cpu_steal_pct"))}
    if hits:
        first = min(hits, key=lambda i: i["start_unix_ns"])
        res["ttd_s"] = (first["start_unix_ns"] - f0) / 1e9
        res["detected_subsystem"] = first["subsystem"]
        res["subsystem_ok"] = first["subsystem"] == row["subsystem"]
    w, t0 = rep["windows"], rep["run"]["start_unix_ns"]
    pts = []
    for k, s in enumerate(w["start_s"]):
        a, b = t0 + s * 1e9, t0 + w["end_s"][k] * 1e9
        lab = 0 if clean else int(a <= f1_ and b >= f0)
        sc = w["fused"][k]
        pts.append((sc if sc is not None else -math.inf, lab))
    res["_points"] = pts
    return res


def aggregate(runs, clean_runs):
    faulty = [r for r in runs if r["fault"] != "none"]
    allr = runs + [c for c in clean_runs if c not in runs]
    n_inc = sum(r["incidents"] for r in allr)
    n_hit = sum(r["hits"] for r in allr)
    caught = [r for r in faulty if r["caught"]]
    prec = n_hit / n_inc if n_inc else None
    rec = len(caught) / len(faulty) if faulty else None
    ttd = [r["ttd_s"] for r in caught]
    clean_h = sum(c["hours"] for c in clean_runs)
    clean_false = sum(c["incidents"] for c in clean_runs)
    pts = [p for r in allr for p in r["_points"]]
    return {
        "runs": len(allr), "faults": len(faulty), "caught": len(caught), "incidents": n_inc, "hits": n_hit,
        "precision": prec, "recall": rec, "f1": f1(prec, rec) if prec is not None and rec is not None else None,
        "ttd_median_s": statistics.median(ttd) if ttd else None, "ttd_p90_s": pct(ttd, 0.9),
        "false_per_clean_hour": clean_false / clean_h if clean_h else None,
        "subsystem_top1": (sum(r["subsystem_ok"] for r in caught) / len(caught)) if caught else None,
        "pointwise_best_f1": best_f1(pts), "pointwise_f1_at_threshold": f1_at(pts, 1.0),
        "windows": len(pts), "fault_windows": sum(l for _, l in pts),
    }


def fmt(x, d=2):
    return "–" if x is None else (f"{x:.{d}f}" if isinstance(x, float) else str(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--reveal", default=os.environ.get("REVEAL", "build/reveal"))
    ap.add_argument("--baseline", action="append", default=[], help="baseline recording(s) for detect")
    ap.add_argument("--split", choices=["seen", "unseen"], default="",
                    help="baseline mode with baselines picked per run from the manifests' clean runs: 'seen' = the "
                         "other clean runs of its own model, 'unseen' = the clean runs of every other model "
                         "(generalisation: workloads never seen in fitting); runs without one are skipped")
    ap.add_argument("--detect-arg", action="append", default=[],
                    help="extra argument for `reveal detect` (repeatable), e.g. --detect-arg=--pca=fuse")
    ap.add_argument("--md", default="", help="markdown table (default: next to the first manifest)")
    ap.add_argument("--json", default="", help="JSON results (default: next to the first manifest)")
    ap.add_argument("--reuse", action="store_true", help="reuse report*.json newer than run.db")
    a = ap.parse_args()
    if not (os.path.isfile(a.reveal) and os.access(a.reveal, os.X_OK)):
        die(f"reveal binary not found or not executable: {a.reveal}")
    for b in a.baseline:
        if not os.path.exists(b):
            die(f"no such baseline: {b}")
    rows = []
    for m in a.manifests:
        if not os.path.isfile(m):
            die(f"no such manifest: {m}")
        rows += read_manifest(m)
    if a.split and a.baseline:
        die("--split picks the baselines itself; give no --baseline")
    base = os.path.dirname(os.path.abspath(a.manifests[0]))
    suffix = f"-{a.split}" if a.split else "-baseline" if a.baseline else ""
    md_path = a.md or os.path.join(base, f"scores{suffix}.md")
    js_path = a.json or os.path.join(base, f"scores{suffix}.json")

    runs, skipped = [], []
    for r in rows:
        db = os.path.join(r["dir"], "run.db")
        # A fault that killed its job (an MTU black hole ends DDP's connection) was still
        # injected and recorded in full: it is scored, the death noted.
        died = r.get("status") == "workload-died" and r.get("fault_start_unix_ns") not in (None, "", "0")
        if (r.get("status") != "ok" and not died) or not os.path.exists(db):
            skipped.append((r["name"], r.get("status", "?")))
            continue
        baselines = a.baseline
        if a.split:
            baselines = [os.path.join(c["dir"], "run.db") for c in rows
                         if c["fault"] == "none" and c.get("status") == "ok" and c["name"] != r["name"]
                         and (c["model"] == r["model"]) == (a.split == "seen")]
            if not baselines:
                skipped.append((r["name"], f"no {a.split} baseline"))
                continue
        rep = detect(a.reveal, db, baselines, a.reuse, suffix, a.detect_arg)
        if rep is None:
            skipped.append((r["name"], "detect-failed"))
            continue
        runs.append(score_run(r, rep))
        runs[-1]["workload_died"] = died
    if not runs:
        die("no scorable runs")
    clean = [r for r in runs if r["fault"] == "none"]
    kinds = sorted({r["fault"] for r in runs if r["fault"] != "none"})
    per_kind = {k: aggregate([r for r in runs if r["fault"] == k], clean) for k in kinds}
    overall = aggregate(runs, clean)

    cols = ["runs", "faults", "caught", "incidents", "hits", "precision", "recall", "f1", "ttd_median_s",
            "ttd_p90_s", "false_per_clean_hour", "subsystem_top1", "pointwise_best_f1", "pointwise_f1_at_threshold"]
    heads = ["runs", "faults", "caught", "incidents", "hits", "event P", "event R", "event F1", "TTD med s",
             "TTD p90 s", "false/clean h", "subsys top-1", "pw best-F1", "pw F1@1"]
    title = {"seen": " (baselines: other clean runs of the same model)",
             "unseen": " (baselines: clean runs of the other models)"}.get(a.split, " (with baselines)" if a.baseline else "")
    lines = [f"# Reveal fault suite scores{title}", "",
             f"{len(runs)} runs scored ({len(clean)} clean, {overall['faults']} faulty), "
             f"{len(skipped)} skipped. Per kind: that kind's runs plus the clean runs.", "",
             "| kind | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    for k in kinds + ["overall"]:
        s = per_kind.get(k, overall)
        lines.append(f"| {k} | " + " | ".join(fmt(s[c]) for c in cols) + " |")
    lines += ["", "| run | fault | true subsystem | caught | TTD s | detected subsystem | incidents (start_s–end_s subsystem) |",
              "|---|---|---|---|---|---|---|"]
    for r in runs:
        incs = ", ".join(f"{s:.0f}–{e:.0f} {sub}" for s, e, sub, _ in r["incident_list"]) or "–"
        lines.append(f"| {r['name']}{' (its workload died)' if r.get('workload_died') else ''} | {r['fault']} | "
                     f"{r['subsystem']} | {fmt(r['caught'])} | "
                     f"{fmt(r.get('ttd_s'), 1)} | {r.get('detected_subsystem', '–')} | {incs} |")
    for n, st in skipped:
        lines.append(f"| {n} | skipped: {st} | | | | | |")
    steal = [(r["name"], r["false_by_steal"]) for r in runs if r.get("false_by_steal")]
    lines += ["", f"False incidents opened by hypervisor steal (the VM's host, unlabelled; counted as false above): "
              f"{sum(n for _, n in steal)}" + (" (" + ", ".join(f"{r}: {n}" for r, n in steal) + ")" if steal else "")]
    md = "\n".join(lines) + "\n"
    open(md_path, "w").write(md)
    for r in runs:
        r.pop("_points")
    json.dump({"per_kind": per_kind, "overall": overall, "runs": runs, "skipped": skipped,
               "baselines": a.split or a.baseline, "detect_args": a.detect_arg},
              open(js_path, "w"), indent=1)
    print(md, end="")
    print(f"written: {md_path} {js_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
