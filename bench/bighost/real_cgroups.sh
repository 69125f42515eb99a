#!/usr/bin/env bash
# The cgroup probe's cost on the live kernel's cgroupfs (the fixture tree of run.sh is tmpfs,
# whose reads cost what a regular file costs): N empty cgroups are made in the cgroup v2 tree
# (/sys/fs/cgroup on a v2 host, /sys/fs/cgroup/unified on a hybrid one) under reveal-bench/,
# the probe watches them (REVEAL_CGROUP_PARENT), and reveal_sample_cost reports the median CPU
# µs per sample at 10 Hz. With two binaries, they run alternately, ROUNDS times each, side by
# side. Needs root; removes the cgroups it made.
# usage: bench/bighost/real_cgroups.sh COST_A [COST_B] [N=200] [ROUNDS=3]
#   COST_*: a reveal_sample_cost binary (build with -DREVEAL_BUILD_BENCH=ON: build/bench/reveal_sample_cost)
set -euo pipefail
A=${1:?reveal_sample_cost binary}
B=${2:-}
N=${3:-200}
ROUNDS=${4:-3}
V2=""
for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
  [[ -f $m/cgroup.controllers ]] && { V2=$m; break; }
done
[[ -n $V2 ]] || { echo "real_cgroups.sh: no cgroup v2 tree mounted" >&2; exit 2; }
P=$V2/reveal-bench
cleanup() { for d in "$P"/cg[0-9]*; do [[ -d $d ]] && rmdir "$d"; done; [[ -d $P ]] && rmdir "$P"; true; }
trap cleanup EXIT
mkdir -p "$P"
for i in $(seq 0 $((N - 1))); do mkdir -p "$P/cg$i"; done
echo "$N cgroups under $P, files per cgroup: $(cd "$P/cg0" && ls cpu.stat memory.stat io.stat cpu.pressure memory.pressure io.pressure 2>/dev/null | wc -l)"
for r in $(seq 1 "$ROUNDS"); do
  for bin in "$A" ${B:+"$B"}; do
    printf '%s round %d: ' "$bin" "$r"
    REVEAL_CGROUP_PARENT=reveal-bench "$bin" 40 / 100 | grep -E '^cgroup '
  done
done
