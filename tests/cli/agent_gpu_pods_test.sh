#!/usr/bin/env bash
# GPUs named after the pods that hold them (issue #20): the agent on a host with two GPUs (the
# NVML double) asks a stand-in kubelet (tests/telemetry/kubelet/fake_kubelet.h, as a process)
# over its pod-resources unix socket. /metrics shows reveal_gpu_pod_info and the pod labels on
# the GPU's nvml series and follows the kubelet: a pod that ends loses its labels, a kubelet
# that goes away is counted (reveal_kubelet_pod_resources_up 0) and the agent keeps sampling.
# The holders' changes are stored as events; an agent replaying a store and `reveal detect` of
# it name the same pod on an incident's GPU.
# usage: agent_gpu_pods_test.sh REVEAL FIXTURES NVML_DOUBLE
set -uo pipefail
REVEAL=$1
NVML_DOUBLE=$3
KUBELET=$(dirname "$REVEAL")/tests/reveal_fake_kubelet
[[ -x $KUBELET ]] || { echo "FAIL: no $KUBELET (built with the tests)"; exit 1; }
T=$(mktemp -d /tmp/reveal-gpupods-XXXXXX)  # short: a unix socket path holds at most 107 bytes
# Never `kill 0`: that is the whole process group (ctest with it). Empty once a process is gone.
AGENT="" KPID=""
trap 'for p in $AGENT $KPID; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail

GPU0=GPU-00000000-0000-0000-0000-000000000000  # the double's UUIDs (nvml_double.cpp)
GPU1=GPU-11111111-1111-1111-1111-111111111111
printf '%s\n' "ml trainer-0 worker nvidia.com/gpu $GPU0" \
  "infer server-a main nvidia.com/gpu $GPU1::0" \
  "infer server-b main nvidia.com/gpu $GPU1::1" \
  "ml data-loader app example.com/none none" >"$T/pods"
"$KUBELET" "$T/k.sock" "$T/pods" 2>"$T/kubelet.log" &
KPID=$!
printf '%s\n' 'probes = ["nvml", "proc.stat"]' 'interval = "200ms"' '[kubernetes]' \
  "pod_resources_socket = \"$T/k.sock\"" 'pod_resources_interval = "1s"' >"$T/agent.toml"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
REVEAL_NVML_LIBRARY=$NVML_DOUBLE "$REVEAL" agent --config "$T/agent.toml" --store "$T/a.db" \
  --listen "127.0.0.1:$PORT" >"$T/agent.log" 2>&1 &
AGENT=$!

# Polls /metrics (at most 30 s) until it holds the extended regular expression $1.
wait_metrics() {
  for _ in $(seq 150); do
    curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/metrics" 2>/dev/null && grep -Eq "$1" "$T/metrics" && return 0
    sleep 0.2
  done
  return 1
}

if wait_metrics '^reveal_gpu_pod_info'; then
  grep -q "^reveal_gpu_pod_info{gpu=\"gpu0\",uuid=\"$GPU0\",namespace=\"ml\",pod=\"trainer-0\",container=\"worker\",resource=\"nvidia.com/gpu\"} 1$" "$T/metrics" ||
    fail "gpu0's holder: $(grep reveal_gpu_pod_info "$T/metrics")"
  [[ $(grep -c '^reveal_gpu_pod_info{gpu="gpu1"' "$T/metrics") == 2 ]] ||
    fail "gpu1 time-sliced between two pods: $(grep reveal_gpu_pod_info "$T/metrics")"
  grep -q 'data-loader' "$T/metrics" && fail "a device that is no GPU was joined to one"
  grep -Eq '^reveal_nvml_utilization_gpu\{channel="nvml:utilization_gpu.gpu0",[^}]*entity="gpu0",namespace="ml",pod="trainer-0",container="worker"\} ' "$T/metrics" ||
    fail "gpu0's nvml series carry no pod labels: $(grep '^reveal_nvml_utilization_gpu' "$T/metrics")"
  grep -Eq '^reveal_nvml_utilization_gpu\{channel="nvml:utilization_gpu.gpu1",[^}]*entity="gpu1"\} ' "$T/metrics" ||
    fail "a shared GPU's series got pod labels: $(grep '^reveal_nvml_utilization_gpu' "$T/metrics")"
  grep -q '^reveal_kubelet_pod_resources_up 1$' "$T/metrics" || fail "reveal_kubelet_pod_resources_up is not 1"
  curl -sf "http://127.0.0.1:$PORT/incidents" | python3 -c '
import json, sys
j = json.load(sys.stdin)
got = [(p["gpu"], p["pod"]) for p in j["gpu_pods"]]
sys.exit(0 if got == [("gpu0", "trainer-0"), ("gpu1", "server-a"), ("gpu1", "server-b")] else 1)' ||
    fail "/incidents gpu_pods: $(curl -s "http://127.0.0.1:$PORT/incidents" | grep -A3 gpu_pods | head -20)"
