#!/usr/bin/env bash
# `reveal report` in a real browser: the HTML report of the H200 recording (one power/thermal
# incident +50..+81 s), of the clean fleet-a run (no incident, charts still drawn), of imported
# stores (a CSV round trip through `detect --html`, an nvidia-smi log, SMD when the shared
# datasets are beside the checkout) and of three hosts in peers mode are
# loaded in headless Chromium by tests/report/browser_check.mjs (charts drawn, incident cards,
# sortable channel table, no console error, no network). The reports and their full-page
# screenshots are kept in ${REVEAL_ARTIFACT_DIR:-<build dir>/artifacts}.
# Needs Debian's chromium and tests/report/node_modules (scripts/setup.sh installs both); fails,
# never skips, without them.
# usage: report_browser_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
R=$FIX/recordings
CHECK=$(cd "$(dirname "${BASH_SOURCE[0]}")/../report" && pwd)/browser_check.mjs
ART=${REVEAL_ARTIFACT_DIR:-$(cd "$(dirname "$REVEAL")" && pwd)/artifacts}
mkdir -p "$ART" || { echo "FAIL: cannot create artefact dir $ART"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit

# report NAME DB CHECK-OPTIONS...: reveal report, then the browser check on its page.
report() {
  local name=$1 db=$2
  shift 2
  cp "$db" "$T/$name.db"  # report must not need to write beside the fixture
  "$REVEAL" report "$T/$name.db" -o "$T/$name.html" >"$T/out" 2>"$T/err"
  local rc=$?
  ((rc == 0)) || { fail "$name: reveal report exit $rc: $(head -c 300 "$T/err")"; return; }
  [[ -s $T/$name.html ]] || { fail "$name: reveal report wrote no $T/$name.html"; return; }
  cp "$T/$name.html" "$ART/report-$name.html"
  echo "== browser check: $name"
  node "$CHECK" "$T/$name.html" --screenshot "$ART/report-$name.png" "$@"
  rc=$?
  ((rc == 0)) || fail "$name: browser check exit $rc"
  echo "artefacts: $ART/report-$name.html$([[ -s $ART/report-$name.png ]] && echo " $ART/report-$name.png")"
}
report h200 "$R/h200-gpu-contention.db" --expect-incidents 1 --expect-subsystem power/thermal
report fleet-a "$R/fleet-a.db" --expect-incidents 0

# check NAME CHECK-OPTIONS...: the browser check on $T/NAME.html, kept as artefacts.
check() {
  local name=$1
  shift
  cp "$T/$name.html" "$ART/report-$name.html"
  echo "== browser check: $name"
  node "$CHECK" "$T/$name.html" --screenshot "$ART/report-$name.png" "$@" || fail "$name: browser check exit $?"
}
# An imported store (CSV round trip of fleet-b: a memory incident), through `detect --html`.
if "$REVEAL" export "$R/fleet-b.db" --csv "$T/b.csv" 2>"$T/err" &&
   "$REVEAL" import csv "$T/b.csv" -o "$T/imported.db" --channels-from "$R/fleet-b.db" 2>"$T/err" &&
   "$REVEAL" detect "$T/imported.db" --html "$T/imported.html" >"$T/out" 2>"$T/err"; then
  grep -q "INCIDENT #1" "$T/out" || fail "imported: detect --html printed no text report"
  check imported --expect-incidents 1 --expect-subsystem memory
else
  fail "imported: $(head -c 300 "$T/err")"
fi
# An nvidia-smi --query-gpu log (two GPUs at 1 s for 4 minutes; GPU 1 throttles at +120..+150 s:
# clocks, power and utilisation fall, temperature rises), imported and reported.
python3 - "$T/smi.csv" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as f:
    f.write("timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], "
            "temperature.gpu, clocks.sm [MHz]\n")
    for t in range(240):
        for g in range(2):
            hot = g == 1 and 120 <= t < 150
            util = (38 if hot else 95) + random.randint(-2, 2)
            power = (310 if hot else 620) + random.uniform(-8, 8)
            temp = (88 if hot else 61) + random.randint(-1, 1)
            clock = (1100 if hot else 1980) + random.randint(-15, 15)
            f.write(f"2024/01/31 12:{t // 60:02d}:{t % 60:02d}.{100 + g:03d}, {g}, NVIDIA H200, {util} %, "
                    f"40960 MiB, {power:.2f} W, {temp}, {clock} MHz\n")
PY
if "$REVEAL" import nvidia-smi "$T/smi.csv" -o "$T/smi-imported.db" 2>"$T/err"; then
  report nvidia-smi "$T/smi-imported.db" --min-incidents 1
else
  fail "nvidia-smi: $(head -c 300 "$T/err")"
fi
# SMD (machine-1-6's test half, whose labels hold several anomalies) when this checkout sits
# beside the shared datasets; the page must stay usable with many incidents (cards capped at 20).
SMD=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/shared/datasets/SMD
if [[ -f $SMD/processed/machine-1-6_test.pkl && -f $SMD/MANIFEST.tsv ]]; then
  if "$REVEAL" import smd "$SMD/processed/machine-1-6_test.pkl" -o "$T/smd-imported.db" 2>"$T/err"; then
    report smd "$T/smd-imported.db" --min-incidents 1
  else
    fail "smd: $(head -c 300 "$T/err")"
  fi
else
  echo "note: no SMD dataset beside this checkout; the SMD report is not checked"
fi
# Peers: one fused-score line per host on the overview, the odd host's memory incident.
if "$REVEAL" report --peers "$R/fleet-a.db" "$R/fleet-b.db" "$R/fleet-c.db" -o "$T/peers.html" >"$T/out" 2>"$T/err"; then
  grep -q "3 hosts, 1 incident" "$T/out" || fail "peers: unexpected summary line: $(cat "$T/out")"
  n=$(grep -o '<path class="hostline"' "$T/peers.html" | wc -l)
  ((n == 3)) || fail "peers: $n host lines on the overview, want 3"
  check peers --expect-incidents 1 --expect-subsystem memory
else
  fail "peers: $(head -c 300 "$T/err")"
fi

echo "report browser test: $fails failure(s)"
((fails == 0))
