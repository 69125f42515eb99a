#!/usr/bin/env bash
# Overhead of `reveal record` side by side with prometheus-node-exporter and Netdata (issue #3).
#
# One run starts, concurrently and on loopback only:
#   - reveal record, all available probes, at 1 Hz and at 10 Hz (two recorders);
#   - prometheus-node-exporter (default collectors) on 127.0.0.1:<free port>, scraped once per
#     second by a minimal curl loop (the scraper's own cost is reported on a separate line);
#   - netdata (Debian's default configuration, 1 s update) with its config, database, logs and
#     web server (127.0.0.1:<free port>) in a temp dir.
# After a warm-up (BENCH_WARMUP_S, default 30 s) every process *tree* is measured over the same
# wall interval (BENCH_S, default 600 s): CPU = utime+stime of every live process in the tree plus
# the cutime+cstime of reaped children, from /proc/<pid>/stat, sampled every BENCH_STEP_S (5 s).
# Reported: CPU seconds per hour and share of one core over the whole window, the median of the
# per-BENCH_BLOCK_S (60 s) rates, peak tree RSS (sampled sum of VmRSS, and sum of VmHWM), peak
# tree PSS, and for reveal the bytes per second stored.
# Instances a package may have started are not measured (only the trees started here are).
#
#   usage: bench/compare_overhead.sh [--short] [path/to/reveal]     (default build/reveal)
#   --short: 60 s window after a 10 s warm-up, a smoke check.
#   The comparison tools come from `bench/setup.sh` (opt-in, not part of scripts/setup.sh).
set -euo pipefail
SHORT=0
if [[ ${1:-} == --short ]]; then SHORT=1; shift; fi
REVEAL=$(readlink -f "${1:-build/reveal}")
S=${BENCH_S:-$((SHORT ? 60 : 600))}
WARM=${BENCH_WARMUP_S:-$((SHORT ? 10 : 30))}
STEP=${BENCH_STEP_S:-5}
BLOCK=${BENCH_BLOCK_S:-$((SHORT ? 20 : 60))}

[[ -x $REVEAL ]] || { echo "compare_overhead: $REVEAL is not an executable (build reveal first)" >&2; exit 2; }
for tool in prometheus-node-exporter netdata curl python3; do
  command -v "$tool" >/dev/null || { echo "compare_overhead: $tool missing; run bench/setup.sh" >&2; exit 2; }
done

T=$(mktemp -d /tmp/reveal-compare.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n ${KEEP_TMP:-} ]] || rm -rf "$T"
}
trap cleanup EXIT
trap 'echo "compare_overhead: failed at line $LINENO (KEEP_TMP=1 keeps $T)" >&2' ERR

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PNE=$(free_port)
PND=$(free_port)
while [[ $PND == "$PNE" ]]; do PND=$(free_port); done

# Netdata: Debian's stock configuration (/usr/lib/netdata/conf.d), everything writable in $T.
ND=$T/netdata
mkdir -p "$ND"/{etc,cache,lib,log,run}
touch "$ND/etc/.opt-out-from-anonymous-statistics"  # no phone-home attempts from an offline host
NDUSER=root
id netdata >/dev/null 2>&1 && NDUSER=netdata        # the package's default "run as user"
cat >"$ND/etc/netdata.conf" <<EOF
[global]
	run as user = $NDUSER
	hostname = reveal-bench
[directories]
	config = $ND/etc
	stock config = /usr/lib/netdata/conf.d
	log = $ND/log
	cache = $ND/cache
	lib = $ND/lib
	lock = $ND/lib/lock
	home = $ND/lib
	run = $ND/run
[logs]
	debug log = $ND/log/debug.log
	error log = $ND/log/error.log
	access log = $ND/log/access.log
	collector log = $ND/log/collector.log
	health log = $ND/log/health.log
[web]
	bind to = 127.0.0.1:$PND
[cloud]
	enabled = no
EOF
[[ $NDUSER == root ]] || chown -R "$NDUSER" "$ND"

others=$(ps -eo pid=,comm= | awk '$2 == "netdata" || $2 == "prometheus-node" { printf "%s ", $1 }')
[[ -z $others ]] || echo "compare_overhead: note: already running (not measured, but they load the host): pids $others" >&2

