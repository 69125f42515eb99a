#!/usr/bin/env bash
# What the HTML report costs on top of `reveal detect`: wall time (median of N runs, detect and
# report alternating on the same input) and the page's size.
#   bench/report_cost.sh REVEAL [N] STORE...
set -euo pipefail
REVEAL=$1; N=${2:-5}; shift 2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
printf "%-34s %9s %9s %7s %9s\n" store "detect s" "report s" ratio "page KiB"
for db in "$@"; do
  : >"$T/d"; : >"$T/r"
  for _ in $(seq "$N"); do
    a=$(now); "$REVEAL" detect "$db" >/dev/null; b=$(now); awk -v a="$a" -v b="$b" 'BEGIN {print b - a}' >>"$T/d"
    a=$(now); "$REVEAL" report "$db" -o "$T/p.html" >/dev/null; b=$(now); awk -v a="$a" -v b="$b" 'BEGIN {print b - a}' >>"$T/r"
  done
  d=$(median <"$T/d"); r=$(median <"$T/r")
  printf "%-34s %9.3f %9.3f %7.2f %9.0f\n" "$(basename "$db")" "$d" "$r" "$(awk -v r="$r" -v d="$d" 'BEGIN {print r / d}')" \
    "$(( $(stat -c %s "$T/p.html") / 1024 ))"
done
