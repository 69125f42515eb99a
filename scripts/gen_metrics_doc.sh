#!/usr/bin/env bash
# Regenerates docs/METRICS.md from the probe registry, opening every probe on each machine
# fixture root (tests/fixtures/vm-* and host-*, in C-locale order) and merging the channels.
# usage: scripts/gen_metrics_doc.sh [REVEAL_BINARY [OUTPUT]]
#   defaults: build/reveal, docs/METRICS.md
set -euo pipefail
export LC_ALL=C
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reveal=${1:-$top/build/reveal}
out=${2:-$top/docs/METRICS.md}
roots=()
for d in "$top"/tests/fixtures/vm-* "$top"/tests/fixtures/host-*; do
  [[ -d $d/proc || -d $d/sys ]] && roots+=(--root "$d")
done
((${#roots[@]})) || { echo "gen_metrics_doc: no fixture roots under $top/tests/fixtures" >&2; exit 1; }
"$reveal" docs metrics "${roots[@]}" -o "$out"