scrape_loop() {  # one GET per second (or per response time, if slower), like a 1 s scrape_interval
  trap 'exit 0' TERM
  while :; do
    sleep 1 &
    curl -s -o /dev/null --max-time 5 -w '%{http_code} %{size_download} %{time_total}\n' \
      "http://127.0.0.1:$PNE/metrics" >>"$T/scrape.log" || echo "fail 0 0" >>"$T/scrape.log"
    wait $! || true
  done
}

START_NS=$(date +%s%N)
"$REVEAL" record -q -o "$T/r1.db" --interval 1s 2>"$T/r1.err" &
R1=$!; PIDS+=("$R1")
"$REVEAL" record -q -o "$T/r10.db" --interval 100ms 2>"$T/r10.err" &
R10=$!; PIDS+=("$R10")
prometheus-node-exporter --web.listen-address="127.0.0.1:$PNE" --log.level=warn >"$T/ne.log" 2>&1 &
NE=$!; PIDS+=("$NE")
netdata -D -c "$ND/etc/netdata.conf" -P "$ND/run/netdata.pid" >"$T/nd.out" 2>&1 &
NDP=$!; PIDS+=("$NDP")
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PNE/metrics" && break; sleep 0.2; done
scrape_loop &
SC=$!; PIDS+=("$SC")

echo "compare_overhead: warm-up ${WARM}s, then ${S}s measured (sampling every ${STEP}s); pids:" \
     "reveal-1Hz $R1 reveal-10Hz $R10 node-exporter $NE scraper $SC netdata $NDP; tmp $T" >&2

python3 - "$T/samples.json" "$WARM" "$S" "$STEP" "$NDUSER" \
  "reveal record 1 Hz=$R1" "reveal record 10 Hz=$R10" "prometheus-node-exporter=$NE" \
  "netdata=$NDP" "scraper (curl loop, 1 Hz)=$SC" <<'PY'
# Samples the CPU time and memory of each process tree; writes the series as JSON.
import json, os, pwd, sys, time
out, warm, dur, step, nduser = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
roots = dict(a.split("=", 1) for a in sys.argv[6:])
roots = {k: int(v) for k, v in roots.items()}
tck = os.sysconf("SC_CLK_TCK")
nd_uid = pwd.getpwnam(nduser).pw_uid if nduser != "root" else None

def status_kb(pid, keys):
    r = dict.fromkeys(keys, 0)
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k = line.split(":", 1)[0]
                if k in r: r[k] = int(line.split()[1])
    except OSError: pass
    return r

def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"): return int(line.split()[1])
    except OSError: pass
    return 0

def snapshot():
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit(): continue
        try:
            with open(f"/proc/{d}/stat") as f: s = f.read()
            st = os.stat(f"/proc/{d}")
        except OSError: continue
        rest = s[s.rfind(")") + 2:].split()
        procs[int(d)] = dict(ppid=int(rest[1]), cpu=sum(int(x) for x in rest[11:15]) / tck,
                             comm=s[s.find("(") + 1:s.rfind(")")], uid=st.st_uid)
    kids = {}
    for p, v in procs.items(): kids.setdefault(v["ppid"], []).append(p)
    t = time.monotonic()
    with open("/proc/stat") as f: host = [int(x) for x in f.readline().split()[1:]]
    res = dict(t=t, host_busy=(sum(host) - host[3] - host[4]) / tck, host_total=sum(host) / tck, trees={})
    seen = set()
    for name, root in roots.items():
        tree, todo = [], [root] if root in procs else []
        while todo:
            p = todo.pop(); tree.append(p); todo += kids.get(p, [])
        seen.update(tree)
        mem = [status_kb(p, ("VmRSS", "VmHWM")) for p in tree]
        res["trees"][name] = dict(alive=root in procs, n=len(tree), cpu=sum(procs[p]["cpu"] for p in tree),
                                  rss=sum(m["VmRSS"] for m in mem), hwm=sum(m["VmHWM"] for m in mem),
                                  pss=sum(pss_kb(p) for p in tree),
                                  comms=sorted({procs[p]["comm"] for p in tree}))
    # processes of the netdata user outside our netdata tree (reparented helpers, or an
    # instance the package started): reported, not counted
    stray = [p for p, v in procs.items() if nd_uid is not None and v["uid"] == nd_uid and p not in seen]
    res["stray_netdata_uid"] = [(p, procs[p]["comm"]) for p in stray]
    return res

