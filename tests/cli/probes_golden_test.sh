#!/usr/bin/env bash
# Golden end-to-end output of `reveal probes` on every machine fixture under tests/fixtures
# (one file per fixture in tests/golden/probes/<fixture>.txt), plus the NVML test double with
# its two GPUs ("nvml-double.txt"). perf.* probes are left out (they count the live kernel
# whatever --root says) and NVML is pointed at a library that does not exist, except for the
# double; the fixture's path is written as <root>.
# usage: probes_golden_test.sh REVEAL FIXTURES [NVML_DOUBLE]
# To accept new output: REVEAL_UPDATE_GOLDEN=1 ctest -R probes_golden (then review git diff).
set -uo pipefail
REVEAL=$1
FIXTURES=$2
DOUBLE=${3:-}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
golden=$top/tests/golden/probes
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$golden"
fails=0

check() {  # name, then the command
  local name=$1
  shift
  "$@" >"$T/$name.txt" 2>&1
  echo "exit $?" >>"$T/$name.txt"
  if [[ ${REVEAL_UPDATE_GOLDEN:-} == 1 ]]; then
    cp "$T/$name.txt" "$golden/$name.txt"
    echo "updated $name"
  elif [[ ! -f $golden/$name.txt ]]; then
    echo "FAIL: no golden output for $name (run with REVEAL_UPDATE_GOLDEN=1)"
    fails=1
  elif ! diff -u "$golden/$name.txt" "$T/$name.txt" >"$T/$name.diff"; then
    echo "FAIL: reveal probes output changed for $name:"
    head -40 "$T/$name.diff"
    fails=1
  else
    echo "ok $name"
  fi
}

probes_on() {  # fixture dir
  REVEAL_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$REVEAL" probes --root "$1" --exclude 'perf.*' |
    sed "s#$1#<root>#g"
}

n=0
for d in "$FIXTURES"/*/; do
  d=${d%/}
  [[ -d $d/proc || -d $d/sys ]] || continue
  check "$(basename "$d")" probes_on "$d"
  n=$((n + 1))
done
((n > 0)) || { echo "FAIL: no fixture roots under $FIXTURES"; exit 1; }
if [[ -n $DOUBLE ]]; then
  check nvml-double env REVEAL_NVML_LIBRARY="$DOUBLE" "$REVEAL" probes --probes nvml
else
  echo "FAIL: no NVML test double given"
  fails=1
fi
# A golden file whose fixture is gone is stale.
for g in "$golden"/*.txt; do
  b=$(basename "$g" .txt)
  [[ $b == nvml-double || -d $FIXTURES/$b ]] || { echo "FAIL: stale golden $b.txt"; fails=1; }
done
exit $fails
