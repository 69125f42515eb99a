#!/usr/bin/env bash
# `reveal import`: export -> import round trip on the H200 fixture (values equal, detect runs),
# Prometheus scrapes, an nvidia-smi log, a Reveal dataset table, the SMD arrays in
# ../shared/datasets/SMD when present (REVEAL_SMD_DIR overrides; skipped with a message when
# absent), and bad input: exit 2 for an unknown format, 3 with ONE "file:line:col" (or
# "file: byte N") error line for malformed input, and never a half-written or clobbered OUT.
# usage: import_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
SMD=${REVEAL_SMD_DIR:-$FIX/../../../shared/datasets/SMD}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
expect_error() {  # code, needle, then the import arguments: one error line naming the place
  local want=$1 needle=$2
  shift 2
  expect_exit "$want" "$REVEAL" import "$@"
  [[ $(grep -c . "$T/err") == 1 ]] || fail "import $*: want one stderr line, got: $(cat "$T/err")"
  grep -qF -- "$needle" "$T/err" || fail "import $*: stderr lacks '$needle': $(cat "$T/err")"
}

# --- CSV round trip: export, import, export again: the same CSV --------------------------------
RUN=$FIX/recordings/h200-gpu-contention.db
expect_exit 0 "$REVEAL" export "$RUN" --csv "$T/a.csv"
expect_exit 0 "$REVEAL" import csv "$T/a.csv" -o "$T/a.db"
expect_exit 0 "$REVEAL" export "$T/a.db" --csv "$T/b.csv"
cmp -s "$T/a.csv" "$T/b.csv" || fail "export -> import -> export changed the CSV: $(diff "$T/a.csv" "$T/b.csv" | head -c 300)"
expect_exit 0 "$REVEAL" info "$T/a.db" --json
python3 - "$T/out" <<'PY' || fail "info of the imported CSV"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 121 and d["channels"] == 1039, d
PY
# With the original's channel descriptions (counters stay counters) detect sees what it saw.
expect_exit 0 "$REVEAL" import csv "$T/a.csv" -o "$T/c.db" --channels-from "$RUN"
grep -q "1039 channels described by" "$T/err" || fail "--channels-from: $(cat "$T/err")"
expect_exit 0 "$REVEAL" info "$T/c.db"
grep -q "(16 cores)" "$T/out" || fail "--channels-from did not take the host's CPU count: $(head -3 "$T/out")"
expect_exit 0 "$REVEAL" detect "$T/c.db"
expect_exit 0 "$REVEAL" detect "$T/a.db"
# --cores: a plain CSV has no CPU count; the flag gives it (and wins over --channels-from's)
expect_exit 0 "$REVEAL" import csv "$T/a.csv" -o "$T/d.db" --cores 4 --channels-from "$RUN"
expect_exit 0 "$REVEAL" info "$T/d.db"
grep -q "(4 cores)" "$T/out" || fail "--cores 4 not recorded: $(head -3 "$T/out")"
expect_exit 2 "$REVEAL" import csv "$T/a.csv" -o "$T/d.db" --cores 0
grep -q -- "--cores" "$T/err" || fail "--cores 0 not named: $(cat "$T/err")"

# --- Prometheus: two scrapes, 15 s apart ---------------------------------------------------------
printf '# TYPE node_cpu_seconds_total counter\nnode_cpu_seconds_total{cpu="0",mode="idle"} 10\nup 1\n' >"$T/s1.prom"
printf 'node_cpu_seconds_total{cpu="0",mode="idle"} 25\nup 1\n' >"$T/s2.prom"
expect_exit 0 "$REVEAL" import prometheus "$T/s1.prom" "$T/s2.prom" -o "$T/p.db" --interval 15s --start 2024-01-31T12:00:00Z
expect_exit 0 "$REVEAL" export "$T/p.db" --csv -
python3 - "$T/out" <<'PY' || fail "prometheus import content"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == ["t_unix_ns", "t_s", "prom:node_cpu_seconds_total.cpu=0+mode=idle", "prom:up"], rows[0]
assert rows[1][0] == "1706702400000000000" and rows[2][0] == "1706702415000000000", rows
assert rows[2][2] == "25", rows
PY