t0 = time.monotonic()
series = []
k = 0
while True:
    target = t0 + k * step
    if target > t0 + warm + dur + 1e-6: break
    time.sleep(max(0.0, target - time.monotonic()))
    snap = snapshot(); snap["rel"] = snap["t"] - t0; series.append(snap); k += 1
self_cpu = sum(os.times()[:2])
json.dump(dict(series=series, warm=warm, dur=dur, step=step, sampler_cpu_s=self_cpu), open(out, "w"))
PY

# Context read after the window (outside it): what each tool collects.
CH_R=$("$REVEAL" probes 2>/dev/null | tail -1 | awk '{print $1}')
CH_NE=$(curl -s "http://127.0.0.1:$PNE/metrics" | grep -vc '^#' || true)
CH_ND=$(curl -s "http://127.0.0.1:$PND/api/v1/charts" | python3 -c \
  'import json,sys; d=json.load(sys.stdin); print(d["dimensions_count"], d["charts_count"], d["update_every"])' 2>/dev/null || echo "? ? ?")
ND_PLUGINS=$(grep -o "connected to '[^']*'" "$ND/log/error.log" 2>/dev/null | sed "s|.*/||; s|'||" | sort -u | tr '\n' ' ' || true)
ND_DISABLED=$(grep -oE "PLUGINSD\[[a-z.]+\] : .*(Disabling it|exited with)" "$ND/log/error.log" 2>/dev/null |
  sed -E 's/PLUGINSD\[([a-z.]+)\].*/\1/' | sort -u | tr '\n' ' ' || true)
END_NS=$(date +%s%N)

