#!/usr/bin/env bash
# Issue #19's calibration check: false incidents per day on long fault-free recordings built
# from real clean runs, against the --false-per-day knob (default 1). The long stores are made by
# reveal_make_long_store from the clean spans of host days (SRC.db:LABELS.json: outside faults)
# in 10-minute blocks, WITH their tenant scans (--tenant-scans: what lets the detector tell a job
# starting from an incident), then analysed by `reveal detect` (the streaming analysis: they are
# long). Every incident of a fault-free recording is false; but each block join is itself a
# discontinuity no real host has (gauges step, jobs appear mid-phase), so incidents that start
# within JOIN_S seconds after a join (or 5 s before) are counted apart, as the construction's.
#
# usage: bench/scale/false_per_day.sh OUT_DIR MAKE_LONG_STORE REVEAL -- NAME:HOURS:SEED:SRC.db:LABELS.json[,SRC2.db:LABELS2.json...] ...
#   e.g. bench/scale/false_per_day.sh /tmp/cal build/bench/reveal_make_long_store build/reveal -- \
#          d41:24:5:/tmp/d41/agent.db:/tmp/d41/labels.json d41w:168:7:/tmp/d41/agent.db:/tmp/d41/labels.json
# JOIN_S (default 120). Several sources: --common-channels is passed. Prints one row per store:
# name, hours, blocks, incidents, at joins, away from joins, away per day, workload changes,
# withdrawn (incidents withdrawn as a job starting), detect wall s and peak RSS MB.
set -euo pipefail
out=$1 mk=$2 reveal=$3
shift 3
[[ ${1:-} == -- ]] || { echo "usage: $0 OUT_DIR MAKE_LONG_STORE REVEAL -- NAME:HOURS:SEED:SRCS ..." >&2; exit 2; }
shift
join_s=${JOIN_S:-120}
mkdir -p "$out"
printf 'name\thours\tblocks\tincidents\tat_joins\taway\taway_per_day\tworkload_changes\twithdrawn\tdetect_s\tpeak_rss_mb\n' >"$out/false_per_day.tsv"
for spec in "$@"; do
  IFS=: read -r name hours seed rest <<<"$spec"
  IFS=, read -r -a srcs <<<"$rest"
  common=()
  ((${#srcs[@]} > 1)) && common=(--common-channels)
  "$mk" --out "$out/$name.db" --hours "$hours" --seed "$seed" --block-s 600 --tenant-scans "${common[@]}" --verbose \
    "${srcs[@]}" 2>"$out/$name.blocks" >/dev/null
  /usr/bin/time -f '%e %M' -o "$out/$name.time" "$reveal" detect "$out/$name.db" --json --no-progress >"$out/$name.json"
  python3 - "$out/$name" "$hours" "$join_s" <<'PY' >>"$out/false_per_day.tsv"
import json, re, sys
base, hours, join_s = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
d = json.load(open(base + ".json"))
joins = [int(m.group(1)) for m in re.finditer(r"out (\d+) \+", open(base + ".blocks").read())][1:]
inc = d["incidents"]
at = [i for i in inc if any(j - 5 <= i["start_s"] <= j + join_s for j in joins)]
away = len(inc) - len(at)
ch = d["workload_changes"]
t, rss = open(base + ".time").read().split()
print("\t".join(map(str, [base.rsplit("/", 1)[1], hours, len(joins) + 1, len(inc), len(at), away,
                          round(away * 24 / hours, 2), len(ch), sum(1 for c in ch if c.get("withdrawn")),
                          t, round(int(rss) / 1024)])))
PY
  rm -f "$out/$name.json"
done
column -t -s $'\t' "$out/false_per_day.tsv"
