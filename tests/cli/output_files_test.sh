#!/usr/bin/env bash
# Output files of `report -o`, `detect --html` and `export -o` (src/cli/output_file.h): "-" is
# standard output; a device is written in place and stays a device; an input is never the
# output; a failed or empty export leaves no file and keeps an older one; repeated inputs are
# refused. Also --version and the docs command's visibility.
# usage: output_files_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$(realpath "$1")
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "$0")/test_lib.sh"
A="$FIX/recordings/fleet-a.db"
B="$FIX/recordings/fleet-b.db"
cp "$A" "$T/a.db"
cp "$B" "$T/b.db"
sum() { sha256sum "$1" | cut -d' ' -f1; }
no_temp() { [[ -z $(find "$T" -name '.*.??????' -print -quit) ]] || fail "$1: a temporary file was left: $(ls -A "$T")"; }
sum_a=$(sum "$T/a.db")

# report -o -: the page on stdout, the "wrote" line on stderr.
expect_exit 0 "$REVEAL" report "$T/b.db" -o - --no-progress
head -c 15 "$T/out" | grep -q '<!DOCTYPE html>' || fail "report -o -: no HTML on stdout"
grep -q '</html>' "$T/out" || fail "report -o -: page cut short"
grep -q '^wrote standard output (.*1 host, 1 incident)' "$T/err" || fail "report -o -: wrote line: $(cat "$T/err")"
[[ ! -e ./- ]] || fail "report -o - wrote a file named -"
# detect --html - would mix the page into the text report.
expect_exit 2 "$REVEAL" detect "$T/b.db" --html -
grep -q 'reveal report -o -' "$T/err" || fail "detect --html -: message: $(cat "$T/err")"
expect_exit 2 "$REVEAL" detect "$T/b.db" --html /dev/stdout
# Whatever names the stream stdout already is (/proc/self/fd/1 here) is that stream: an
# appending redirection keeps what was there.
echo kept >"$T/append.log"
"$REVEAL" report "$T/a.db" -o /proc/self/fd/1 --no-progress >>"$T/append.log" 2>/dev/null || fail "report -o /proc/self/fd/1"
[[ $(head -1 "$T/append.log") == kept ]] && grep -q '</html>' "$T/append.log" ||
  fail "report -o /proc/self/fd/1 >>log truncated the log: $(head -c 100 "$T/append.log")"

# Devices are written in place and stay devices (as root, a rename would replace them).
for dev in /dev/null /dev/stdout; do
  [[ -e $dev ]] || continue
  kind=$(stat -c %F "$dev")  # /dev/stdout: the symbolic link itself
  expect_exit 0 "$REVEAL" report "$T/a.db" -o "$dev" --no-progress
  [[ $(stat -c %F "$dev") == "$kind" ]] || fail "$dev is no longer a $kind"
done
[[ $(grep -c '</html>' "$T/out") == 1 ]] || fail "report -o /dev/stdout: no page on stdout"
grep -q '^wrote standard output' "$T/err" || fail "report -o /dev/stdout: wrote line: $(cat "$T/err")"
# A FIFO is written in place (a reader gets the page), and so is /dev/stderr.
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
reader=$!
expect_exit 0 "$REVEAL" report "$T/a.db" -o "$T/fifo" --no-progress
wait $reader
[[ -p $T/fifo ]] && grep -q '</html>' "$T/from-fifo" || fail "report -o FIFO"
echo kept >"$T/log"
"$REVEAL" report "$T/a.db" -o /dev/stderr --no-progress >/dev/null 2>>"$T/log" || fail "report -o /dev/stderr"
[[ $(head -1 "$T/log") == kept ]] && grep -q '</html>' "$T/log" && [[ -L /dev/stderr ]] ||
  fail "report -o /dev/stderr 2>>log: $(head -c 100 "$T/log")"
