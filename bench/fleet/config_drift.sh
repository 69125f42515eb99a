#!/usr/bin/env bash
# Issue #22's "configuration drift across a fleet" at fleet size: N hosts (copies of
# tests/fixtures/config-2socket) of which a few drift — host-013 MTU 1500 (the rest 9000),
# host-027 and host-071 NIC PCIe x8 (x16), host-042 THP "never" (always), host-050..052 the
# powersave governor (performance), and half the fleet on one kernel, half on another (a split,
# not a drift). Each host is read three ways — live roots, stores recorded over them (300 ms), and
# the stores exported as OpenMetrics and backfilled into one Prometheus — and `reveal config
# drift` runs over all N under GNU time: wall s, peak RSS MB, and whether the ranking is exactly the
# planted drifts (mtu, pcie x2 hosts, governor, thp; kernel split). Writes OUT/results.tsv.
# The stores are recorded one after another (about 0.33 s a host), so at 1000 hosts the first
# host's last sample is 5.5 minutes older than the last host's: Prometheus runs with a 30-minute
# --query.lookback-delta (its default, 5 minutes, would leave the first hosts out of the instant
# query at the last host's end, as it would for a fleet backfilled from stores that end at
# different times). REUSE=1 keeps OUT's hosts, stores and TSDB from an earlier run with the same N.
# usage: bench/fleet/config_drift.sh OUT REVEAL [N=100] [FIXTURE=tests/fixtures/config-2socket]
set -uo pipefail
out=$1 bin=$2 n=${3:-100} fix=${4:-$(dirname "$0")/../../tests/fixtures/config-2socket}
hosts=()
for ((i = 0; i < n; i++)); do hosts+=("$(printf 'host-%03d' "$i")"); done
H="$out/hosts"
if [[ ${REUSE:-0} == 1 && -d $out/tsdb && -f $out/fleet.om ]]; then
  echo "reusing $out (REUSE=1)" >&2
else
rm -rf "$out" && mkdir -p "$out/hosts"
for h in "${hosts[@]}"; do
  d="$H/$h" && i=$((10#${h#host-}))
  cp -r "$fix" "$d"
  echo 9000 >"$d/sys/class/net/eth0/mtu"
  echo 16 >"$d/sys/class/net/eth0/device/current_link_width"
  echo '[always] madvise never' >"$d/sys/kernel/mm/transparent_hugepage/enabled"
  for g in "$d"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor "$d"/sys/devices/system/cpu/cpufreq/policy*/scaling_governor; do
    echo performance >"$g"
  done
  ((i % 2)) && echo 6.1.0-27-amd64 >"$d/proc/sys/kernel/osrelease"
done
echo 1500 >"$H/host-013/sys/class/net/eth0/mtu"
echo 8 >"$H/host-027/sys/class/net/eth0/device/current_link_width"
echo 8 >"$H/host-071/sys/class/net/eth0/device/current_link_width"
echo 'always madvise [never]' >"$H/host-042/sys/kernel/mm/transparent_hugepage/enabled"
for h in host-050 host-051 host-052; do
  for g in "$H/$h"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor "$H/$h"/sys/devices/system/cpu/cpufreq/policy*/scaling_governor; do
    echo powersave >"$g"
  done
done

t0=$(date +%s.%N)
for h in "${hosts[@]}"; do
  "$bin" record -q -o "$out/$h.db" --root "$H/$h" --probes proc.stat --duration 300ms --interval 100ms || echo "record $h failed" >&2
  "$bin" export "$out/$h.db" --format openmetrics --label "instance=$h" -o "$out/$h.om" 2>/dev/null || echo "export $h failed" >&2
done
echo "recorded and exported $n stores in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" >&2
{
  for h in "${hosts[@]}"; do grep -v '^# EOF' "$out/$h.om"; done
  echo '# EOF'
} >"$out/fleet.om"
promtool tsdb create-blocks-from openmetrics "$out/fleet.om" "$out/tsdb" >"$out/promtool.log" 2>&1 || { tail -3 "$out/promtool.log"; exit 1; }
fi
at=$(awk '$1 != "#" && $NF > t {t = $NF} END {print int(t) + 1}' "$out/fleet.om")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 15s\n' >"$out/prometheus.yml"
prometheus --config.file="$out/prometheus.yml" --storage.tsdb.path="$out/tsdb" --storage.tsdb.retention.time=100y \
  --query.lookback-delta=30m --web.listen-address="127.0.0.1:$port" --log.level=warn >"$out/prometheus.log" 2>&1 &
prom=$!
trap 'kill $prom 2>/dev/null; wait $prom 2>/dev/null' EXIT
for _ in $(seq 300); do curl -sf --max-time 1 "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.2; done

roots=() stores=()
for h in "${hosts[@]}"; do roots+=(--root "$H/$h") && stores+=("$out/$h.db"); done
printf 'source\thosts\thosts_seen\texit\twall_s\tpeak_rss_mb\tdrifts\tsplit\tanswer\n' >"$out/results.tsv"
measure() {  # measure SOURCE ARGS...
  local src=$1 && shift
  /usr/bin/time -f '%e %M' -o "$out/time.txt" "$bin" config drift --json "$@" >"$out/$src.json" 2>"$out/$src.err"
  local rc=$? t rss
  read -r t rss < <(tail -1 "$out/time.txt")
  local ans
  ans=$(python3 - "$out/$src.json" <<'PY' 2>&1
import json, os, sys
d = json.load(open(sys.argv[1]))
name = lambda h: os.path.basename(h).removesuffix(".db")
got = [(x["key"], sorted(name(h) for m in x["minority"] for h in m["hosts"])) for x in d["drifts"]]
want = {("net.eth0.mtu", ("host-013",)), ("net.eth0.pcie.current_link_width", ("host-027", "host-071")),
        ("cpu.governor", ("host-050", "host-051", "host-052")), ("thp.enabled", ("host-042",))}
keys = [k for k, _ in got]
ok = {(k, tuple(h)) for k, h in got} == want and keys.index("net.eth0.mtu") < 2
print(("exact" if ok else "WRONG") + " " + ",".join(f"{k}:{'+'.join(h)}" for k, h in got) +
      " split=" + ",".join(x["key"] for x in d["split"]))
PY
)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$src" "$n" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hosts"]))' "$out/$src.json" 2>/dev/null)" "$rc" "$t" "$((rss / 1024))" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["drifts"]))' "$out/$src.json" 2>/dev/null)" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["split"]))' "$out/$src.json" 2>/dev/null)" \
    "$ans" | tee -a "$out/results.tsv"
}
measure roots "${roots[@]}"
measure stores "${stores[@]}"
measure prometheus --prometheus "http://127.0.0.1:$port" --at "$at"
