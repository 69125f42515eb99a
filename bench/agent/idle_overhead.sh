#!/usr/bin/env bash
# The agent's own cost at rest: a live `reveal agent` at 1 Hz with every probe; its own
# /metrics (process_cpu_seconds_total, process_resident_memory_bytes, reveal_samples_total,
# reveal_samples_skipped_total) read SETTLE_S after start and again DURATION_S later.
#   usage: bench/agent/idle_overhead.sh [build/reveal]      env: DURATION_S=300 SETTLE_S=30
set -euo pipefail
REVEAL=${1:-build/reveal}
DURATION_S=${DURATION_S:-300}
SETTLE_S=${SETTLE_S:-30}
T=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$REVEAL" agent --listen "127.0.0.1:$PORT" --store "$T/agent.db" -q &
AG=$!
trap 'kill $AG 2>/dev/null; rm -rf "$T"' EXIT
m() { curl -s "http://127.0.0.1:$PORT/metrics" >"$T/m.txt"; awk -v k="$1" '$1 == k {print $2}' "$T/m.txt"; }
sleep "$SETTLE_S"
c0=$(m process_cpu_seconds_total) s0=$(m reveal_samples_total) t0=$(date +%s.%N)
sleep "$DURATION_S"
c1=$(m process_cpu_seconds_total) s1=$(m reveal_samples_total) t1=$(date +%s.%N)
rss=$(m process_resident_memory_bytes) skipped=$(m reveal_samples_skipped_total) bytes=$(m reveal_store_bytes)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$AG/status")
python3 - "$c0" "$c1" "$t0" "$t1" "$s0" "$s1" "$rss" "$skipped" "$bytes" "$hwm" <<'PY'
import sys
c0, c1, t0, t1, s0, s1, rss, skipped, store, hwm = map(float, sys.argv[1:])
print(f"agent over {t1 - t0:.0f} s: CPU {c1 - c0:.2f} s = {100 * (c1 - c0) / (t1 - t0):.3f} % of one core; "
      f"samples {s1 - s0:.0f}, skipped {skipped:.0f}; RSS {rss / 2**20:.1f} MiB (peak {hwm / 1024:.1f} MiB); "
      f"store {store / 1024:.0f} KiB")
PY
kill -TERM $AG
wait $AG
