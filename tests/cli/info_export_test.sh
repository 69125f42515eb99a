#!/usr/bin/env bash
# `reveal info` and `reveal export` on the H200 fixture recording: exact counts, JSON that
# parses, CSV shape, channel globs, time ranges, and bad input (exit 2 for usage, 3 for a
# missing store or a failed write). usage: info_export_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp "$FIX/recordings/h200-gpu-contention.db" "$T/run.db"
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit

expect_exit 0 "$REVEAL" info "$T/run.db"
grep -q "^channels    1039 from 12 of 19 probes$" "$T/out" || fail "info channel line: $(grep channels "$T/out")"
grep -q "121 samples every 1 s" "$T/out" || fail "info samples line"
grep -q "^  nvml             39$" "$T/out" || fail "info nvml count"
expect_exit 0 "$REVEAL" info "$T/run.db" --json
python3 - "$T/out" <<'PY' || fail "info --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 121 and d["channels"] == 1039, d
assert d["channels_by_source"]["nvml"] == 39
assert d["size_bytes"] > 0 and 1000 < d["bytes_per_second"] < 10000, d["bytes_per_second"]
assert d["host"]["cores"] == 16
PY

expect_exit 0 "$REVEAL" export "$T/run.db" --csv "$T/all.csv"
python3 - "$T/all.csv" <<'PY' || fail "full CSV shape"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][:2] == ["t_unix_ns", "t_s"] and len(rows[0]) == 2 + 1039, len(rows[0])
assert len(rows) == 1 + 121, len(rows)
assert all(len(r) == len(rows[0]) for r in rows)
PY
expect_exit 0 "$REVEAL" export "$T/run.db" --csv - --channels 'nvml:gpm_*,*.eth0' --start 50s --end 60s
python3 - "$T/out" <<'PY' || fail "filtered CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
names = rows[0][2:]
assert all(n.startswith("nvml:gpm_") or n.endswith(".eth0") for n in names) and len(names) > 4, names
assert len(rows) == 1 + 11, len(rows)  # samples at +50.00x .. +60.00x s: the CSV's rows 50.000 .. 60.000
assert float(rows[1][1]) >= 50 and float(rows[-1][1]) <= 60
t = names.index("nvml:gpm_any_tensor_util.gpu0")
assert float(rows[-1][2 + t]) > 40                    # the contention doubled tensor activity
PY

expect_exit 2 "$REVEAL" export "$T/run.db" --csv - --channels 'nosuch:*'
expect_exit 2 "$REVEAL" export "$T/run.db" --csv - --start soon
expect_exit 2 "$REVEAL" export "$T/run.db" --csv - --start 500s
expect_exit 2 "$REVEAL" export "$T/run.db" --csv - --start 60s --end 10s
expect_exit 2 "$REVEAL" export "$T/run.db"
expect_exit 3 "$REVEAL" export "$T/missing.db" --csv -
expect_exit 3 "$REVEAL" info "$T/missing.db"
expect_exit 3 "$REVEAL" export "$T/run.db" --csv /dev/full
expect_exit 3 "$REVEAL" export "$T/run.db" --csv "$T/no/such/dir/x.csv"
((fails)) && exit 1
echo "info and export: all checks passed"
