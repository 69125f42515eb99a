#!/usr/bin/env bash
# One measurement on a fleet TSDB that bench/fleet/run.sh built (start it with OUT_DIR/serve.sh):
# `reveal detect --prometheus` over host-000 .. host-<N-1> (an exact instance regex), 15-s step,
# JSON, under GNU time, `timeout` and `ulimit -v 16 GB`; appends one row to OUT/results.tsv:
# label, mode (each|peers), hosts, exit, wall s, peak RSS MB, the answer (each: hosts reported,
# incidents in all, host-007's, the host with most; peers: odd_host, hosts flagged, the top two
# scores), the error's first 150 bytes.
# usage: PORT=38823 START=1796511315 END=1796597700 bench/fleet/measure.sh OUT LABEL each|peers N TIMEOUT_S REVEAL [ARGS...]
set -uo pipefail
out=$1 label=$2 mode=$3 n=$4 to=$5 bin=$6
shift 6
mkdir -p "$out"
[[ -f $out/results.tsv ]] || printf 'binary\tmode\thosts\texit\twall_s\tpeak_rss_mb\tanswer\terror\n' >"$out/results.tsv"
re=$(python3 -c "import sys; n=int(sys.argv[1]); print('|'.join(f'host-{i:03d}' for i in range(n)))" "$n")
(
  ulimit -v 16000000
  /usr/bin/time -f '%e %M' -o "$out/time.txt" timeout "$to" "$bin" detect --prometheus "http://127.0.0.1:$PORT" \
    --match "{job=\"reveal\",instance=~\"$re\"}" --start "$START" --end "$END" --step 15s --no-progress --json "$@" \
    >"$out/out.json" 2>"$out/err.txt"
)
rc=$?
read -r t rss < <(tail -1 "$out/time.txt")
ans=$(python3 - "$out/out.json" "$mode" <<'PY' 2>/dev/null || echo "-"
import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[2] == "peers":
    h = d["hosts"]
    print(f"odd_host={d['odd_host']} flagged={len(d['flagged'])} top={h[0]['host']}:{h[0]['score']:.2f} next={h[1]['host']}:{h[1]['score']:.2f}")
else:
    inc = {x["source"].rsplit("instance=", 1)[1]: len(x["incidents"]) for x in d}
    top = max(inc, key=inc.get)
    print(f"hosts={len(d)} incidents={sum(inc.values())} host-007={inc.get('host-007', '-')} most={top}:{inc[top]}")
PY
)
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$mode" "$n" "$rc" "$t" "$((rss / 1024))" "$ans" \
  "$(head -c 150 "$out/err.txt" | tr '\n\t' '  ')" | tee -a "$out/results.tsv"
