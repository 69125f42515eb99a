#!/usr/bin/env bash
# One prepared run on a GPU machine (issue #21 item 5, and the NVML cost of item 4): a real
# PyTorch training job on cuda:0 with a CPU data loader, recorded four times by `reveal record`
# (1 Hz, every probe), each recording with one fault in its middle:
#   compute  a second process's bf16 matrix multiplies on the same GPU
#   copy     host<->device copy contention (a pinned-memory copy loop)
#   memory   GPU memory pressure (free memory allocated short of full by a margin, never past)
#   cpu      CPU-side starvation (busy processes pinned to the data loader's CPUs)
# and one more recording with no fault (kind none: false alarms, and a baseline for the others).
# Each fault process starts in the gap before its recording (imports, CUDA context) and waits
# for its start time, so its start-up is not in the recording. Beside them: NVML cost per read
# and per probe tick (bench/nvml/nvml_cost.cpp), and the steady CPU cost of recorders of
# `--probes nvml` alone and of every probe (a short and a long recorder side by side: the
# difference removes start-up). Never changes clocks, power limits or modes.
#
# Usage (repo root, on the GPU machine): scripts/device/h200_faults.sh REVEAL NVML_COST OUT_DIR
#   REVEAL: a `reveal` built with -DREVEAL_STATIC_DEPS=ON; NVML_COST: its reveal_nvml_cost.
# Environment (seconds): H200_REC (80) each recording, H200_FAULT_AT (30) and H200_FAULT_LEN (25)
#   within it, H200_GAP (12) between recordings, H200_KINDS ("none compute copy memory cpu").
# Writes into OUT_DIR: run.log, faults.tsv (kind, recording, fault start/end as offsets and
#   unix times), steps.log (unix_time step seconds [oom]), h200-<kind>.db, detect-<kind>.txt/.json,
#   fault-<kind>.log, probes.txt, nvml_cost.txt, steady.txt.
set -u
REVEAL=${1:?reveal binary}
NVML_COST=${2:?reveal_nvml_cost binary}
OUT=${3:?output dir}
REC=${H200_REC:-80}
FAULT_AT=${H200_FAULT_AT:-30}
FAULT_LEN=${H200_FAULT_LEN:-25}
GAP=${H200_GAP:-12}
KINDS=(${H200_KINDS:-none compute copy memory cpu})
LOADER_CPUS=0-3
HERE=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
export PYTHONUNBUFFERED=1
now() { python3 -c 'import time; print(f"{time.time():.3f}")'; }

echo "== host: $(uname -r) $(nproc) CPUs"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,pcie.link.gen.current,pcie.link.width.current --format=csv
"$REVEAL" --version
"$REVEAL" probes > "$OUT/probes.txt" 2>&1; echo "probes rc=$?"; grep -v "^ " "$OUT/probes.txt" | head -30

