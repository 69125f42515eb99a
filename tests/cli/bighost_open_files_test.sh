#!/usr/bin/env bash
# A big host under the soft open-files limit most sessions start with (1024): the generated
# big-host tree (bench/bighost/make_bighost.py: 224 CPUs with cpuidle and cpufreq, whose 2464 files stay open, 16 NICs,
# 8 HCAs, 200 cgroups) plus the NVML double with 8 GPUs × 18 NVLinks needs more descriptors than
# that. `reveal probes` and `reveal record --root` must still see every probe the tree feeds and
# record them (reveal raises its soft limit to the hard one: src/util/open_files_limit.h), and the
# command run by `reveal record -- CMD` must get the shell's limit back.
# usage: bighost_open_files_test.sh REVEAL FIXTURES NVML_DOUBLE
set -uo pipefail
REVEAL=$1
NVML_DOUBLE=$3
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python3 "$HERE/bench/bighost/make_bighost.py" "$T/root" > /dev/null || fail "make_bighost.py"
export REVEAL_NVML_LIBRARY=$NVML_DOUBLE REVEAL_NVML_DOUBLE_GPUS=8 REVEAL_NVML_DOUBLE_NVLINKS=18
(( $(ulimit -Hn) >= 20000 )) || { echo "hard open-files limit $(ulimit -Hn) < 20000: cannot show the case"; exit 0; }
ulimit -Sn 1024 || fail "cannot lower the soft limit"

"$REVEAL" probes --root "$T/root" --json > "$T/probes.json" || fail "probes exit $?"
python3 - "$T/probes.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
probes = d["probes"] if isinstance(d, dict) else d
want = {"cgroup": 8600, "sys.cpuidle": 8, "sys.cpufreq": 5, "rdma": 432, "proc.stat": 1804}
got = {p["name"]: (p.get("available"), len(p.get("channels", [])) if isinstance(p.get("channels"), list) else p.get("channels"))
       for p in probes}
bad = [f"{n}: {got.get(n)} (want {c} channels)" for n, c in want.items() if got.get(n) != (True, c)]
for n in ("nvml", "cgroup.throttling"):
    if not (got.get(n) or (False,))[0]:
        bad.append(f"{n} unavailable")
for b in bad: print("FAIL:", b)
print("probes under a soft limit of 1024:", {n: got.get(n) for n in list(want) + ["nvml", "cgroup.throttling"]})
sys.exit(1 if bad else 0)
PY
"$REVEAL" record -q --root "$T/root" -o "$T/big.db" --duration 2s || fail "record exit $?"
"$REVEAL" info "$T/big.db" | grep -E "^channels" || fail "info"
n=$("$REVEAL" record -q -o "$T/child.db" --probes proc.loadavg -- sh -c 'ulimit -Sn' | tail -1)
[[ $n == 1024 ]] || fail "the recorded command got a soft limit of '$n' (want the shell's 1024)"
echo "recorded command's soft limit: $n"