# A symbolic link to a file stays a link; the file it leads to gets the page.
echo old >"$T/real.html"
ln -s real.html "$T/link.html"
expect_exit 0 "$REVEAL" report "$T/a.db" -o "$T/link.html" --no-progress
[[ -L $T/link.html ]] && grep -q '</html>' "$T/real.html" || fail "report -o LINK: $(ls -la "$T")"
# A replaced file keeps its permissions.
chmod 640 "$T/real.html"
expect_exit 0 "$REVEAL" report "$T/a.db" -o "$T/real.html" --no-progress
[[ $(stat -c %a "$T/real.html") == 640 ]] || fail "the report's mode changed to $(stat -c %a "$T/real.html")"
# dir/.. where dir is a link: the kernel's meaning (the link target's parent), not the lexical one.
mkdir -p "$T/real/sub"
ln -s real/sub "$T/linkdir"
expect_exit 0 "$REVEAL" report "$T/a.db" -o "$T/linkdir/../x.html" --no-progress
[[ -f $T/real/x.html && ! -e $T/x.html ]] || fail "-o linkdir/../x.html went to the wrong place"
no_temp "good reports"
ln -s new.html "$T/dangling.html"
expect_exit 0 "$REVEAL" report "$T/a.db" -o "$T/dangling.html" --no-progress
[[ -L $T/dangling.html ]] && grep -q '</html>' "$T/new.html" || fail "report -o DANGLING-LINK: $(ls -la "$T")"
ln -s a.db "$T/store-link.db"
expect_exit 3 "$REVEAL" report "$T/b.db" -o "$T/store-link.db" --no-progress
grep -q 'Reveal store or model' "$T/err" || fail "report -o LINK-TO-STORE: $(cat "$T/err")"
if [[ -c /dev/full ]]; then
  expect_exit 3 "$REVEAL" report "$T/a.db" -o /dev/full --no-progress
  grep -q 'cannot write /dev/full' "$T/err" || fail "report -o /dev/full: $(cat "$T/err")"
  expect_exit 3 "$REVEAL" export "$T/a.db" -o /dev/full
  grep -q 'cannot write /dev/full' "$T/err" || fail "export -o /dev/full: $(cat "$T/err")"
  [[ -c /dev/full ]] || fail "/dev/full is no longer a character device"
fi

# The output may not be an input, however it is spelled; the input is left as it was.
expect_exit 2 env -C "$T" "$REVEAL" export a.db -o ./a.db
grep -q 'is also an input' "$T/err" || fail "export over its input: $(cat "$T/err")"
expect_exit 3 "$REVEAL" export "$T/a.db" -o "$T/b.db"
grep -q 'Reveal store or model' "$T/err" || fail "export over another store: $(cat "$T/err")"
expect_exit 2 "$REVEAL" report "$T/a.db" -o "$T/../$(basename "$T")/a.db"
grep -q 'is also an input' "$T/err" || fail "report over its input: $(cat "$T/err")"
expect_exit 2 "$REVEAL" detect --peers "$T/a.db" "$T/b.db" --html "$T/b.db"
grep -q 'is also an input' "$T/err" || fail "--html over an input: $(cat "$T/err")"
printf 't_unix_ns,t_s,a\n1,0,1\n' >"$T/x.csv"
expect_exit 2 "$REVEAL" import csv "$T/x.csv" -o "$T/x.csv"
[[ $(sum "$T/a.db") == "$sum_a" ]] || fail "a.db changed"
[[ -e $T/b.db ]] || fail "b.db is gone"
no_temp "refused outputs"

# An error after the output was accepted (the run cannot be read) leaves nothing behind.
expect_exit 3 "$REVEAL" report "$T/missing.db" -o "$T/r.html"
[[ ! -e $T/r.html ]] || fail "a failed report left $T/r.html"
no_temp "a failed report"

# A failed or empty export leaves no file, and an older CSV survives it.
expect_exit 2 "$REVEAL" export "$T/a.db" -o "$T/new.csv" --start 1000h
[[ ! -e $T/new.csv && ! -e $T/new.csv.tmp ]] || fail "an empty export left a file"
expect_exit 0 "$REVEAL" export "$T/a.db" -o "$T/old.csv" --channels 'proc.stat:*'
sum_csv=$(sum "$T/old.csv")
expect_exit 2 "$REVEAL" export "$T/a.db" -o "$T/old.csv" --start 1000h
expect_exit 2 "$REVEAL" export "$T/a.db" -o "$T/old.csv" --channels 'nosuch:*'
[[ $(sum "$T/old.csv") == "$sum_csv" ]] || fail "a failed export changed the older CSV"
expect_exit 0 "$REVEAL" export "$T/a.db" -o "$T/old.csv"
[[ $(sum "$T/old.csv") != "$sum_csv" ]] || fail "a good export did not replace the older CSV"
expect_exit 3 "$REVEAL" export "$T/a.db" -o "$T"
grep -q 'is a directory' "$T/err" || fail "export -o DIR: $(cat "$T/err")"
expect_exit 2 "$REVEAL" export "$T/a.db" -o ""

# One store twice is not two hosts, and a run is not its own baseline.
expect_exit 2 "$REVEAL" detect --peers "$T/a.db" "$T/b.db" "$T/a.db"
grep -q 'given twice' "$T/err" || fail "peers twice: $(cat "$T/err")"
expect_exit 2 env -C "$T" "$REVEAL" report --peers a.db ./a.db -o r.html
grep -q 'are the same file' "$T/err" || fail "peers ./a.db a.db: $(cat "$T/err")"
[[ ! -e $T/r.html && ! -e $T/r.html.tmp ]] || fail "a refused report left a file"
expect_exit 2 "$REVEAL" detect "$T/a.db" --baseline "$T/a.db"

