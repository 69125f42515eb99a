#!/usr/bin/env bash
# The recorder's cost on a big ML host (issue #21 items 1-2): a generated fixture tree with 224
# CPUs (cpuidle 4 states each, cpufreq), 16 NICs, 8 HCAs and 200 cgroups
# (bench/bighost/make_bighost.py), plus the NVML test double answering for 8 GPUs with 18 NVLinks
# each (REVEAL_NVML_DOUBLE_GPUS / _NVLINKS). The double costs almost nothing per call: the real
# driver's cost per GPU is measured on the H200 (docs/BENCHMARKS.md) and added by hand there.
#
# Prints, side by side in one run:
#   1. reveal_sample_cost per probe: median CPU µs per sample at 1 Hz (caches cold between ticks)
#      and at 10 Hz;
#   2. `reveal record --root` at 1 Hz and at 10 Hz for DURATION s at the same time: CPU share of
#      one core (getrusage), peak RSS, sample data stored per second (the chunks' bytes over
#      their time span; the file also holds the channel table, paid once per store).
# usage: bench/bighost/run.sh BUILD_DIR [DURATION=120] [OUT=/tmp/bighost-bench]
#   BUILD_DIR: a build with -DREVEAL_BUILD_BENCH=ON and tests (for the NVML double), e.g.
#   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DREVEAL_BUILD_BENCH=ON
#   cmake --build build-bench -j2 --target reveal_cli reveal_sample_cost reveal_nvml_double_full
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:?build dir}
DUR=${2:-120}
OUT=${3:-/tmp/bighost-bench}
REVEAL=$BUILD/reveal
COST=$BUILD/bench/reveal_sample_cost
DOUBLE=$(find "$BUILD/tests" -name 'libreveal_nvml_double_full.so' -o -name 'reveal_nvml_double_full.so' | head -1)
[[ -x $REVEAL && -x $COST && -n $DOUBLE ]] || { echo "run.sh: need reveal, bench/reveal_sample_cost and the NVML double in $BUILD" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT"
python3 "$HERE/bench/bighost/make_bighost.py" "$OUT/root"
export REVEAL_NVML_LIBRARY=$DOUBLE REVEAL_NVML_DOUBLE_GPUS=8 REVEAL_NVML_DOUBLE_NVLINKS=18

echo "== probes on the big-host tree"
"$REVEAL" probes --root "$OUT/root" | grep -v '^ ' | tee "$OUT/probes.txt"

echo "== per probe, 1 Hz (60 samples 1 s apart) and 10 Hz (300 samples 100 ms apart)"
"$COST" 60 "$OUT/root" 1000 > "$OUT/cost-1hz.txt" &
C1=$!
"$COST" 300 "$OUT/root" 100 > "$OUT/cost-10hz.txt" &
C2=$!
wait $C1 $C2
paste <(cat "$OUT/cost-1hz.txt") <(cut -c1-200 "$OUT/cost-10hz.txt") | head -60

echo "== reveal record --root, 1 Hz and 10 Hz side by side, ${DUR} s"
rec() {  # name interval
  python3 - "$REVEAL" "$OUT/root" "$OUT/$1.db" "$2" "$DUR" "$1" <<'PY'
import os, resource, subprocess, sys, time
reveal, root, db, interval, dur, name = sys.argv[1:]
t = time.time()
rc = subprocess.call([reveal, "record", "-q", "--root", root, "-o", db, "--interval", interval,
                      "--duration", dur + "s"])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
wall = time.time() - t
cpu = u.ru_utime + u.ru_stime
import sqlite3
size = os.path.getsize(db)
con = sqlite3.connect(db)
data, n = con.execute("SELECT sum(length(times) + length(columns)), sum(n_samples) FROM chunks").fetchone()
span = con.execute("SELECT (max(t_last_ns) - min(t_first_ns)) / 1e9 FROM chunks").fetchone()[0] or 1
# Sample data grows with time; the channel table (names, units, help) is paid once per store.
print(f"{name}: rc={rc} wall_s={wall:.1f} cpu_s={cpu:.2f} core_pct={100 * cpu / wall:.3f} "
      f"maxrss_mb={u.ru_maxrss / 1024:.1f} samples={n} sample_data_bytes_per_s={data / span:.0f} "
      f"file_bytes={size}")
PY
}
rec record-1hz 1s > "$OUT/record-1hz.txt" &
R1=$!
rec record-10hz 100ms > "$OUT/record-10hz.txt" &
R2=$!
wait $R1 $R2
cat "$OUT/record-1hz.txt" "$OUT/record-10hz.txt"
"$REVEAL" info "$OUT/record-1hz.db" | head -4