TOTAL=$((GAP + ${#KINDS[@]} * (REC + GAP) + 30))
: > "$OUT/steps.log"
python3 "$HERE/demo/gpu/train_gpu.py" --seconds "$TOTAL" --step-log "$OUT/steps.log" \
  --loader-workers 4 --loader-cpus "$LOADER_CPUS" --loader-cpu-ms 60 > "$OUT/train.log" 2>&1 &
TRAIN=$!

# NVML per read and per tick (about 40 s with 20 repeats), while the job warms up and runs.
"$NVML_COST" 20 > "$OUT/nvml_cost.txt" 2>&1 &
COST=$!

# Steady recorder cost: short and long recorders side by side, nvml alone and every probe.
steady() {  # name duration [record args...]
  local name=$1 dur=$2; shift 2
  python3 - "$REVEAL" "$name" "$dur" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call([sys.argv[1], "record", "-q", "-o", f"/tmp/steady-{sys.argv[2]}.db",
                      "--duration", sys.argv[3] + "s"] + sys.argv[4:])
u = resource.getrusage(resource.RUSAGE_CHILDREN); wall = time.time() - t
print(f"{sys.argv[2]} rc={rc} wall_s={wall:.1f} cpu_s={u.ru_utime + u.ru_stime:.3f} "
      f"user_s={u.ru_utime:.3f} sys_s={u.ru_stime:.3f} maxrss_kib={u.ru_maxrss}")
PY
}
LONG=$((TOTAL - 40))
steady nvml-30 30 --probes nvml > /tmp/s1.txt &
S1=$!
steady nvml-$LONG $LONG --probes nvml > /tmp/s2.txt &
S2=$!
steady all-30 30 > /tmp/s3.txt &
S3=$!
steady all-$LONG $LONG > /tmp/s4.txt &
S4=$!

sleep "$GAP"
printf "kind\trecording\tfault_start_s\tfault_end_s\trec_start_unix\tfault_start_unix\tfault_end_unix\n" > "$OUT/faults.tsv"
for kind in "${KINDS[@]}"; do
  START=$(python3 -c "import time; print(f'{time.time() + $GAP:.3f}')")
  F0=$(python3 -c "print(f'{$START + $FAULT_AT:.3f}')")
  F1=$(python3 -c "print(f'{$START + $FAULT_AT + $FAULT_LEN:.3f}')")
  if [[ $kind == none ]]; then
    echo "no fault" > "$OUT/fault-$kind.log"; FPID=
  else
    python3 "$HERE/demo/gpu/gpu_fault.py" "$kind" --start-at "$F0" --end-at "$F1" --cpus "$LOADER_CPUS" \
      > "$OUT/fault-$kind.log" 2>&1 &
    FPID=$!
  fi
  python3 -c "import time; time.sleep(max(0, $START - time.time()))"
  echo "== $kind: recording ${REC} s from $(now), fault +${FAULT_AT}..+$((FAULT_AT + FAULT_LEN)) s"
  "$REVEAL" record -q -o "$OUT/h200-$kind.db" --duration "${REC}s"; echo "record rc=$?"
  [[ -n $FPID ]] && wait $FPID; cat "$OUT/fault-$kind.log"
  printf "%s\th200-%s.db\t%s\t%s\t%s\t%s\t%s\n" "$kind" "$kind" "$FAULT_AT" "$((FAULT_AT + FAULT_LEN))" \
    "$START" "$F0" "$F1" >> "$OUT/faults.tsv"
done
# Each faulty recording against the clean one as its baseline (train once, detect each).
if [[ -f $OUT/h200-none.db ]]; then
  "$REVEAL" train "$OUT/h200-none.db" -o /tmp/h200-none.model > /dev/null 2>&1; echo "train rc=$?"
fi
wait $COST
kill $TRAIN 2>/dev/null; wait $TRAIN 2>/dev/null
tail -3 "$OUT/train.log"
cat "$OUT/nvml_cost.txt"

echo "== step time: median s before / during / after each fault"
python3 - "$OUT/steps.log" "$OUT/faults.tsv" <<'PY'
import statistics, sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 3:
        rows.append((float(f[0]), float(f[2]), len(f) > 3))
for line in list(open(sys.argv[2]))[1:]:
    kind, _, _, _, start, f0, f1 = line.split("\t")
    start, f0, f1 = float(start), float(f0), float(f1)
    def med(a, b):
        v = [s for t, s, oom in rows if a <= t < b and not oom]
        return statistics.median(v) if v else float("nan")
    before, during, after = med(start, f0), med(f0 + 2, f1), med(f1 + 5, f1 + 25)
    ooms = sum(1 for t, _, oom in rows if start <= t < f1 + 25 and oom)
    print(f"{kind}: before {before:.4f} s, during {during:.4f} s ({100 * (during / before - 1):+.0f} %), "
          f"after {after:.4f} s, oom steps {ooms}")
PY

echo "== reveal detect"
for kind in "${KINDS[@]}"; do
  "$REVEAL" detect "$OUT/h200-$kind.db" > "$OUT/detect-$kind.txt" 2>&1; echo "$kind detect rc=$?"
  "$REVEAL" detect "$OUT/h200-$kind.db" --json > "$OUT/detect-$kind.json" 2>&1
  head -25 "$OUT/detect-$kind.txt"
  if [[ $kind != none && -f /tmp/h200-none.model ]]; then
    "$REVEAL" detect "$OUT/h200-$kind.db" --baseline /tmp/h200-none.model --json > "$OUT/detect-$kind-baseline.json" 2>&1
    echo "$kind baseline detect rc=$?"
  fi
done
wait $S1 $S2 $S3 $S4  # (a bare `wait` would also wait for the log's tee)
cat /tmp/s[1234].txt | tee "$OUT/steady.txt"
ls -l "$OUT"
echo "== done"
