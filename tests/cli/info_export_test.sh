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
# A store of one chunk's row repeated 3000 times (3 GB of doubles in a few MB): `info` reads
# it in bounded memory (the times alone, a chunk at a time), and whatever loads it whole refuses
# it in one line within an address-space limit.
python3 - "$T/wide.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("t_unix_ns," + ",".join(f"m{c}" for c in range(1000)) + "\n")
    for r in range(128):
        f.write(f"{1796500000000000000 + r * 1000000000}," + ",".join("1.5" for _ in range(1000)) + "\n")
PY
expect_exit 0 "$REVEAL" import csv "$T/wide.csv" -o "$T/wide.db" --no-progress
python3 - "$T/wide.db" <<'PY' || fail "crafting the repeated-chunk store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(n,) = db.execute("SELECT COUNT(*) FROM chunks").fetchone()
assert n == 1, n
db.execute("WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 2999) "
           "INSERT INTO chunks SELECT c.first_seq + 128 * k.i, c.n_samples, c.t_first_ns + 200000000000 * k.i, "
           "c.t_last_ns + 200000000000 * k.i, c.times, c.columns FROM chunks c, k")
db.commit()
PY
(ulimit -v 1000000; exec "$REVEAL" info "$T/wide.db" --json) > "$T/out" 2> "$T/err" || fail "info on the repeated-chunk store: $(cat "$T/err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["samples"] == 3000 * 128, d["samples"]' "$T/out" \
  || fail "info's sample count of the repeated-chunk store"
(ulimit -v 1000000; exec "$REVEAL" detect "$T/wide.db" --html "$T/wide.html" --no-progress) > "$T/out" 2> "$T/err"
rc=$?
[[ $rc == 3 ]] || fail "report of the repeated-chunk store: exit $rc, not 3: $(tail -2 "$T/err")"
grep -q "wide.db: its samples decode to more than .* MiB" "$T/err" || fail "report's error line: $(cat "$T/err")"

((fails)) && exit 1
echo "info and export: all checks passed"
