#!/usr/bin/env bash
# `reveal detect` on the real H200 recording (tests/fixtures/recordings/README.md): a GPU
# compute-contention fault from +50 s to +80 s must come out as one incident that starts
# within 5 s of the onset, covers the fault, ends within 10 s after it, names GPU (nvml)
# channels among its top evidence and has gpu0 as its focus. No other incident may overlap +10 s .. +45 s or +95 s ..
# the end (quiet training). The clean recording of the same job (no fault) must give no
# incident at all. usage: h200_recording_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIXTURES=$2
db=$FIXTURES/recordings/h200-gpu-contention.db
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp "$db" "$T/run.db"  # detect must not need to write beside the fixture
"$REVEAL" detect "$T/run.db" --json >"$T/out.json" || { echo "FAIL: detect exit $?"; exit 1; }
"$REVEAL" detect "$T/run.db" >"$T/out.txt" || { echo "FAIL: detect (text) exit $?"; exit 1; }
sed -n '/SUMMARY/,/^$/p' "$T/out.txt"
python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
inc = d["incidents"]
hits = [i for i in inc if i["start_s"] < 80 and i["end_s"] > 50]
fails = []
if len(hits) != 1:
    fails.append(f"{len(hits)} incidents overlap the fault +50..+80 s (want 1)")
else:
    i = hits[0]
    if not (50 <= i["start_s"] <= 55): fails.append(f"starts at +{i['start_s']:.0f} s (want +50..+55)")
    if not (80 <= i["end_s"] <= 90): fails.append(f"ends at +{i['end_s']:.0f} s (want +80..+90)")
    names = [c["channel"] for c in i["top_channels"]]
    if not any(n.startswith("nvml:") for n in names[:3]):
        fails.append(f"no nvml channel in the top 3: {names}")
    if i.get("focus") != "gpu0":
        fails.append(f"focus {i.get('focus')!r} (want 'gpu0')")
    print(f"fault incident +{i['start_s']:.0f}..+{i['end_s']:.0f} s, focus {i.get('focus')}, subsystem {i['subsystem']} "
          f"({i['confidence']:.0%}), shares {i['subsystem_shares']}")
for i in inc:
    if (i["start_s"] < 45 and i["end_s"] > 10) or i["end_s"] > 95:
        fails.append(f"false incident +{i['start_s']:.0f}..+{i['end_s']:.0f} s ({i['subsystem']})")
for f in fails: print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
rc=$?
cp "$FIXTURES/recordings/h200-clean.db" "$T/clean.db"
"$REVEAL" detect "$T/clean.db" --json >"$T/clean.json" || { echo "FAIL: detect clean exit $?"; exit 1; }
python3 - "$T/clean.json" <<'PY' || rc=1
import json, sys
inc = json.load(open(sys.argv[1]))["incidents"]
for i in inc:
    print(f"FAIL: false incident in the clean run +{i['start_s']:.0f}..+{i['end_s']:.0f} s ({i['subsystem']})")
print(f"clean run: {len(inc)} incidents")
sys.exit(1 if inc else 0)
PY
exit $rc