# A 250-byte file name (the limit is 255) still has room for its temporary file.
long=$(printf 'n%.0s' $(seq 245))
expect_exit 0 "$REVEAL" report "$T/a.db" -o "$T/$long.html" --no-progress
expect_exit 0 "$REVEAL" export "$T/a.db" -o "$T/$long.csv"
expect_exit 0 "$REVEAL" import csv "$T/$long.csv" -o "$T/$long.db"
expect_exit 0 "$REVEAL" train "$T/a.db" -o "$T/$long.mdl"
rm -f "$T/$long".*

# A store's side files are part of it: writing one would make the store unreadable.
for side in journal wal shm head; do
  expect_exit 2 "$REVEAL" export "$T/a.db" -o "$T/a.db-$side"
  grep -q 'side file of the input store' "$T/err" || fail "export -o a.db-$side: $(cat "$T/err")"
done
expect_exit 0 "$REVEAL" info "$T/a.db"

# train and import: the same rules for their inputs, and a replaced file keeps its mode and link.
expect_exit 2 "$REVEAL" train "$T/a.db" "$T/a.db" -o "$T/m.model"
expect_exit 2 env -C "$T" "$REVEAL" train a.db ./a.db -o m.model
expect_exit 2 "$REVEAL" train "$T/a.db" -o "$T/a.db"
expect_exit 2 "$REVEAL" train "$T/a.db" -o -
expect_exit 2 "$REVEAL" import csv "$T/x.csv" -o -
expect_exit 2 "$REVEAL" import csv "$T/x.csv" -o ""
[[ ! -e $T/- ]] || fail "a file named - was written"
expect_exit 0 "$REVEAL" train "$T/a.db" -o "$T/m.model"
chmod 600 "$T/m.model"
ln -s m.model "$T/m-link.model"
expect_exit 0 "$REVEAL" train "$T/a.db" -o "$T/m-link.model"
[[ -L $T/m-link.model && $(stat -c %a "$T/m.model") == 600 ]] || fail "train -o LINK: $(ls -la "$T"/m*)"
expect_exit 0 "$REVEAL" import csv "$T/x.csv" -o "$T/x.db"
chmod 600 "$T/x.db"
expect_exit 0 "$REVEAL" import csv "$T/x.csv" -o "$T/x.db"
[[ $(stat -c %a "$T/x.db") == 600 ]] || fail "import -o lost the mode: $(stat -c %a "$T/x.db")"
no_temp "train and import"

# A flag where a file name belongs; an empty name.
expect_exit 2 "$REVEAL" detect "$T/a.db" --html --json
expect_exit 2 "$REVEAL" report "$T/a.db" -o --baseline
[[ ! -e ./--json && ! -e ./--baseline ]] || fail "a file named like a flag was written"
expect_exit 2 "$REVEAL" detect ""
expect_exit 2 "$REVEAL" export "" -o -
expect_exit 2 "$REVEAL" info ""
expect_exit 2 "$REVEAL" export "$T/a.db" -o - --start ""

# A FIFO as an input is no store (and no hang: the model check used to block on it).
mkfifo "$T/in-fifo"
expect_exit 3 timeout 20 "$REVEAL" info "$T/in-fifo"
expect_exit 3 timeout 20 "$REVEAL" detect "$T/a.db" --baseline "$T/in-fifo"

# A name with a newline still makes one error line.
expect_exit 3 "$REVEAL" detect "$T/mis"$'\n'"sing.db"
[[ $(wc -l <"$T/err") == 1 ]] || fail "a newline in a name split the error line: $(cat "$T/err")"

# --version, and the docs command is listed.
expect_exit 0 "$REVEAL" --version
grep -q '^reveal [0-9]' "$T/out" || fail "--version: $(cat "$T/out")"
if [[ -c /dev/full ]]; then
  "$REVEAL" --version >/dev/full 2>"$T/err"; rc=$?
  [[ $rc == 3 ]] && grep -q 'cannot write to standard output' "$T/err" || fail "--version >/dev/full: rc $rc"
  "$REVEAL" detect --help >/dev/full 2>"$T/err"; rc=$?
  [[ $rc == 3 ]] || fail "detect --help >/dev/full: rc $rc"
fi
expect_exit 0 "$REVEAL" --help
grep -q '^  docs' "$T/out" || fail "docs not in --help"

[[ $fails -eq 0 ]] || { echo "$fails failure(s)"; exit 1; }
echo "output files: all checks passed"
