#!/usr/bin/env bash
# Isolation Forest speed, reveal against scikit-learn (issue #5: goal ≥ 20×), side by side in
# one run on one machine. For each recording:
#   1. reveal_window_features exports the matrix `reveal detect` fits its forest on (every
#      window's robust-standardised mean and std of the pruned channels);
#   2. ROUNDS rounds, interleaved: reveal_iforest_tool (reveal::IsolationForest, 100 trees,
#      ψ = 256, one thread; rows scored with score_many(), the batch path `reveal detect` uses)
#      and sklearn_iforest_time.py (IsolationForest(n_estimators=100, max_samples=256,
#      n_jobs=1)) each fit on the matrix and score all of its rows REPS times
#      in one process (wall seconds inside the process: no start-up, no file parsing), then the
#      whole `reveal detect STORE` process is timed once (load, rates, windows, robust z, up to
#      3 self-reference forest fits, incidents, report; wall seconds including process start);
#   3. prints the medians over ROUNDS×REPS (detect: over ROUNDS) and the ratios.
#   usage: bench/pipeline/iforest_vs_sklearn.sh BUILD_DIR [STORE...]
#          env: ROUNDS=7 REPS=3; STORE defaults to the H200 fixture recordings;
#          BASELINE=DIR: a second build (an older commit, same layout) timed in the same
#          rounds (its tool and its whole `reveal detect`), printed as a row of its own with
#          the speed-up of BUILD_DIR over it; its checksum line shows whether the scores agree.
# BUILD_DIR must hold reveal, bench/reveal_window_features and reveal_iforest_tool (bench/ or
# tests/): cmake -DREVEAL_BUILD_BENCH=ON, targets reveal_cli reveal_window_features
# reveal_iforest_tool. Needs Debian's /usr/bin/python3 with python3-sklearn (scripts/setup.sh).
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_DIR [STORE...]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STORES=("$@")
((${#STORES[@]})) || STORES=("$ROOT/tests/fixtures/recordings/h200-gpu-contention.db"
                             "$ROOT/tests/fixtures/recordings/h200-clean.db")
ROUNDS=${ROUNDS:-7}
REPS=${REPS:-3}
PY=/usr/bin/python3
REVEAL=$BUILD/reveal
WF=$BUILD/bench/reveal_window_features
TOOL=$BUILD/bench/reveal_iforest_tool
[[ -x $TOOL ]] || TOOL=$BUILD/tests/reveal_iforest_tool
for x in "$REVEAL" "$WF" "$TOOL"; do [[ -x $x ]] || { echo "missing $x (build it first)" >&2; exit 1; }; done
BASE=${BASELINE:-}
if [[ -n $BASE ]]; then
  BREVEAL=$BASE/reveal
  BTOOL=$BASE/bench/reveal_iforest_tool
  [[ -x $BTOOL ]] || BTOOL=$BASE/tests/reveal_iforest_tool
  for x in "$BREVEAL" "$BTOOL"; do [[ -x $x ]] || { echo "missing $x (baseline build)" >&2; exit 1; }; done
fi
"$PY" -c 'import sklearn' 2>/dev/null || { echo "scikit-learn is not importable by $PY (scripts/setup.sh installs python3-sklearn)" >&2; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "host: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scikit-learn $("$PY" -c 'import sklearn; print(sklearn.__version__)'), rounds $ROUNDS x reps $REPS"
for store in "${STORES[@]}"; do
  name=$(basename "$store" .db)
  "$WF" "$store" "$T/$name.csv"
  : >"$T/$name.ours" ; : >"$T/$name.sk" ; : >"$T/$name.detect" ; : >"$T/$name.base" ; : >"$T/$name.bdetect"
  timed_detect() {  # REVEAL STORE OUT: wall seconds of one whole `reveal detect` process
    local t0 t1
    t0=$(date +%s.%N)
    "$1" detect "$2" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.6f\n", $2 - $1}' >>"$3"
  }
  for ((r = 0; r < ROUNDS; r++)); do
    "$TOOL" time "$T/$name.csv" --trees 100 --psi 256 --seed $((42 + r)) --reps "$REPS" >>"$T/$name.ours"
    [[ -z $BASE ]] || "$BTOOL" time "$T/$name.csv" --trees 100 --psi 256 --seed $((42 + r)) --reps "$REPS" >>"$T/$name.base"
    "$PY" "$HERE/sklearn_iforest_time.py" "$T/$name.csv" "$REPS" $((42 + r)) >>"$T/$name.sk"
    timed_detect "$REVEAL" "$store" "$T/$name.detect"
    [[ -z $BASE ]] || timed_detect "$BREVEAL" "$store" "$T/$name.bdetect"
  done
  "$PY" - "$name" "$T/$name.ours" "$T/$name.sk" "$T/$name.detect" "$T/$name.base" "$T/$name.bdetect" <<'PY'
import os
import sys
import numpy as np
name, ours, sk, det, base, bdet = sys.argv[1:]
load = lambda p: np.loadtxt(p, comments="#", ndmin=2)
note = lambda p: [l for l in open(p) if l.startswith('#')][0][2:].strip()
o, s, d = load(ours), load(sk), load(det)[:, 0]
mo, ms, md = np.median(o, axis=0), np.median(s, axis=0), np.median(d)
has_base = os.path.getsize(base) > 0
print(f"{name}: {note(ours)}; sklearn {note(sk)}" + (f"; baseline {note(base)}" if has_base else ""))
print(f"  {'':34s} {'fit':>10s} {'score':>10s} {'fit+score':>10s}   (medians of {len(o)} / {len(s)} / {len(d)})")
print(f"  {'reveal::IsolationForest':34s} {mo[0]*1e3:9.2f}ms {mo[1]*1e3:9.2f}ms {mo[2]*1e3:9.2f}ms")
if has_base:
    b = load(base)
    mb = np.median(b, axis=0)
    print(f"  {'baseline reveal::IsolationForest':34s} {mb[0]*1e3:9.2f}ms {mb[1]*1e3:9.2f}ms {mb[2]*1e3:9.2f}ms")
print(f"  {'sklearn IsolationForest n_jobs=1':34s} {ms[0]*1e3:9.2f}ms {ms[1]*1e3:9.2f}ms {ms[2]*1e3:9.2f}ms")
print(f"  {'ratio sklearn / reveal':34s} {ms[0]/mo[0]:9.1f}x  {ms[1]/mo[1]:9.1f}x  {ms[2]/mo[2]:9.1f}x")
if has_base:
    print(f"  {'ratio sklearn / baseline':34s} {ms[0]/mb[0]:9.1f}x  {ms[1]/mb[1]:9.1f}x  {ms[2]/mb[2]:9.1f}x")
    print(f"  {'speed-up reveal / baseline':34s} {mb[0]/mo[0]:9.2f}x  {mb[1]/mo[1]:9.2f}x  {mb[2]/mo[2]:9.2f}x")
print(f"  whole `reveal detect` process: median {md*1e3:.1f} ms (min {d.min()*1e3:.1f}, max {d.max()*1e3:.1f}); "
      f"sklearn fit+score alone / whole detect = {ms[2]/md:.1f}x")
if has_base:
    bd = load(bdet)[:, 0]
    print(f"  baseline whole `reveal detect`: median {np.median(bd)*1e3:.1f} ms (min {bd.min()*1e3:.1f}, "
          f"max {bd.max()*1e3:.1f}); speed-up {np.median(bd)/md:.2f}x")
PY
done
