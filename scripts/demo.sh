#!/usr/bin/env bash
# The main job: record a real 2-rank PyTorch DDP training job, inject CPU contention with
# stress-ng for 30 s in the middle, then run `reveal detect` (text, JSON and the HTML report,
# checked in headless Chromium) and check the incident.
#
#   scripts/demo.sh            (installs, builds, runs; about 3 minutes)
# Environment: DEMO_OUT (default demo/out), DEMO_RECORD_S (120), DEMO_FAULT_AT_S (45),
#              DEMO_FAULT_S (30), DEMO_FAULT (cpu|membw|none), BUILD_DIR (build),
#              DEMO_NEIGHBOUR (none|train): `train` runs another tenant's job beside ours for the
#              whole recording (a single-process training job of another model,
#              bench/scenarios/workloads.py lstm_lm), so the host is busy before the fault too.
# Cgroups: as a container runtime would, the training job runs in <v2 root>/reveal-demo/train, the
# other tenant's in .../neighbour and the injected fault's processes in .../fault, where <v2 root> is
# /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid), as reveal finds it; removed at the
# end. Not root or no cgroup v2 tree: everything runs in the script's own cgroup.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build} REVEAL_BUILD_TESTS=OFF scripts/build.sh -DREVEAL_BUILD_TESTS=OFF
REVEAL=${BUILD_DIR:-build}/reveal

OUT=${DEMO_OUT:-demo/out}
RECORD_S=${DEMO_RECORD_S:-120}
FAULT_AT=${DEMO_FAULT_AT_S:-45}
FAULT_S=${DEMO_FAULT_S:-30}
FAULT=${DEMO_FAULT:-cpu}
NEIGHBOUR=${DEMO_NEIGHBOUR:-none}
mkdir -p "$OUT"
rm -f "$OUT"/demo.db* "$OUT"/steps.log "$OUT"/fault.txt "$OUT"/neighbour.log

# The demo's cgroups (empty CG_BASE: none, everything stays in the script's cgroup).
CG_BASE=
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
  if [[ -e $d/cgroup.controllers ]]; then
    [[ -w $d ]] && { mkdir -p "$d/reveal-demo" 2>/dev/null && CG_BASE=$d/reveal-demo; }
    break
  fi
