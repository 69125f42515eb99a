#!/usr/bin/env bash
# The CLI's shared conventions (issue #6, CLI polish): every subcommand's --help shows examples
# and an exit-status section; unknown (nested) commands, bad durations, sizes and times are one
# "reveal: error:" line naming the flag, exit 2; old flag spellings still work; detect
# --fail-on-incident exits 1 when it finds incidents (report printed all the same), 0 when not;
# no progress bar is drawn when stderr is not a terminal.  usage: cli_help_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
R=$2/recordings
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
one_error_line() {  # needle: stderr is one "reveal: error:" line holding it
  [[ $(grep -c . "$T/err") == 1 ]] || fail "want one stderr line, got: $(cat "$T/err")"
  grep -q "^reveal: error: " "$T/err" || fail "not an error line: $(cat "$T/err")"
  grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(cat "$T/err")"
}

# --- --help everywhere: usage, examples, exit status ---------------------------------------------
for cmd in "" probes record detect report train config "config show" "config diff" info export import "import csv" \
           "import smd" "import prometheus" "import nvidia-smi" "import reveal-table" agent docs "docs metrics" \
           "docs man" "docs completion"; do
  # shellcheck disable=SC2086
  expect_exit 0 "$REVEAL" $cmd --help
  grep -q "^Usage: " "$T/out" || fail "reveal $cmd --help: no usage line"
  grep -q "^Examples:$" "$T/out" || fail "reveal $cmd --help: no Examples section"
  grep -q "^  reveal ${cmd%% *}" "$T/out" || fail "reveal $cmd --help: no example of reveal ${cmd%% *}"
  grep -q "^Exit status:$" "$T/out" || fail "reveal $cmd --help: no Exit status section"
  grep -q "^  2  usage error" "$T/out" || fail "reveal $cmd --help: exit 2 not described"
  grep -q "^  3  input error" "$T/out" || fail "reveal $cmd --help: exit 3 not described"
done
"$REVEAL" detect --help >"$T/out"
grep -q -- "--fail-on-incident" "$T/out" || fail "detect --help lacks --fail-on-incident"
grep -q "^  1  incidents found" "$T/out" || fail "detect --help: exit 1 not described"
"$REVEAL" record --help >"$T/out"
grep -q "CMD's exit status" "$T/out" || fail "record --help: CMD's exit status not described"
"$REVEAL" import --help >"$T/out"
for f in csv smd prometheus nvidia-smi reveal-table; do
  grep -q "^  $f " "$T/out" || fail "import --help does not list the format $f"
done
"$REVEAL" import csv --help >"$T/out"
grep -q -- "--manifest" "$T/out" && fail "import csv --help offers smd's --manifest"
"$REVEAL" import smd --help >"$T/out"
grep -q -- "--manifest" "$T/out" || fail "import smd --help lacks --manifest"

# --- unknown commands, nested ones too --------------------------------------------------------
expect_exit 2 "$REVEAL" detcet x.db
one_error_line "unknown command 'detcet'"
expect_exit 2 "$REVEAL" import parquet x.csv -o x.db
one_error_line "unknown import format 'parquet' (formats: csv, smd, prometheus, nvidia-smi, reveal-table"
expect_exit 2 "$REVEAL" config shoe x.db
one_error_line "unknown config command 'shoe' (commands: show, diff"

