#!/usr/bin/env bash
# Runner of Reveal's labelled fault suite: for each run of a list, start a real training job
# (workloads.py), record it with `reveal record --interval 1s --duration RUN_S`, inject one fault
# (faults.py) FAULT_S seconds long FAULT_AT seconds into the recording, and keep
#   OUT/<name>/run.db  label.json  steps.log  workload.log
# plus OUT/manifest.tsv (one line per run). Score with bench/scenarios/score.py OUT/manifest.tsv.
#
#   usage: bench/scenarios/run.sh LIST OUT          (REVEAL=build/reveal by default)
# LIST: whitespace-separated lines (# comments): name model ddp fault run_s fault_at_s fault_s
#   e.g.  resnet18-cpu  resnet18  2  cpu  100  40  25
# ddp is the world size (1: one process). fault is a faults.py kind (faults.py list), none = clean.
# Needs root (cgroups, taskset on the job, netns). Everything it starts is stopped on exit.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
die() { echo "run.sh: $*" >&2; exit 2; }
[[ $# -eq 2 ]] || die "usage: run.sh LIST OUT"
LIST=$1 OUT=$2
REVEAL=${REVEAL:-build/reveal}
[[ -x $REVEAL && -f $REVEAL ]] || die "reveal binary not found or not executable: $REVEAL (set REVEAL)"
[[ -f $LIST ]] || die "no such run list: $LIST"
[[ -x $PY ]] && $PY -c 'import torch' 2>/dev/null || die "$PY has no torch (install python3-torch: scripts/setup.sh)"
command -v stress-ng >/dev/null || die "stress-ng missing (scripts/setup.sh)"
REVEAL=$(cd "$(dirname "$REVEAL")" && pwd)/$(basename "$REVEAL")

# validate the whole list first: a typo should not surface after an hour of runs
KINDS=$($PY "$HERE/faults.py" list | cut -f1)
MODELS=$($PY "$HERE/workloads.py" --list | cut -f1)
n=0
while read -r name model ddp fault run_s at_s f_s extra; do
  [[ -z ${name:-} || $name == \#* ]] && continue
  n=$((n + 1))
  [[ -n ${f_s:-} && -z ${extra:-} ]] || die "$LIST: line for '$name' needs 7 fields: name model ddp fault run_s fault_at_s fault_s"
  grep -qx -- "$model" <<<"$MODELS" || die "$LIST: unknown model '$model' (known: $(echo $MODELS))"
  grep -qx -- "$fault" <<<"$KINDS" || die "$LIST: unknown fault '$fault' (known: $(echo $KINDS))"
  [[ $ddp =~ ^[1-8]$ && $run_s =~ ^[0-9]+$ && $at_s =~ ^[0-9]+$ && $f_s =~ ^[0-9]+$ ]] || die "$LIST: '$name': ddp, run_s, fault_at_s, fault_s must be integers"
  ((at_s + f_s + 5 <= run_s)) || die "$LIST: '$name': fault ends after the recording (fault_at_s + fault_s + 5 > run_s)"
  [[ $fault != mtu || $ddp == 2 ]] || die "$LIST: '$name': mtu needs ddp 2 (one rank per namespace)"
done <"$LIST"
((n > 0)) || die "$LIST: no runs"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
MAN=$OUT/manifest.tsv
[[ -f $MAN ]] || printf 'name\tmodel\tddp\tfault\tsubsystem\tfault_start_unix_ns\tfault_end_unix_ns\trun_s\tdir\tstatus\n' >"$MAN"

TRAIN_PIDS=() REC_PID="" FAULT_PID="" NETNS_ID=""
stop_pid() {  # stop one process group we started (TERM, then KILL)
  local p=$1
  kill -TERM -- -"$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- -"$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}
cleanup_run() {
  [[ -n $FAULT_PID ]] && { kill -TERM "$FAULT_PID" 2>/dev/null || true; wait "$FAULT_PID" 2>/dev/null || true; }
  [[ -n $REC_PID ]] && { kill -TERM "$REC_PID" 2>/dev/null || true; wait "$REC_PID" 2>/dev/null || true; }
  local p
  for p in "${TRAIN_PIDS[@]}"; do stop_pid "$p"; done
  [[ -n $NETNS_ID ]] && $PY "$HERE/faults.py" netns-down "$NETNS_ID"
  TRAIN_PIDS=() REC_PID="" FAULT_PID="" NETNS_ID=""
}
trap 'cleanup_run' EXIT
trap 'exit 130' INT TERM

export PYTHONWARNINGS=ignore
while read -r name model ddp fault run_s at_s f_s; do
  [[ -z ${name:-} || $name == \#* ]] && continue
  D=$OUT/$name
  rm -rf "$D"; mkdir -p "$D"
  train_s=$((run_s + 150))  # outlives warm-up and the recording; stopped explicitly
  echo "== $name: $model ddp=$ddp fault=$fault at +${at_s}s for ${f_s}s, record ${run_s}s"
  if [[ $fault == mtu ]]; then
    NETNS_ID=$$ ; eval "$($PY "$HERE/faults.py" netns-up "$NETNS_ID" --octet $((RANDOM % 200 + 20)))"
    port=$((29500 + RANDOM % 2000))
    setsid $PY "$HERE/workloads.py" --model "$model" --duration "$train_s" --ddp 2 --rank 0 --master-addr "$ADDR_A" \
      --master-port "$port" --ifname "$DEV_A" --step-log "$D/steps.log" >"$D/workload.log" 2>&1 &
    TRAIN_PIDS+=($!)
    setsid ip netns exec "$NETNS" $PY "$HERE/workloads.py" --model "$model" --duration "$train_s" --ddp 2 --rank 1 \
      --master-addr "$ADDR_A" --master-port "$port" --ifname "$DEV_B" >>"$D/workload.log" 2>&1 &
    TRAIN_PIDS+=($!)
    FAULT_ARGS=(--mtu-dev "$NETNS:$DEV_B")
  else
    setsid $PY "$HERE/workloads.py" --model "$model" --duration "$train_s" --ddp "$ddp" \
      --step-log "$D/steps.log" >"$D/workload.log" 2>&1 &
    TRAIN_PIDS+=($!)
    FAULT_ARGS=()
  fi
  status=ok
  for _ in $(seq 1 180); do  # warm-up: 5 steps done
    [[ -f $D/steps.log && $(wc -l <"$D/steps.log") -ge 5 ]] && break
    kill -0 "${TRAIN_PIDS[0]}" 2>/dev/null || { status=workload-failed; break; }
    sleep 1
  done
  [[ -f $D/steps.log && $(wc -l <"$D/steps.log") -ge 5 ]] || status=${status/ok/warmup-timeout}
  if [[ $status != ok ]]; then
    echo "   $status: $(tail -1 "$D/workload.log" 2>/dev/null)" >&2
    cleanup_run
    printf '%s\t%s\t%s\t%s\t\t\t\t%s\t%s\t%s\n' "$name" "$model" "$ddp" "$fault" "$run_s" "$D" "$status" >>"$MAN"
    continue
  fi
  sync  # dirty pages of earlier work would be a second, unrelated anomaly
  "$REVEAL" record -q -o "$D/run.db" --interval 1s --duration "${run_s}s" >"$D/record.log" 2>&1 &
  REC_PID=$!
  sleep "$at_s"
  $PY "$HERE/faults.py" inject "$fault" --duration "$f_s" --pgid "${TRAIN_PIDS[0]}" --model "$model" \
    --tmpdir "$D" --label "$D/label.json" "${FAULT_ARGS[@]}" >/dev/null &
  FAULT_PID=$!
  wait "$FAULT_PID" || status=fault-failed
  FAULT_PID=""
  wait "$REC_PID" || status=record-failed
  REC_PID=""
  kill -0 "${TRAIN_PIDS[0]}" 2>/dev/null || status=workload-died
  cleanup_run
  read -r sub f0 f1 < <($PY -c 'import json,sys; l=json.load(open(sys.argv[1])); print(l["subsystem"], l["start_unix_ns"], l["end_unix_ns"])' "$D/label.json" 2>/dev/null || echo "? 0 0")
  awk -v f0="$f0" -v f1="$f1" '{ t = $1 * 1e9; ph = (t < f0) ? "before" : (t <= f1 ? "during" : "after"); s[ph] += $3; n[ph]++ }
    END { for (p in n) printf "   %-6s fault: %4d steps, mean step %.3f s\n", p, n[p], s[p] / n[p] }' "$D/steps.log" | sort -k1,1r
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$model" "$ddp" "$fault" "$sub" "$f0" "$f1" "$run_s" "$D" "$status" >>"$MAN"
  echo "   $status"
done <"$LIST"
echo "manifest: $MAN"