else
  fail "no reveal_gpu_pod_info within 30 s: $(tail -5 "$T/agent.log"; cat "$T/kubelet.log")"
fi

# The trainer ends: its GPU's info and labels go.
grep -v trainer-0 "$T/pods" >"$T/pods.new" && mv "$T/pods.new" "$T/pods"
gone=0
for _ in $(seq 100); do
  if curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/metrics" && ! grep -q 'trainer-0' "$T/metrics"; then gone=1; break; fi
  sleep 0.2
done
((gone)) || fail "the ended pod is still shown after 20 s"

# The kubelet goes away: counted, and sampling goes on.
kill $KPID && wait $KPID 2>/dev/null
KPID=""
wait_metrics '^reveal_kubelet_pod_resources_up 0$' || fail "a kubelet gone is not reveal_kubelet_pod_resources_up 0"
grep -Eq '^reveal_kubelet_pod_resources_errors_total [1-9]' "$T/metrics" || fail "no failed call counted"
grep -q '^reveal_gpu_pod_info{gpu="gpu1"' "$T/metrics" || fail "the last answer's holders were dropped with the kubelet"
s1=$(grep '^reveal_samples_total ' "$T/metrics" | cut -d' ' -f2)
sleep 1
s2=$(curl -sf "http://127.0.0.1:$PORT/metrics" | grep '^reveal_samples_total ' | cut -d' ' -f2)
[[ -n $s1 && -n $s2 && $s2 -gt $s1 ]] || fail "sampling stopped with the kubelet ($s1 -> $s2)"
[[ $(grep -c 'kubelet pod-resources' "$T/agent.log") == 2 ]] ||
  fail "want one log line at the first answer and one at the failure: $(grep kubelet "$T/agent.log")"

kill -TERM $AGENT && wait $AGENT
rc=$?
AGENT=""
[[ $rc == 0 ]] || fail "the agent exited $rc: $(tail -3 "$T/agent.log")"
# --- Parity: a store whose events say who held gpu0 (as the agent writes them), replayed by the
# agent and read by `reveal detect --streaming`: both name the pod on the incident's GPU. 400
# samples every 50 ms (the agent's 10-s settle takes 200, the warm-up 100); at sample 330 the
# GPU's utilisation drops and a stall share rises (a symptom), to the end.
python3 - "$T/run.csv" <<'PY'
import random, sys
random.seed(5)
t0 = 1_790_000_000_000_000_000
with open(sys.argv[1], "w") as f:
    f.write("t_unix_ns,nvml:utilization_gpu.gpu0,nvml:power_usage.gpu0,test.pressure:cpu_some_pct\n")
    for i in range(400):
        util = (20 if i >= 330 else 95) + random.gauss(0, 1)
        power = (150 if i >= 330 else 600) + random.gauss(0, 5)
        stall = max(0.0, (40 if i >= 330 else 1) + random.gauss(0, 0.5))
        f.write(f"{t0 + i * 50_000_000},{util:.3f},{power:.3f},{stall:.3f}\n")
PY
"$REVEAL" import csv "$T/run.csv" -o "$T/run.db" >"$T/import.log" 2>&1 || fail "import: $(cat "$T/import.log")"
python3 - "$T/run.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
t0 = 1_790_000_000_000_000_000
db.execute("insert into events values (?, 'kubelet', 'gpu_pods', 0, ?)",
           (t0 + 2_000_000_000, "gpu0 GPU-00000000-0000-0000-0000-000000000000 ml/trainer-0/worker=nvidia.com/gpu"))
db.commit()
PY
printf '%s\n' '[detect]' 'warmup = "5s"' 'history = "20s"' 'min_duration = "1s"' >"$T/replay.toml"
timeout 120 "$REVEAL" agent --config "$T/replay.toml" --replay "$T/run.db" --exit-after-replay --store "$T/out.db" \
  --listen "127.0.0.1:$PORT" >"$T/replay.log" 2>&1 || fail "the replaying agent failed: $(tail -3 "$T/replay.log")"
grep -q "incident closed: .*; pods on its GPUs: gpu0 ml/trainer-0 (worker)" "$T/replay.log" ||
  fail "the agent's incident does not name the pod on gpu0: $(grep incident "$T/replay.log")"
"$REVEAL" detect --streaming --agent-config "$T/replay.toml" "$T/out.db" --json >"$T/detect.json" 2>"$T/detect.err" || fail "detect: $(cat "$T/detect.err")"
python3 - "$T/detect.json" <<'PY' || fail "reveal detect --streaming does not name the pod: $(head -c 600 "$T/detect.json")"
import json, sys
inc = [i for i in json.load(open(sys.argv[1]))["incidents"] if i["kind"] == "anomaly"]
sys.exit(0 if inc and [(p["gpu"], p["pod"], p["container"]) for p in inc[0]["gpu_pods"]] == [("gpu0", "trainer-0", "worker")] else 1)
PY
((fails == 0)) && echo "agent gpu pods test passed"
exit $((fails > 0))