# --- nvidia-smi --query-gpu log: two GPUs, two passes ---------------------------------------------
cat >"$T/smi.csv" <<'CSV'
timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W]
2024/01/31 12:00:00.123, 0, NVIDIA H200, 45 %, 1024 MiB, 250.50 W
2024/01/31 12:00:00.125, 1, NVIDIA H200, 3 %, 0 MiB, [N/A]
2024/01/31 12:00:01.123, 0, NVIDIA H200, 50 %, 2048 MiB, 260.00 W
2024/01/31 12:00:01.125, 1, NVIDIA H200, 4 %, 0 MiB, 70.00 W
CSV
expect_exit 0 "$REVEAL" import nvidia-smi "$T/smi.csv" -o "$T/smi.db"
expect_exit 0 "$REVEAL" export "$T/smi.db" --csv - --channels 'nvml:memory_used.gpu0,nvml:power_usage.gpu1'
python3 - "$T/out" <<'PY' || fail "nvidia-smi import content"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][2:] == ["nvml:memory_used.gpu0", "nvml:power_usage.gpu1"], rows[0]
assert rows[1][2:] == ["1073741824", ""] and rows[2][2:] == ["2147483648", "70"], rows
PY

# --- Reveal dataset table: one host of two ------------------------------------------------------
printf 'Time Perf:Branches.nserver07[count] Memory:MemFree.nserver08[kB]\n1700000000 10 5\n1700000001 12 6\n' >"$T/table.txt"
expect_exit 0 "$REVEAL" import reveal-table "$T/table.txt" -o "$T/table.db" --host nserver08
expect_exit 0 "$REVEAL" export "$T/table.db" --csv -
python3 - "$T/out" <<'PY' || fail "reveal-table import content"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][2:] == ["Memory:MemFree"] and rows[2][2] == "6", rows
PY
expect_error 3 "choose one with --host" reveal-table "$T/table.txt" -o "$T/bad.db"

# --- Bad input: one line naming the place, exit 3 (csv and nvidia-smi: with --strict); usage
# errors exit 2 ---------------------------------------------------------------------------------
printf 't,a,b\n1,2,3\n2,x,4\n' >"$T/bad.csv"
expect_error 3 "$T/bad.csv:3:3: 'x' is not a number" csv "$T/bad.csv" -o "$T/bad.db" --strict
ls "$T" | grep -q "^bad.db" && fail "a failed import left a file behind: $(ls "$T")"
printf 't,a,b\n1,2,3\n2,4\n' >"$T/ragged.csv"
expect_error 3 "$T/ragged.csv:3:4: 2 fields, the header has 3" csv "$T/ragged.csv" -o "$T/bad.db" --strict
# Without --strict the same files import: gaps counted, rows skipped or dropped, one line saying so.
expect_exit 0 "$REVEAL" import csv "$T/bad.csv" -o "$T/lenient.db"
grep -qF "reveal: import: 1 value became a gap (first: $T/bad.csv:3:3: 'x' is not a number" "$T/err" ||
  fail "lenient csv: no summary line: $(cat "$T/err")"
expect_exit 0 "$REVEAL" import csv "$T/ragged.csv" -o "$T/lenient.db"
grep -qF "1 ragged row skipped" "$T/err" || fail "lenient ragged csv: $(cat "$T/err")"
printf 't,a\n5,1\n4,1\n' >"$T/back.csv"
expect_exit 0 "$REVEAL" import csv "$T/back.csv" -o "$T/lenient.db"
grep -qF "1 row whose time went back dropped" "$T/err" || fail "lenient backward csv: $(cat "$T/err")"
expect_exit 0 "$REVEAL" info "$T/lenient.db" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["samples"] == 1 and d["events"] == 1, d' "$T/out" ||
  fail "lenient backward csv: want 1 sample and the clock_step event: $(head -c 300 "$T/out")"
