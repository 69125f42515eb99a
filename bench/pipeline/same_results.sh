#!/usr/bin/env bash
# Do two builds of `reveal` give the same detection results? For restructurings that must not
# change behaviour (issue #16). Runs `reveal detect` (self and baseline, text and JSON) and
# `detect --peers` on every fixture recording, and self and train→test baseline detection on
# SMD and ASD machines imported from ../shared/datasets (when present), with both binaries, then
# compares the outputs byte for byte.
#   bench/pipeline/same_results.sh OLD_REVEAL NEW_REVEAL [WORKDIR]
# Exit 0 when every output is identical, 1 otherwise (the differing files are listed).
set -u
OLD=$(realpath "$1"); NEW=$(realpath "$2"); WORK=${3:-$(mktemp -d)}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
F=$ROOT/tests/fixtures/recordings
DATA=$ROOT/../shared/datasets
mkdir -p "$WORK/db"
# Imported datasets: converted once, with the old binary, so both read the same stores.
for m in machine-1-6 machine-2-1 machine-2-2; do
  for p in train test; do
    src=$DATA/SMD/processed/${m}_$p.pkl; dst=$WORK/db/smd-$m-$p.db
    [ -f "$src" ] && [ ! -f "$dst" ] && "$OLD" import smd "$src" -o "$dst" >/dev/null 2>&1
  done
done
for m in omi-10 omi-11; do
  for p in train test; do
    src=$DATA/ASD/processed/${m}_$p.pkl; dst=$WORK/db/asd-$m-$p.db
    [ -f "$src" ] && [ ! -f "$dst" ] && "$OLD" import smd "$src" -o "$dst" >/dev/null 2>&1
  done
done
run_all() {  # BIN OUTDIR
  local BIN=$1 OUT=$2
  mkdir -p "$OUT"
  for db in "$F"/*.db; do
    r=$(basename "$db" .db)
    "$BIN" detect "$db" --json --no-progress > "$OUT/self-$r.json" 2>&1
    "$BIN" detect "$db" --no-progress > "$OUT/self-$r.txt" 2>&1
  done
  "$BIN" detect "$F/fleet-b.db" --baseline "$F/fleet-a.db" --json --no-progress > "$OUT/base-fleet-b.json" 2>&1
  "$BIN" detect "$F/fleet-c.db" --baseline "$F/fleet-a.db" --json --no-progress > "$OUT/base-fleet-c.json" 2>&1
  "$BIN" detect "$F/h200-gpu-contention.db" --baseline "$F/h200-clean.db" --json --no-progress > "$OUT/base-h200.json" 2>&1
  "$BIN" detect "$F/fleet-a.db" "$F/fleet-b.db" "$F/fleet-c.db" --peers --json --no-progress > "$OUT/peers.json" 2>&1
  "$BIN" detect "$F/fleet-a.db" "$F/fleet-b.db" "$F/fleet-c.db" --peers --no-progress > "$OUT/peers.txt" 2>&1
  for x in "$WORK"/db/*-test.db; do
    [ -f "$x" ] || continue
    b=$(basename "$x" .db)
    "$BIN" detect "$x" --json --no-progress > "$OUT/self-$b.json" 2>&1
    "$BIN" detect "$x" --baseline "${x%-test.db}-train.db" --json --no-progress > "$OUT/base-$b.json" 2>&1
  done
}
run_all "$OLD" "$WORK/old"
run_all "$NEW" "$WORK/new"
n=0; bad=0
for f in "$WORK"/old/*; do
  n=$((n + 1))
  cmp -s "$f" "$WORK/new/$(basename "$f")" || { echo "differs: $(basename "$f")"; bad=$((bad + 1)); }
done
echo "$n outputs compared, $bad differ (outputs in $WORK)"
[ "$bad" -eq 0 ]
