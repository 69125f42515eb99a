#!/usr/bin/env bash
# One prepared run on a GPU machine (issue #3 "Real hardware"): `reveal probes`, the GPU
# configuration snapshot, then a 2-minute `reveal record` of a real PyTorch training job on
# cuda:0 with GPU compute contention (a second process multiplying bf16 matrices on the same
# GPU) from +50 s to +80 s, then `reveal detect`. Never changes clocks, power limits or modes.
#
# Usage (repo root, on the GPU machine): scripts/device/h200_record.sh REVEAL_BINARY OUT_DIR
# Environment: H200_FAULT=contend (default) or none (a clean run, for false alarms);
#   H200_DURATION (120), H200_FAULT_AT (50), H200_FAULT_LEN (30) in seconds;
#   H200_SIDE_PROBES: when set (e.g. "nvml"), a second recorder with only those probes runs
#   beside the main one and its CPU time is reported (cost of those probes alone).
# Needs: python3 with PyTorch + CUDA, nvidia-smi (optional). Writes into OUT_DIR:
#   run.log (everything printed, step-time summary), probes.txt, probes.json, config.txt,
#   h200.db (the recording), detect.txt, detect.json, steps.log (one line per training step).
set -u
REVEAL=${1:?reveal binary}
OUT=${2:?output dir}
DUR=${H200_DURATION:-120}
FAULT_AT=${H200_FAULT_AT:-50}
FAULT_LEN=${H200_FAULT_LEN:-30}
FAULT=${H200_FAULT:-contend}
SIDE=${H200_SIDE_PROBES:-}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
export PYTHONUNBUFFERED=1

echo "== host: $(uname -a)"
nproc; free -g | head -2
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,power.limit,temperature.gpu,persistence_mode,ecc.mode.current,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current --format=csv
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
cat /proc/sys/kernel/perf_event_paranoid /proc/sys/kernel/nmi_watchdog 2>&1 | tr '\n' ' '; echo "(perf_event_paranoid, nmi_watchdog)"
ls /sys/bus/event_source/devices/ 2>&1 | tr '\n' ' '; echo "(PMUs)"

echo "== reveal probes"
"$REVEAL" probes > "$OUT/probes.txt" 2>&1; echo "rc=$?"
"$REVEAL" probes --json > "$OUT/probes.json" 2>&1; echo "rc=$?"
grep -v "^ " "$OUT/probes.txt" | head -40
echo "== reveal config show (timed)"
s=$(date +%s.%N); "$REVEAL" config show > "$OUT/config.txt" 2>&1; echo "rc=$? seconds=$(echo "$(date +%s.%N) - $s" | bc 2>/dev/null || python3 -c "print($(date +%s.%N)-$s)")"
grep '^ *gpu\.' "$OUT/config.txt" | head -40

echo "== training + recording"
: > "$OUT/steps.log"
python3 "$HERE/demo/gpu/train_gpu.py" --seconds $((DUR + 40)) --step-log "$OUT/steps.log" &
TRAIN=$!
sleep 20  # model build, CUDA context, warm-up steps
START=$(python3 -c 'import time; print(f"{time.time():.3f}")')
python3 - "$REVEAL" "$OUT/h200.db" "$DUR" > /tmp/record_usage.txt <<'PY' &
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call([sys.argv[1], "record", "-o", sys.argv[2], "--duration", sys.argv[3] + "s"])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
wall = time.time() - t
cpu = u.ru_utime + u.ru_stime
print(f"record rc={rc} wall_s={wall:.1f} user_s={u.ru_utime:.3f} sys_s={u.ru_stime:.3f} cpu_s_per_hour={cpu / wall * 3600:.1f} "
      f"core_pct={100 * cpu / wall:.3f} maxrss_kib={u.ru_maxrss}")
PY
REC=$!
if [[ -n $SIDE ]]; then
  python3 - "$REVEAL" "/tmp/side.db" "$DUR" "$SIDE" > /tmp/side_usage.txt <<'PY' &
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call([sys.argv[1], "record", "-q", "-o", sys.argv[2], "--duration", sys.argv[3] + "s",
                      "--probes", sys.argv[4]])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
wall = time.time() - t
cpu = u.ru_utime + u.ru_stime
print(f"side recorder ({sys.argv[4]}) rc={rc} wall_s={wall:.1f} user_s={u.ru_utime:.3f} sys_s={u.ru_stime:.3f} "
      f"cpu_s_per_hour={cpu / wall * 3600:.1f} core_pct={100 * cpu / wall:.3f} maxrss_kib={u.ru_maxrss}")
PY
  SIDEPID=$!
fi
F0=$(python3 -c "print($START + $FAULT_AT)")
F1=$(python3 -c "print($START + $FAULT_AT + $FAULT_LEN)")
if [[ $FAULT == contend ]]; then
  python3 "$HERE/demo/gpu/gpu_fault.py" compute --start-at "$F0" --end-at "$F1" &
  CONT=$!
else
  echo "no fault injected (H200_FAULT=$FAULT)"
  CONT=
fi
wait $REC
cat /tmp/record_usage.txt
[[ -n $SIDE ]] && { wait $SIDEPID; cat /tmp/side_usage.txt; }
[[ -n $CONT ]] && wait $CONT
kill $TRAIN 2>/dev/null; wait $TRAIN 2>/dev/null
echo "fault window (unix): $F0 .. $F1 ; recording start $START"
ls -l "$OUT/h200.db"

echo "== step time (median seconds) before / during / after the contention"
python3 - "$OUT/steps.log" "$F0" "$F1" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
f0, f1 = float(sys.argv[2]), float(sys.argv[3])
def med(sel):
    v = [r[2] for r in rows if sel(r[0])]
    return f"{statistics.median(v):.4f} s over {len(v)} steps" if v else "no steps"
print("before:", med(lambda t: t < f0), "| during:", med(lambda t: f0 + 2 <= t < f1),
      "| after:", med(lambda t: t >= f1 + 5))
PY

echo "== reveal detect"
"$REVEAL" detect "$OUT/h200.db" > "$OUT/detect.txt" 2>&1; echo "rc=$?"
"$REVEAL" detect "$OUT/h200.db" --json > "$OUT/detect.json" 2>&1; echo "rc=$?"
head -60 "$OUT/detect.txt"
echo "== done"