done
cg_dir() {  # $1 = name: its leaf (made now), or "" without cgroups
  [[ -n $CG_BASE ]] && mkdir -p "$CG_BASE/$1" 2>/dev/null && echo "$CG_BASE/$1" || true
}
cg_exec() {  # $1 = leaf ("" = none), then a command: this (sub)shell moves into the leaf and execs it.
  # Only in a background job (`cg_exec ... &`: $! is then the command's pid) or a subshell.
  [[ -z $1 ]] || echo "$BASHPID" >"$1/cgroup.procs" 2>/dev/null || true
  shift
  exec "$@"
}
cg_cleanup() {  # the leaves (their processes are gone or going), then reveal-demo
  [[ -n $CG_BASE && -d $CG_BASE ]] || return 0
  local d
  for _ in $(seq 1 50); do
    for d in "$CG_BASE"/*/; do [[ -d $d ]] && { rmdir "$d" 2>/dev/null || true; }; done
    rmdir "$CG_BASE" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "note: could not remove $CG_BASE" >&2
}
trap cg_cleanup EXIT
CG_TRAIN=$(cg_dir train)
CG_NEIGHBOUR=
[[ $NEIGHBOUR == train ]] && CG_NEIGHBOUR=$(cg_dir neighbour)

NEIGHBOUR_PID=
stop_neighbour() {
  if [[ -n $NEIGHBOUR_PID ]]; then kill -- -"$NEIGHBOUR_PID" 2>/dev/null || true; wait "$NEIGHBOUR_PID" 2>/dev/null || true; fi
}
case "$NEIGHBOUR" in
  none) ;;
  train)
    echo "== 0. another tenant's job beside ours: lstm_lm training (bench/scenarios/workloads.py), one process"
    PYTHONWARNINGS=ignore cg_exec "$CG_NEIGHBOUR" setsid /usr/bin/python3 bench/scenarios/workloads.py --model lstm_lm \
      --duration $((RECORD_S + 120)) --step-log "$OUT/neighbour.log" >/dev/null 2>&1 &
    NEIGHBOUR_PID=$! ;;
  *) echo "unknown DEMO_NEIGHBOUR=$NEIGHBOUR (none or train)" >&2; exit 2 ;;
esac
trap 'stop_neighbour; cg_cleanup' EXIT
if [[ -n $NEIGHBOUR_PID ]]; then
  # The tenant is already running when ours starts (its start-up is not part of the demo).
  for _ in $(seq 1 120); do
    [[ -f "$OUT/neighbour.log" && $(wc -l <"$OUT/neighbour.log") -ge 10 ]] && break
    kill -0 "$NEIGHBOUR_PID" 2>/dev/null || { echo "the other tenant's job failed to start" >&2; exit 1; }
    sleep 1
  done
fi

echo "== 1. training: 2-rank DDP Transformer encoder over gloo (python3-torch), synthetic data"
TRAIN_S=$((RECORD_S + 40))
PYTHONWARNINGS=ignore cg_exec "$CG_TRAIN" setsid /usr/bin/python3 demo/train_ddp.py --duration "$TRAIN_S" \
  --step-log "$OUT/steps.log" &
TRAIN_PID=$!
stop_training() { kill -- -"$TRAIN_PID" 2>/dev/null || true; wait "$TRAIN_PID" 2>/dev/null || true; }
trap 'stop_training; stop_neighbour; cg_cleanup' EXIT
[[ -n $CG_BASE ]] && echo "   cgroups: $CG_BASE/{train${CG_NEIGHBOUR:+,neighbour},fault (at the fault)}"
for _ in $(seq 1 120); do  # wait for warm-up: 10 steps done
  [[ -f "$OUT/steps.log" && $(wc -l <"$OUT/steps.log") -ge 10 ]] && break
  kill -0 $TRAIN_PID 2>/dev/null || { echo "training failed to start" >&2; exit 1; }
  sleep 1
done

sync  # flush the build's dirty pages: their writeback would be a second, unrelated anomaly
echo "== 2. reveal record for ${RECORD_S} s (fault: $FAULT for ${FAULT_S} s at +${FAULT_AT} s)"
"$REVEAL" record -o "$OUT/demo.db" --interval 1s --duration "${RECORD_S}s" &
REC_PID=$!
sleep "$FAULT_AT"
case "$FAULT" in
  cpu)   STRESS=(stress-ng --cpu 4 --timeout "${FAULT_S}s" --quiet) ;;
  membw) STRESS=(stress-ng --stream 2 --timeout "${FAULT_S}s" --quiet) ;;
  none)  STRESS=(sleep "$FAULT_S") ;;  # a clean run: any incident is a false alarm
  *) echo "unknown DEMO_FAULT=$FAULT" >&2; exit 2 ;;
esac
CG_FAULT=$(cg_dir fault)  # made now: a new container starting, as a noisy neighbour's would
F0=$(date +%s.%N)
(cg_exec "$CG_FAULT" "${STRESS[@]}")
F1=$(date +%s.%N)
echo "$FAULT $F0 $F1" >"$OUT/fault.txt"
echo "   injected: ${STRESS[*]}  ($(date -u -d @"${F0%.*}" +%H:%M:%SZ) → $(date -u -d @"${F1%.*}" +%H:%M:%SZ))"
wait $REC_PID
stop_training
stop_neighbour
cg_cleanup
trap - EXIT

echo "== 3. training step time (rank 0)"
awk -v f0="$F0" -v f1="$F1" '
  { ph = ($1 < f0) ? "before" : ($1 <= f1 ? "during" : "after"); s[ph] += $3; n[ph]++ }
  END { for (p in n) printf "   %-6s fault: %4d steps, mean step %.3f s\n", p, n[p], s[p] / n[p] }' \
  "$OUT/steps.log" | sort -k1,1r

echo "== 4. reveal detect $OUT/demo.db (text, JSON and the HTML report $OUT/report.html)"
"$REVEAL" detect "$OUT/demo.db" --html "$OUT/report.html" | tee "$OUT/report.txt"
"$REVEAL" detect "$OUT/demo.db" --json >"$OUT/report.json"

echo "== 5. the HTML report in headless Chromium (screenshot $OUT/report.png)"
want=(--min-incidents 1)
[[ $FAULT == none ]] && want=(--expect-incidents 0)
node tests/report/browser_check.mjs "$OUT/report.html" --screenshot "$OUT/report.png" "${want[@]}" | tail -3

echo "== 6. check against the injected interval"
python3 scripts/check_incidents.py "$OUT/report.json" "$OUT/fault.txt" "$OUT/steps.log"
