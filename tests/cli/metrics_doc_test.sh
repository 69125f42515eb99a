#!/usr/bin/env bash
# docs/METRICS.md must match what scripts/gen_metrics_doc.sh generates now: fails when a probe,
# channel or fixture root changed and the doc was not regenerated. Only the part above the
# "<!-- host-dependent -->" marker is reproducible on every host (below it: perf, vendor
# libraries, probes no fixture has), so that part is compared byte for byte and, below it,
# only the list of probe headings.  usage: metrics_doc_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
doc=$top/docs/METRICS.md
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[[ -f $doc ]] || { echo "FAIL: $doc missing; run scripts/gen_metrics_doc.sh"; exit 1; }
bash "$top/scripts/gen_metrics_doc.sh" "$REVEAL" "$T/METRICS.md" || { echo "FAIL: generator failed"; exit 1; }
grep -q '^<!-- host-dependent -->$' "$T/METRICS.md" || { echo "FAIL: no host-dependent marker"; exit 1; }
fails=0
upper() { sed '/^<!-- host-dependent -->$/q' "$1"; }
if ! diff -u <(upper "$doc") <(upper "$T/METRICS.md") >"$T/diff"; then
  echo "FAIL: docs/METRICS.md is stale; run scripts/gen_metrics_doc.sh build/reveal"; head -60 "$T/diff"
  fails=1
fi
if ! diff -u <(grep -E '^##+ ' "$doc") <(grep -E '^##+ ' "$T/METRICS.md") >"$T/hdiff"; then
  echo "FAIL: probe headings differ; run scripts/gen_metrics_doc.sh build/reveal"; cat "$T/hdiff"
  fails=1
fi
# Every registered probe is documented.
n_probes=$("$REVEAL" probes --json --root "$T" | grep -c '"description"')
n_docs=$(grep -cE '^##+ [a-z]' "$T/METRICS.md")
[[ $n_docs -ge $n_probes ]] || { echo "FAIL: $n_docs probe sections for $n_probes probes"; fails=1; }
((fails)) && exit 1
echo "docs/METRICS.md is up to date"
