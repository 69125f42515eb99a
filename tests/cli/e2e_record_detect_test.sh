#!/usr/bin/env bash
# End to end: `reveal record` about 24 s of a real process (a steady CPU load) while
# stress-ng injects CPU contention for a known 10 s interval; `reveal detect` must report an
# incident overlapping that interval and attribute it to cpu. A 10-s fault lies at the edge of
# the 10 s an incident must last by default (its symptomatic windows span about 9 s: a
# transient), so this short recording is read with --min-duration 5s (the flag, end to end).
#   usage: e2e_record_detect_test.sh REVEAL FIXTURES
set -euo pipefail
REVEAL=$1
T=$(mktemp -d)
trap 'rm -rf "$T"; kill $(jobs -p) 2>/dev/null || true' EXIT
command -v stress-ng >/dev/null || { echo "stress-ng missing: run scripts/setup.sh"; exit 1; }

# The test usually runs right after a build: flush its dirty pages first, or the writeback
# (Dirty, nr_zone_write_pending ≫ normal for ~10 s) is a second anomaly in a 26 s run whose
# only reference is itself.
sync; sleep 2
"$REVEAL" record -q -o "$T/run.db" --interval 1s --duration 26s \
  -- stress-ng --cpu 1 --cpu-load 40 --timeout 30s --quiet &
REC=$!
sleep 9
F0=$(date +%s.%N)
stress-ng --cpu 4 --timeout 10s --quiet
F1=$(date +%s.%N)
wait $REC || true   # the workload is stopped by the end of --duration
echo "cpu $F0 $F1" >"$T/fault.txt"
"$REVEAL" detect "$T/run.db" --min-duration 5s
"$REVEAL" detect "$T/run.db" --min-duration 5s --json >"$T/report.json"
python3 - "$T/report.json" "$F0" "$F1" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1])); f0, f1 = float(sys.argv[2]), float(sys.argv[3])
hits = [i for i in rep["incidents"] if i["start_unix_ns"] / 1e9 <= f1 and i["end_unix_ns"] / 1e9 >= f0]
if not hits:  # explain the miss: per-window scores around the fault
    w, t0 = rep["windows"], rep["run"]["start_unix_ns"] / 1e9
    print(f"fault at +{f0 - t0:.1f}s..+{f1 - t0:.1f}s")
    for k, s in enumerate(w["start_s"]):
        print(f"  window +{s:.0f}s fused {w['fused'][k]:.2f} "
              f"{[round(d['calibrated'][k], 1) for d in w['detectors']]} {w['top_channel'][k]} {w['top_z'][k]:.1f}")
assert hits, "no incident overlaps the injected CPU contention"
assert hits[0]["subsystem"] == "cpu", f"attributed to {hits[0]['subsystem']}, expected cpu"
others = len(rep["incidents"]) - len(hits)
print(f"e2e ok: incident {hits[0]['start']}..{hits[0]['end']} cpu ({hits[0]['confidence']:.2f}); "
      f"{others} other incident(s)")
PY
