#!/usr/bin/env bash
# End to end over the labelled fault suite (bench/scenarios): the runner records a quick subset
# of real training jobs — one clean, one with CPU contention, one with a memory leak — and the
# scorer must run over it, and the CPU fault must be caught with subsystem cpu. 80 s runs with a
# 20 s fault at +40 s: the self reference needs most of a run to be normal (a fault over 40 % of
# a short run is half its own reference). About 5 minutes (ctest TIMEOUT 480).
#   usage: e2e_scenarios_test.sh REVEAL FIXTURES
# Skips (exit 0 with a note) without root or Debian's python3-torch; needs an otherwise idle host
# (a saturated 2-core host hides a CPU hog, see README.md).
set -uo pipefail
REVEAL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "$0")/test_lib.sh"
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root (cgroups, taskset, netns)"; exit 0; fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then echo "SKIP: /usr/bin/python3 has no torch (python3-torch)"; exit 0; fi
command -v stress-ng >/dev/null || { echo "stress-ng missing: run scripts/setup.sh"; exit 1; }

# bad input: one line, non-zero exit
expect_exit 2 env REVEAL=/nonexistent/reveal "$SRC/bench/scenarios/run.sh" /dev/null "$T/x"
grep -q "reveal binary not found" "$T/err" || fail "missing binary not named: $(cat "$T/err")"
printf 's  transformer 2 bogus 60 25 20\n' >"$T/bad.txt"
expect_exit 2 env REVEAL="$REVEAL" "$SRC/bench/scenarios/run.sh" "$T/bad.txt" "$T/x"
grep -q "unknown fault 'bogus'" "$T/err" || fail "unknown fault not named: $(cat "$T/err")"
[[ $(wc -l <"$T/err") -eq 1 ]] || fail "bad input gives more than one line: $(cat "$T/err")"
expect_exit 2 /usr/bin/python3 "$SRC/bench/scenarios/faults.py" inject bogus --duration 1
expect_exit 2 /usr/bin/python3 "$SRC/bench/scenarios/score.py" "$T/none.tsv" --reveal "$REVEAL"

cat >"$T/list.txt" <<'L'
# name       model        ddp fault    run_s fault_at_s fault_s
t-clean      transformer  2   none     80    40         20
t-cpu        transformer  2   cpu      80    40         20
t-memleak    wide_mlp     1   memleak  80    40         20
L
sync; sleep 2
REVEAL="$REVEAL" "$SRC/bench/scenarios/run.sh" "$T/list.txt" "$T/runs" || { echo "FAIL: run.sh failed"; exit 1; }
[[ $(grep -c $'\tok$' "$T/runs/manifest.tsv") -eq 3 ]] || fail "not all runs ok: $(cat "$T/runs/manifest.tsv")"
/usr/bin/python3 "$SRC/bench/scenarios/score.py" "$T/runs/manifest.tsv" --reveal "$REVEAL" || { echo "FAIL: score.py failed"; exit 1; }
[[ -s $T/runs/scores.md && -s $T/runs/scores.json ]] || fail "no scores written"
/usr/bin/python3 - "$T/runs/scores.json" <<'PY' || fail "CPU fault not caught as cpu"
import json, sys
s = json.load(open(sys.argv[1]))
cpu = [r for r in s["runs"] if r["fault"] == "cpu"][0]
print(f"cpu run: caught={cpu['caught']} subsystem={cpu.get('detected_subsystem')} ttd={cpu.get('ttd_s')}")
assert cpu["caught"], "CPU contention not caught"
assert cpu["detected_subsystem"] == "cpu", f"CPU contention attributed to {cpu['detected_subsystem']}"
PY
# nothing left behind
ls /sys/fs/cgroup/cpu /sys/fs/cgroup 2>/dev/null | grep -q reveal-scen && fail "a cgroup was left behind"
ip netns list | grep -q reveal-scen && fail "a netns was left behind"
((fails == 0)) && echo "e2e scenarios ok" || exit 1
