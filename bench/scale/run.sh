#!/usr/bin/env bash
# Issue #19's benchmark: long recordings of one host (6 h, 24 h, a week at 1 Hz, ~800 channels)
# built from real host-day recordings (bench/scale/make_long_store.cpp), then `reveal detect
# --streaming`, `reveal detect` (whole run) and `reveal export` on them: wall time, peak RSS
# (GNU time's %M) and channel-samples per second, for each binary given, side by side in one run.
#
# usage: bench/scale/run.sh OUT_DIR MAKE_LONG_STORE REVEAL_BIN [REVEAL_BIN ...] -- SRC.db[:LABELS.json] ...
#   e.g. bench/scale/run.sh /tmp/scale build/bench/reveal_make_long_store /tmp/reveal-old build/reveal \
#          -- /tmp/d39/agent.db:/tmp/d39/labels.json /tmp/d40/agent.db:/tmp/d40/labels.json
# HOURS (default "6 24 168") picks the lengths; WHOLE_MAX_H (default 24) the longest recording
# the whole-run `reveal detect` is tried on (it holds the whole recording: ~1 GB a day), and
# EXPORT_MAX_H (default 6) the longest exported (every channel as CSV: ~45 MB an hour, written to
# OUT_DIR and removed). IMPORT_MAX_H (default 6) the longest imported back: the store is exported
# as CSV once (by the first binary), then `reveal import csv` by each binary (--channels-from the
# store), and the CSV removed.
# Writes OUT_DIR/results.tsv (one row per binary × command × length) and prints it.
set -euo pipefail
out=$1 mk=$2
shift 2
bins=()
while [[ $# -gt 0 && $1 != -- ]]; do bins+=("$1"); shift; done
[[ ${1:-} == -- ]] || { echo "usage: $0 OUT_DIR MAKE_LONG_STORE REVEAL_BIN... -- SRC..." >&2; exit 2; }
shift
srcs=("$@")
mkdir -p "$out"
hours=${HOURS:-6 24 168}
whole_max=${WHOLE_MAX_H:-24}
export_max=${EXPORT_MAX_H:-6}
import_max=${IMPORT_MAX_H:-6}
res=$out/results.tsv
printf 'binary\tcommand\thours\tsamples\tchannels\twall_s\tpeak_rss_mb\tmch_samples_per_s\tincidents\n' > "$res"
measure() {  # label cmd hours store -- argv...
  local bin=$1 what=$2 h=$3 store=$4; shift 4
  local samples channels t rss n
  samples=$(( h * 3600 ))
  channels=$("${bins[0]}" info "$store" | awk '/^channels/ {print $2; exit}')
  /usr/bin/time -f '%e %M' -o "$out/time.txt" "$@" > "$out/out.txt" 2>/dev/null || true
  read -r t rss < "$out/time.txt"
  n=$(grep -m1 -oE 'SUMMARY: [0-9]+' "$out/out.txt" | awk '{print $2}' || true)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.1f\t%s\n' "$(basename "$bin")" "$what" "$h" "$samples" "$channels" "$t" \
    "$(echo "$rss / 1024" | bc -l)" "$(echo "$samples * $channels / $t / 1000000" | bc -l)" "${n:--}" >> "$res"
}
for h in $hours; do
  store=$out/long${h}h.db
  [[ -f $store ]] || "$mk" --out "$store" --hours "$h" --seed 1 --common-channels "${srcs[@]}"
  if (( h <= import_max )); then
    "${bins[0]}" export "$store" -o "$out/import.csv" --no-progress
    for b in "${bins[@]}"; do
      measure "$b" "import csv" "$h" "$store" "$b" import csv "$out/import.csv" -o "$out/imported.db" \
        --channels-from "$store" --no-progress
    done
    rm -f "$out/import.csv" "$out/imported.db"
  fi
  for b in "${bins[@]}"; do
    measure "$b" "detect --streaming" "$h" "$store" "$b" detect "$store" --no-progress --streaming
    if (( h <= whole_max )); then measure "$b" "detect" "$h" "$store" "$b" detect "$store" --no-progress; fi
    if (( h <= export_max )); then
      measure "$b" "export" "$h" "$store" "$b" export "$store" -o "$out/export.csv" --no-progress
      rm -f "$out/export.csv"
    fi
  done
done
column -t -s $'\t' "$res"
