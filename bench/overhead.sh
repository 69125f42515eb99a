#!/usr/bin/env bash
# Recorder overhead and storage: CPU seconds per hour of recording, peak RSS and stored bytes per
# second for `reveal record` with all available probes at 1 Hz and 10 Hz, measured side by side
# in one run (each for BENCH_S seconds, default 120), then `reveal detect` on one hour's worth of
# samples (3600 samples of this host's channels, recorded at 50 ms to save time).
#   usage: bench/overhead.sh [build/reveal]
set -euo pipefail
REVEAL=${1:-build/reveal}
S=${BENCH_S:-120}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

measure() {  # measure NAME INTERVAL
  /usr/bin/time -f "%U %S %M" -o "$T/$1.time" "$REVEAL" record -q -o "$T/$1.db" --interval "$2" --duration "${S}s"
  read -r user sys rss_kb <"$T/$1.time"
  local bytes; bytes=$(stat -c %s "$T/$1.db")
  local n; n=$("$REVEAL" probes | tail -1 | awk '{print $1}')
  awk -v name="$1" -v u="$user" -v s="$sys" -v rss="$rss_kb" -v b="$bytes" -v dur="$S" -v n="$n" 'BEGIN {
    cpu = u + s; printf "| %s | %d | %.1f | %.3f %% | %.1f MiB | %.0f B/s |\n",
      name, n, cpu / dur * 3600, cpu / dur * 100, rss / 1024, b / dur }'
}
echo "| recorder | channels | CPU s per hour | share of one core | peak RSS | stored |"
echo "|---|---|---|---|---|---|"
measure "reveal record 1 Hz" 1s &
P1=$!
measure "reveal record 10 Hz" 100ms
wait $P1

"$REVEAL" record -q -o "$T/hour.db" --interval 50ms --duration 180s
/usr/bin/time -f "%e %M" -o "$T/detect.time" "$REVEAL" detect "$T/hour.db" >/dev/null
read -r secs rss_kb <"$T/detect.time"
echo
echo "| detect input | wall time | peak RSS |"
echo "|---|---|---|"
awk -v s="$secs" -v r="$rss_kb" 'BEGIN { printf "| 3600 samples × all channels (one hour at 1 Hz) | %.2f s | %.1f MiB |\n", s, r / 1024 }'