printf '2024/01/31 12:00:00.000, 0, 45 %%\n2024/01/31 12:00:01.000, 0, 46 %%\n' >"$T/nohdr-smi.csv"
expect_exit 0 "$REVEAL" import nvidia-smi "$T/nohdr-smi.csv" -o "$T/nohdr.db" --fields timestamp,index,utilization.gpu
expect_exit 0 "$REVEAL" export "$T/nohdr.db" -o - --no-progress
grep -q "nvml:utilization_gpu.gpu0" "$T/out" || fail "headerless nvidia-smi: $(head -c 200 "$T/out")"
expect_error 3 "$T/back.csv:3:1: time '4' is not after" csv "$T/back.csv" -o "$T/bad.db" --strict
printf 'up 1\n' >"$T/t1.prom"
printf 'up{a="1} 1\n' >"$T/t2.prom"
expect_error 3 "$T/t2.prom:1:4: unterminated value of label 'a'" prometheus "$T/t1.prom" "$T/t2.prom" -o "$T/bad.db"
# A failed import leaves an existing store as it was.
expect_error 3 "bad.csv:3:3" csv "$T/bad.csv" -o "$T/a.db" --strict
expect_exit 0 "$REVEAL" info "$T/a.db"
ls -A "$T" | grep -q reveal-import && fail "temporary file left: $(ls -A "$T")"
expect_error 3 "missing.csv: cannot open" csv "$T/missing.csv" -o "$T/bad.db"
echo keep >"$T/notes.txt"
expect_error 3 "is not a Reveal store" csv "$T/a.csv" -o "$T/notes.txt"
[[ $(cat "$T/notes.txt") == keep ]] || fail "a non-store OUT was overwritten"
printf 'timestamp, utilization.gpu [%%]\n2024/01/31 12:00:00.000, 5 %%\n2024/01/31 12:00:01.000, x %%\n' >"$T/bad-smi.csv"
expect_error 3 "$T/bad-smi.csv:3:26: 'x %' is not a number" nvidia-smi "$T/bad-smi.csv" -o "$T/bad.db" --strict
# A known numeric field holding only non-numbers is an error too, not a label column to drop;
# one that is always [N/A] (power.draw on some boards) is left out.
printf 'timestamp, utilization.gpu [%%]\n2024/01/31 12:00:00.000, nan %%\n2024/01/31 12:00:01.000, inf %%\n' >"$T/nan-smi.csv"
expect_error 3 "$T/nan-smi.csv:2:26: 'nan %' is not a number" nvidia-smi "$T/nan-smi.csv" -o "$T/bad.db" --strict
printf 'timestamp, utilization.gpu [%%], power.draw [W]\n2024/01/31 12:00:00.000, 5 %%, [N/A]\n2024/01/31 12:00:01.000, 6 %%, [N/A]\n' >"$T/na-smi.csv"
expect_exit 0 "$REVEAL" import nvidia-smi "$T/na-smi.csv" -o "$T/na.db"
expect_exit 0 "$REVEAL" info "$T/na.db" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["channels"] == 1, d' "$T/out" 2>/dev/null ||
  fail "na-smi: want only utilization.gpu imported: $(head -c 200 "$T/out")"
expect_error 2 "unknown import format 'parquet'" parquet "$T/a.csv" -o "$T/bad.db"
expect_error 2 "input: At Most 1 required but received 2" csv "$T/a.csv" "$T/a.csv" -o "$T/bad.db"
expect_error 2 "--interval" prometheus "$T/s1.prom" -o "$T/bad.db" --interval soon
expect_error 2 "--start" smd "$T/a.csv" -o "$T/bad.db" --start yesterday
expect_exit 2 "$REVEAL" import csv "$T/a.csv"

# --- SMD: the real arrays when this checkout sits beside the shared datasets ---------------------
PKL=$SMD/processed/machine-1-6_train.pkl
if [[ -f $PKL && -f $SMD/MANIFEST.tsv ]]; then
  expect_exit 0 "$REVEAL" import smd "$PKL" -o "$T/smd.db" --start 2024-01-01T00:00:00Z
  expect_exit 0 "$REVEAL" info "$T/smd.db" --json
  python3 - "$T/out" <<'PY' || fail "SMD import shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 23688 and d["channels"] == 38, d
PY
  # An imported store knows no CPU model, cores or kernel: the host line shows only the name.
  expect_exit 0 "$REVEAL" info "$T/smd.db"
  grep -qx 'host        machine-1-6' "$T/out" || fail "imported host line: $(grep '^host' "$T/out")"
  expect_exit 0 "$REVEAL" export "$T/smd.db" --csv - --channels 'smd:col00,smd:col37' --end 2s
  python3 - "$T/out" "$PKL" <<'PY' || fail "SMD values equal the array's"
import csv, struct, sys
rows = list(csv.reader(open(sys.argv[1])))
raw = open(sys.argv[2], "rb").read()
first = struct.unpack_from("<38f", raw, 154)
assert rows[0][2:] == ["smd:col00", "smd:col37"], rows[0]
assert float(rows[1][2]) == first[0] and float(rows[1][3]) == first[37], (rows[1], first[0], first[37])
PY
  expect_exit 0 "$REVEAL" detect "$T/smd.db"  # all 23688 samples: about 1 s
  grep -q "^host machine-1-6 " "$T/out" || fail "SMD detect report: $(head -3 "$T/out")"
  # A truncated copy beside a copy of the manifest: exit 3 naming the byte.
  mkdir -p "$T/smd/processed"
  cp "$SMD/MANIFEST.tsv" "$T/smd/"
  head -c 1000000 "$PKL" >"$T/smd/processed/machine-1-6_train.pkl"
  expect_error 3 "machine-1-6_train.pkl: byte 1000000: the file ends here" smd "$T/smd/processed/machine-1-6_train.pkl" -o "$T/bad.db"
  expect_error 3 "not listed in" smd "$T/a.csv" -o "$T/bad.db" --manifest "$SMD/MANIFEST.tsv"
else
  echo "SKIP: SMD arrays not found at $SMD (set REVEAL_SMD_DIR); SMD import not tested"
fi
expect_error 3 "no MANIFEST.tsv" smd "$T/a.csv" -o "$T/bad.db"

((fails)) && exit 1
echo "import: all checks passed"