# --- units: durations, sizes, times; bad ones name the flag ------------------------------------
expect_exit 0 "$REVEAL" agent --check-config --store-max-size 1GiB --store-max-age 90m --interval 500ms
expect_exit 0 "$REVEAL" agent --check-config --store-max-size 500MB
expect_exit 2 "$REVEAL" agent --check-config --store-max-size lots
one_error_line "--store-max-size: 'lots' is not a size (e.g. 4096, 64KiB, 500MB, 1GiB)"
expect_exit 2 "$REVEAL" agent --check-config --store-max-size 64KiB
one_error_line "--store-max-size: '64KiB' is below the minimum of 1048576 bytes"
expect_exit 2 "$REVEAL" agent --check-config --store-max-age soon
one_error_line "--store-max-age: 'soon' is not a duration"
expect_exit 2 "$REVEAL" record -o "$T/r.db" --interval soon --duration 1s
one_error_line "--interval: 'soon' is not a duration of at least 1ms"
expect_exit 2 "$REVEAL" record -o "$T/r.db" --duration 0s
one_error_line "--duration: '0s' is not a duration above 0"
expect_exit 2 "$REVEAL" detect "$R/h200-clean.db" --settle later
one_error_line "--settle: 'later' is not a duration"
expect_exit 2 "$REVEAL" detect --prometheus http://127.0.0.1:9 --start yesterday
one_error_line "--start: 'yesterday' is not a time (Unix seconds, 2026-11-30T21:00:00Z, -10m or now)"
expect_exit 2 "$REVEAL" detect --prometheus http://127.0.0.1:9 --start -10m --step 1us
one_error_line "--step: '1us' is not a duration of at least 1ms"
expect_exit 2 "$REVEAL" import prometheus x.prom -o "$T/x.db" --start 30s
one_error_line "--start: '30s' is not a time like 2026-11-30T21:00:00Z"
expect_exit 2 "$REVEAL" export "$R/fleet-a.db" -o - --end tomorrow
one_error_line "--end: 'tomorrow' is not a time in the run"

# export times: offsets from the start (30s, +30s), from the end (-10s), ISO 8601; -o and --csv
rows() { "$REVEAL" export "$R/fleet-a.db" --channels 'proc.loadavg:*' "$@" | tail -n +2 | cut -d, -f2; }
all=$(rows -o -)
[[ $(rows --csv -) == "$all" ]] || fail "export --csv (the old spelling) differs from -o"
[[ $(rows -o - --start 30s) == $(rows -o - --start +30s) ]] || fail "--start 30s and +30s differ"
first=$(head -1 <<<"$all")
[[ $(rows -o - --start 30s | head -1) == 30.* ]] || fail "--start 30s starts at $(rows -o - --start 30s | head -1)"
last=$(tail -1 <<<"$all")
tail10=$(rows -o - --start -10s)
n10=$(grep -c . <<<"$tail10")
[[ $n10 -ge 10 && $n10 -le 12 ]] || fail "--start -10s: $n10 rows (want about 10)"
[[ $(tail -1 <<<"$tail10") == "$last" ]] || fail "--start -10s does not end at the last sample"
t0=$("$REVEAL" export "$R/fleet-a.db" -o - --channels 'proc.loadavg:*' | sed -n 2p | cut -d, -f1)
iso=$(date -u -d "@$(( t0 / 1000000000 + 20 ))" +%Y-%m-%dT%H:%M:%SZ)
[[ $(rows -o - --start "$iso" | head -1) == 2[01].* ]] || fail "--start $iso: first row at $(rows -o - --start "$iso" | head -1)"
[[ $first == 0.000 ]] || fail "first row at $first"

# --- detect --fail-on-incident: 1 with incidents (report still printed), 0 without ------------
expect_exit 1 "$REVEAL" detect "$R/h200-gpu-contention.db" --fail-on-incident
grep -q "^SUMMARY: [1-9]" "$T/out" || fail "no report printed with --fail-on-incident: $(head -3 "$T/out")"
[[ -s $T/err ]] && fail "stderr not empty: $(cat "$T/err")"  # no progress bar when stderr is a file
expect_exit 0 "$REVEAL" detect "$R/h200-clean.db" --fail-on-incident
grep -q "^SUMMARY: 0 incidents" "$T/out" || fail "clean run: $(head -3 "$T/out")"
expect_exit 0 "$REVEAL" detect "$R/h200-gpu-contention.db"  # without the flag: 0 as before
expect_exit 1 "$REVEAL" detect "$R/h200-gpu-contention.db" --fail-on-incident --json
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["incidents"]' "$T/out" || fail "JSON report with --fail-on-incident"
expect_exit 1 "$REVEAL" detect --peers "$R/fleet-a.db" "$R/fleet-b.db" "$R/fleet-c.db" --fail-on-incident
grep -q "^odd host: " "$T/out" || fail "peers report not printed with --fail-on-incident"
expect_exit 1 "$REVEAL" detect "$R/h200-gpu-contention.db" --baseline "$R/h200-clean.db" --fail-on-incident

((fails)) && exit 1
echo "CLI conventions hold"
