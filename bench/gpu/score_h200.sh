#!/usr/bin/env bash
# Scores `reveal detect` on the H200 fault recordings kept as fixtures (issue #21 item 5;
# tests/fixtures/recordings/README.md "h200-loader-*") the way the labelled suite is scored:
# bench/scenarios/score.py over tests/fixtures/recordings/h200-loader-labels.tsv (fault intervals
# and true subsystems written when they were recorded by scripts/device/h200_faults.sh).
# usage: bench/gpu/score_h200.sh [REVEAL=build/reveal] [score.py options, e.g. --split unseen]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
REVEAL=${1:-$HERE/build/reveal}
shift || true
REC=$HERE/tests/fixtures/recordings
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -1 "$REC/h200-loader-labels.tsv" > "$T/manifest.tsv"
tail -n +2 "$REC/h200-loader-labels.tsv" | while IFS=$'\t' read -r name model ddp fault sub f0 f1 run_s dir status; do
  mkdir -p "$T/$dir"
  cp "$REC/$name.db" "$T/$dir/run.db"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$model" "$ddp" "$fault" "$sub" "$f0" "$f1" "$run_s" "$T/$dir" "$status" >> "$T/manifest.tsv"
done
python3 "$HERE/bench/scenarios/score.py" "$T/manifest.tsv" --reveal "$REVEAL" "$@"
