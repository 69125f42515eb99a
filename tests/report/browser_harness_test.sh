#!/usr/bin/env bash
# The browser check on its own (no reveal binary needed): tests/report/browser_check.mjs must
# pass on the hand-written sample_report.html, and fail (exit 1, with the right FAIL line) on
# sample_report_broken.html and on copies of the sample that each break one point of the
# contract, so that it cannot pass vacuously. A browser that cannot start must fail (exit 2).
# Screenshots of the passing runs go to ${REVEAL_ARTIFACT_DIR:-ARTIFACT_DIR}.
# usage: browser_harness_test.sh ARTIFACT_DIR
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ART=${REVEAL_ARTIFACT_DIR:-${1:?usage: browser_harness_test.sh ARTIFACT_DIR}}
mkdir -p "$ART"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$HERE/../cli/test_lib.sh"  # fail, expect_exit
check() { node "$HERE/browser_check.mjs" "$@"; }
SAMPLE=$HERE/sample_report.html

# The sample passes, with every option; its full-page screenshot is the artefact.
expect_exit 0 check "$SAMPLE" --screenshot "$ART/sample_report.png" --min-incidents 1 --expect-subsystem cpu
cat "$T/out"
grep -q "^PASS table sort by peak (click 2)" "$T/out" || fail "table sort not checked: $(cat "$T/out")"
[[ -s $ART/sample_report.png ]] || fail "no screenshot $ART/sample_report.png"
expect_exit 0 check "$SAMPLE" --screenshot "$T/s.png" --expect-incidents 2 --no-table
grep -q "table" "$T/out" && fail "--no-table still checked the table"

# must_fail NAME 'FAIL line prefix' PAGE [options]: exit 1 and that FAIL line.
must_fail() {
  local name=$1 want=$2 page=$3
  shift 3
  expect_exit 1 check "$page" --screenshot "$T/$name.png" "$@"
  grep -q "^FAIL $want" "$T/out" || fail "$name: no 'FAIL $want' line in: $(grep -v ^PASS "$T/out")"
  echo "$name: fails as it should ($(grep -m1 "^FAIL $want" "$T/out"))"
}
# variant NAME PYTHON-EXPR: the sample with s (its text) replaced by the expression's value.
variant() {
  python3 -c "import sys; s = open(sys.argv[1]).read(); r = $2; assert r != s, 'no change'; open(sys.argv[2], 'w').write(r)" \
    "$SAMPLE" "$T/$1.html" || fail "cannot make variant $1"
}
must_fail broken "chart #heatmap drawn" "$HERE/sample_report_broken.html" --no-table
grep -q "^FAIL no console or page errors: console.error: report: no data" "$T/out" ||
  fail "broken: console.error not reported: $(grep -v ^PASS "$T/out")"
must_fail incident_count "incidents = 3" "$SAMPLE" --expect-incidents 3
must_fail incident_min "incidents >= 3" "$SAMPLE" --min-incidents 3
must_fail subsystem "incident subsystem disk" "$SAMPLE" --expect-subsystem disk
variant console_error "s.replace('<script>', '<script>console.error(\"boom\");', 1)"
must_fail console_error "no console or page errors: console.error: boom" "$T/console_error.html"
variant page_error "s.replace('</body>', '<script>setTimeout(() => { throw new Error(\"late\"); });</script></body>')"
must_fail page_error "no console or page errors: uncaught: late" "$T/page_error.html"
variant no_charts "s.replace('class=\"chart\"', 'class=\"figure\"')"
must_fail no_charts "charts present" "$T/no_charts.html" --no-table
variant empty_timeline "s.replace('points=\"40,', 'data-points=\"40,').replace('<path d=\"M40 180 H640 M40 180 V10\"', '<path d=\"\"').replace('<path d=\"M40 100 H640\"', '<path d=\" \"').replace('<rect x=\"290\" y=\"10\" width=\"155\"', '<rect x=\"290\" y=\"10\" width=\"0\"')"
must_fail empty_timeline "chart #timeline drawn" "$T/empty_timeline.html"
variant hidden_chart "s.replace('id=\"heatmap\"', 'id=\"heatmap\" style=\"display:none\"')"
must_fail hidden_chart "chart #heatmap drawn" "$T/hidden_chart.html"
variant no_heatmap "s.replace('id=\"heatmap\"', 'id=\"subsystems\"')"
must_fail no_heatmap "chart #heatmap present" "$T/no_heatmap.html"
variant bare_card "s.replace('<h2>Channels', '<section class=\"incident\" data-subsystem=\"storage\"><h3>no charts</h3></section><h2>Channels')"
must_fail bare_card "incident 3 (storage) has charts: no svg.chart in the card" "$T/bare_card.html"
variant network "s.replace('</body>', '<img src=\"http://127.0.0.1:9/logo.png\" alt=\"\"></body>')"
must_fail network "no network requests: http://127.0.0.1:9/logo.png" "$T/network.html"
variant no_sort "s.replace('th.addEventListener(\"click\"', 'th.addEventListener(\"dblclick\"')"
must_fail no_sort "table sort by peak (click 1): aria-sort is null" "$T/no_sort.html"
variant wrong_sort "s.replace('return dir === \"ascending\" ? d : -d;', 'return 0;')"
must_fail wrong_sort "table sort by peak (click 1): aria-sort descending but row" "$T/wrong_sort.html"
variant no_table "s.replace('id=\"channels\"', 'id=\"other\"')"
must_fail no_table "channel table: no table#channels" "$T/no_table.html"

# A browser that cannot start is a failure of its own (exit 2, one clear line), never a skip.
REVEAL_CHROMIUM=/nonexistent/chromium expect_exit 2 check "$SAMPLE" --screenshot "$T/x.png"
grep -q "FAIL browser: cannot launch /nonexistent/chromium" "$T/err" || fail "launch failure unclear: $(head -c 300 "$T/err")"
# Bad usage: exit 2.
expect_exit 2 check "$SAMPLE"
expect_exit 2 check "$SAMPLE" --screenshot "$T/x.png" --expect-incidents 1 --min-incidents 1

echo "screenshot: $ART/sample_report.png"
echo "browser harness: $fails failure(s)"
((fails == 0))
