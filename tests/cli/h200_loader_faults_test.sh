#!/usr/bin/env bash
# `reveal detect` on the H200 fault recordings (tests/fixtures/recordings/README.md
# "h200-loader-*", labels in h200-loader-labels.tsv; issue #21 item 5): one PyTorch training job
# with a CPU data loader, recorded five times on the device machine, once clean and once with
# each fault from +30 s to +55 s.
#   clean:   no incident.
#   compute (a second process's matrix multiplies, step time +118 %): one incident overlapping
#            the fault, opened within 5 s of its onset, focus gpu0, an nvml channel in its top 3.
#   cpu (CPU hogs on the loader's CPUs, step time +58 %): one incident overlapping the fault,
#            opened within 5 s, subsystem cpu.
#   copy (host<->device copy loop, step time +3 %): the transfer is reported over the fault, as
#            an incident or a workload change led by an nvml:pcie channel.
#   memory (122 GiB of GPU memory taken, step time +2 %): the step is reported over the fault,
#            as an incident or a workload change led by nvml:memory_used (before the self
#            reference let sustained steps stand out, RobustZOptions::steps_stand_out, its z was
#            capped at 2.6 and nothing was reported).
#   every run: no incident outside the fault (10 s of grace after its end).
# usage: h200_loader_faults_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
REC=$2/recordings
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
rc=0
for kind in none compute copy memory cpu; do
  cp "$REC/h200-loader-$kind.db" "$T/$kind.db"  # detect must not need to write beside the fixture
  "$REVEAL" detect "$T/$kind.db" --json --no-progress >"$T/$kind.json" || { echo "FAIL: detect $kind exit $?"; rc=1; }
done
python3 - "$T" "$REC/h200-loader-labels.tsv" <<'PY' || rc=1
import json, sys
tmp, labels = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(labels)]
head = rows[0]
fails = []
for r in rows[1:]:
    row = dict(zip(head, r))
    kind = row["name"].removeprefix("h200-loader-")
    d = json.load(open(f"{tmp}/{kind}.json"))
    t0 = d["run"]["start_unix_ns"]
    incs, changes = d["incidents"], d.get("workload_changes", [])
    if kind == "none":
        for i in incs:
            fails.append(f"none: false incident +{i['start_s']:.0f}..+{i['end_s']:.0f} s ({i['subsystem']})")
        print(f"none: {len(incs)} incidents")
        continue
    f0 = (int(row["fault_start_unix_ns"]) - t0) / 1e9
    f1 = (int(row["fault_end_unix_ns"]) - t0) / 1e9
    over = lambda i: i["start_s"] < f1 and i["end_s"] > f0
    hits = [i for i in incs if over(i)]
    for i in incs:
        if not over(i) and (i["end_s"] < f0 or i["start_s"] > f1 + 10):
            fails.append(f"{kind}: false incident +{i['start_s']:.0f}..+{i['end_s']:.0f} s ({i['subsystem']})")
    desc = [f"+{i['start_s']:.0f}..+{i['end_s']:.0f} {i['subsystem']} focus {i.get('focus')}" for i in incs]
    print(f"{kind}: fault +{f0:.0f}..+{f1:.0f} s; incidents {desc}")
    if kind in ("compute", "cpu"):
        if len(hits) != 1:
            fails.append(f"{kind}: {len(hits)} incidents overlap the fault (want 1)")
            continue
        i = hits[0]
        if not (f0 - 1 <= i["start_s"] <= f0 + 5):
            fails.append(f"{kind}: opened at +{i['start_s']:.0f} s (want within 5 s of +{f0:.0f})")
        if kind == "compute":
            names = [c["channel"] for c in i["top_channels"][:3]]
            if not any(n.startswith("nvml:") for n in names):
                fails.append(f"compute: no nvml channel in the top 3: {names}")
            if i.get("focus") != "gpu0":
                fails.append(f"compute: focus {i.get('focus')!r} (want 'gpu0')")
        elif i["subsystem"] != "cpu":
            fails.append(f"cpu: subsystem {i['subsystem']} (want cpu)")
    lead = {"copy": "nvml:pcie", "memory": "nvml:memory_used"}.get(kind)
    if lead:
        seen = [x for x in hits + [c for c in changes if over(c)]
                if any(c["channel"].startswith(lead) for c in x.get("top_channels", [])[:3])]
        if not seen:
            fails.append(f"{kind}: not reported over the fault by {lead} (incidents {desc}, "
                         f"workload changes {[(c['start_s'], c['end_s']) for c in changes]})")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
exit $rc