# Stop the recorders (SIGTERM ends a recording cleanly and checkpoints the store).
kill -TERM "$R1" "$R10"
wait "$R1" || true
wait "$R10" || true
STOP_NS=$(date +%s%N)
R1_BYTES=$(stat -c %s "$T/r1.db")
R10_BYTES=$(stat -c %s "$T/r10.db")
samples_in() { "$REVEAL" info "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])' 2>/dev/null || echo "?"; }
R1_N=$(samples_in "$T/r1.db")
R10_N=$(samples_in "$T/r10.db")

python3 - "$T/samples.json" "$T/scrape.log" "$((STOP_NS - START_NS))" "$R1_BYTES" "$R10_BYTES" \
  "$R1_N" "$R10_N" "$CH_R" "$CH_NE" "$CH_ND" "$ND_PLUGINS" "$ND_DISABLED" "$BLOCK" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
scr = [l.split() for l in open(sys.argv[2])] if sys.argv[2] else []
rec_s = int(sys.argv[3]) / 1e9
r1b, r10b, r1n, r10n, chr_, chne, chnd, ndplug, nddis, block = sys.argv[4:14]
ser, warm, dur, step = d["series"], d["warm"], d["dur"], d["step"]
w = [s for s in ser if s["rel"] >= warm - 1e-6]
a, b = w[0], w[-1]
span = b["t"] - a["t"]
per = max(1, round(float(block) / step))

rows = {}
for name in a["trees"]:
    cpu = b["trees"][name]["cpu"] - a["trees"][name]["cpu"]
    rates = [(w[i + per]["trees"][name]["cpu"] - w[i]["trees"][name]["cpu"]) / (w[i + per]["t"] - w[i]["t"])
             for i in range(0, len(w) - per, per)]
    rows[name] = dict(
        cpu_h=cpu / span * 3600, core=cpu / span * 100,
        med=statistics.median(rates) * 100 if rates else float("nan"),
        lo=min(rates) * 100 if rates else float("nan"), hi=max(rates) * 100 if rates else float("nan"),
        rss=max(s["trees"][name]["rss"] for s in ser) / 1024,
        hwm=max(s["trees"][name]["hwm"] for s in ser) / 1024,
        pss=max(s["trees"][name]["pss"] for s in ser) / 1024,
        nproc=max(s["trees"][name]["n"] for s in ser),
        comms=sorted({c for s in ser for c in s["trees"][name]["comms"]}),
        alive=b["trees"][name]["alive"],
        startup=(a["trees"][name]["cpu"] - ser[0]["trees"][name]["cpu"]))
host_busy = (b["host_busy"] - a["host_busy"]) / (b["host_total"] - a["host_total"]) * 100

nd_metrics = chnd.split()[0] if chnd.split() else "?"
chan = {"reveal record 1 Hz": chr_, "reveal record 10 Hz": chr_, "prometheus-node-exporter": f"{chne} series",
        "netdata": f"{nd_metrics} dimensions"}
stored = {"reveal record 1 Hz": f"{int(r1b) / rec_s:.0f} B/s", "reveal record 10 Hz": f"{int(r10b) / rec_s:.0f} B/s"}

print(f"window: {span:.0f} s after a {warm:.0f} s warm-up; CPU sampled every {step:.0f} s, "
      f"median over {per * step:.0f} s blocks; host CPU busy in the window: {host_busy:.1f} % of all cores")
print()
print("| process tree | collects | CPU s per hour | share of one core | median (min–max) per block | "
      "peak RSS (Σ VmRSS) | Σ VmHWM | peak PSS | stored |")
print("|---|---|---|---|---|---|---|---|---|")
for name, r in rows.items():
    if name.startswith("scraper"): continue
    print(f"| {name} | {chan.get(name, '')} | {r['cpu_h']:.1f} | {r['core']:.3f} % | "
          f"{r['med']:.3f} % ({r['lo']:.3f}–{r['hi']:.3f}) | {r['rss']:.1f} MiB | {r['hwm']:.1f} MiB | "
          f"{r['pss']:.1f} MiB | {stored.get(name, '—')} |")
sc = rows["scraper (curl loop, 1 Hz)"]
ok = [x for x in scr if x[0] == "200"]
print()
print(f"scraper (bash loop + curl, not counted above): {sc['cpu_h']:.1f} CPU s/h ({sc['core']:.3f} % of one core), "
      f"{len(scr)} scrapes, {len(ok)} HTTP 200, mean {statistics.mean(float(x[1]) for x in ok) / 1024 if ok else 0:.0f} KiB, "
      f"mean {statistics.mean(float(x[2]) for x in ok) * 1000 if ok else 0:.0f} ms each")
r1, r10 = rows["reveal record 1 Hz"], rows["reveal record 10 Hz"]
ne, nd = rows["prometheus-node-exporter"], rows["netdata"]
def ratio(x, y): return f"{x / y:.2f}" if y > 0 else "n/a"
print(f"ratios, CPU (whole window): reveal 1 Hz / node-exporter = {ratio(r1['core'], ne['core'])}, "
      f"reveal 1 Hz / netdata = {ratio(r1['core'], nd['core'])}, "
      f"reveal 10 Hz / node-exporter = {ratio(r10['core'], ne['core'])}, reveal 10 Hz / netdata = {ratio(r10['core'], nd['core'])}")
print(f"ratios, peak RSS: reveal 1 Hz / node-exporter = {ratio(r1['rss'], ne['rss'])}, "
      f"reveal 1 Hz / netdata = {ratio(r1['rss'], nd['rss'])}")
print(f"reveal stores: 1 Hz {r1n} samples, {int(r1b)} B; 10 Hz {r10n} samples, {int(r10b)} B; over {rec_s:.0f} s recorded")
print(f"startup CPU (first {warm:.0f} s, not in the window): " +
      ", ".join(f"{n} {r['startup']:.2f} s" for n, r in rows.items()))
print(f"netdata tree: up to {nd['nproc']} processes ({', '.join(nd['comms'])}); plugins started: {ndplug.strip()}; "
      f"exited/disabled: {nddis.strip() or 'none'}; {(chnd.split() + ['?'] * 3)[1]} charts, "
      f"update every {(chnd.split() + ['?'] * 3)[2]} s")
dead = [n for n, r in rows.items() if not r["alive"]]
if dead: print(f"WARNING: not running at the end of the window: {', '.join(dead)}")
stray = {tuple(x) for s in ser for x in s["stray_netdata_uid"]}
if stray: print(f"note: netdata-user processes outside the measured tree (not counted): {sorted(stray)}")
print(f"sampler's own CPU: {d['sampler_cpu_s']:.2f} s")
PY
