#!/usr/bin/env bash
# Steady-state cost of the nvml probe and of all probes on a GPU host: recorders of 20 s and 140 s side by
# side; (CPU_140 - CPU_20) / 120 s is the per-second cost without start-up.
set -u
# usage: scripts/device/steady_overhead.sh [REVEAL_BINARY] (default build-static/reveal); writes $OUT/steady.txt if OUT is set
REVEAL_BIN=${1:-build-static/reveal}
OUT=${OUT:-/tmp}
rec() {
  python3 - "$REVEAL_BIN" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call([sys.argv[1], "record", "-q"] + sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN); wall = time.time() - t
print(f"{' '.join(sys.argv[2:])}: rc={rc} wall_s={wall:.1f} cpu_s={u.ru_utime + u.ru_stime:.3f} user_s={u.ru_utime:.3f} sys_s={u.ru_stime:.3f}")
PY
}
rec -o /tmp/n20.db --duration 20s --probes nvml > /tmp/1.txt &
rec -o /tmp/n140.db --duration 140s --probes nvml > /tmp/2.txt &
rec -o /tmp/a20.db --duration 20s > /tmp/3.txt &
rec -o /tmp/a140.db --duration 140s > /tmp/4.txt &
wait
cat /tmp/[1234].txt | tee "$OUT/steady.txt"
