#!/usr/bin/env bash
# Issue #19's "fleet scale through Prometheus" benchmark: a fleet of hosts × 24 h of ~800 channels
# backfilled into a real Prometheus server (promtool tsdb create-blocks-from openmetrics), then
# `reveal detect --prometheus` (one report per host) and `reveal detect --peers --prometheus` over
# the first N hosts: wall time, peak RSS (GNU time's %M) and the answer, for each binary given,
# side by side on the same server. See bench/fleet/README.md.
#
# usage: bench/fleet/run.sh OUT_DIR MAKE_LONG_STORE REVEAL_BIN [REVEAL_BIN ...]
#   e.g. bench/fleet/run.sh /tmp/fleet build-bench/bench/reveal_make_long_store /tmp/reveal-old build/reveal
#
# Environment (defaults in brackets):
#   HOSTS ["10 50 100"]        N values for plain `detect --prometheus` (hosts host-000 .. host-<N-1>)
#   PEERS_HOSTS ["10 50 64 100"] N values for `detect --peers --prometheus` ("" for none)
#   K [10]                     distinct 24-h stores; host i is store i mod K (twins, see README)
#   ODD [host-007]             the odd host: built from the sources WITHOUT their labels (faults kept)
#   ODD_SEED [7], SEED0 [1000] seeds (store k: SEED0 + k)
#   SRCS ["/tmp/day39/agent.db:/tmp/day39/labels.json /tmp/day40/... /tmp/day41/..."]
#                              host days (SRC.db:LABELS.json); the first fixes every store's start
#   HOURS [24]                 length of every host's recording
#   STEP [15s]                 export step (the "scrape interval") and the --step of detect
#   JOBS []                    passed as --jobs JOBS to binaries whose `detect --help` lists --jobs
#   BACKFILL_JOBS [2]          promtool processes at once (each ~0.9 GB RSS, one core)
#   EACH_VARIANTS [""]         '|'-separated extra arguments of the plain runs, one row each ("" =
#                              none), e.g. "|--whole-run" for two rows
#   PEERS_ARGS []              extra arguments of the --peers runs
#   EACH_TIMEOUT [1800], PEERS_TIMEOUT [900]  seconds per detect run (then "timeout")
#   MEM_LIMIT_MB [14000]       `ulimit -v` of each detect run (an allocation past it fails: the row
#                              says "failed"; keeps a --peers run from pushing the machine into OOM)
#   PORT [a free one]          Prometheus listen port (127.0.0.1)
#   SETTLE_S [90], COMPACT_WAIT_S [1800]  compaction is "settled" when the block count and
#                              compaction counter stay unchanged SETTLE_S seconds; wait at most
#                              COMPACT_WAIT_S (then measure anyway; the results say so)
#   BUILD_ONLY [0]             1: build stores + TSDB, settle compaction, exit (no detect runs)
#   APPEND [0]                 1: add rows to an existing results.tsv instead of starting it anew
#   KEEP_JSON [0]              1: keep each run's JSON answer (runs/*.json; 100 hosts: hundreds of MB)
#
# OUT_DIR is kept between runs: stores/, tsdb/ (the Prometheus data dir) and backfilled/ (one
# mark per host) are reused; only missing hosts are built. A mark that disagrees with this run's
# K/seeds/STEP/SRCS stops the script (remove OUT_DIR/tsdb and OUT_DIR/backfilled to rebuild).
# Writes OUT_DIR/results.tsv (one row per binary × mode × N), backfill.tsv, summary.txt,
# odd_faults.tsv, serve.sh (starts the server on the TSDB again), and prints results.tsv.
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n 2,40p "$0" >&2; exit 2; }
out=$(realpath -m "$1") mk=$(realpath "$2")
shift 2
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done

HOSTS=${HOSTS-10 50 100}
PEERS_HOSTS=${PEERS_HOSTS-10 50 64 100}
K=${K:-10}
ODD=${ODD:-host-007}
ODD_SEED=${ODD_SEED:-7}
SEED0=${SEED0:-1000}
SRCS=${SRCS:-/tmp/day39/agent.db:/tmp/day39/labels.json /tmp/day40/agent.db:/tmp/day40/labels.json /tmp/day41/agent.db:/tmp/day41/labels.json}
HOURS=${HOURS:-24}
STEP=${STEP:-15s}
JOBS=${JOBS:-}
BACKFILL_JOBS=${BACKFILL_JOBS:-2}
here=$(cd "$(dirname "$0")" && pwd)
EACH_VARIANTS=${EACH_VARIANTS-}
PEERS_ARGS=${PEERS_ARGS:-}
MEM_LIMIT_MB=${MEM_LIMIT_MB:-14000}
EACH_TIMEOUT=${EACH_TIMEOUT:-1800}
PEERS_TIMEOUT=${PEERS_TIMEOUT:-900}
SETTLE_S=${SETTLE_S:-90}
COMPACT_WAIT_S=${COMPACT_WAIT_S:-1800}
BUILD_ONLY=${BUILD_ONLY:-0}
KEEP_JSON=${KEEP_JSON:-0}
APPEND=${APPEND:-0}

mkdir -p "$out"/{stores,tsdb,backfilled,tmp,runs}
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$out/run.log" >&2; }

# The binary that exports: the first one whose `export --help` knows openmetrics.
exp_bin=
for b in "${bins[@]}"; do
  # (no `| grep -q`: with pipefail, grep leaving early can fail the pipeline through SIGPIPE)
  h=$("$b" export --help 2>&1 || true)
  if [[ $h == *openmetrics* ]]; then exp_bin=$b; break; fi
done
[[ -n $exp_bin ]] || { echo "none of the binaries has 'export --format openmetrics'" >&2; exit 2; }

read -r -a src_arr <<< "$SRCS"
odd_srcs=()
for s in "${src_arr[@]}"; do odd_srcs+=("${s%%:*}"); done

step_s() {  # 15s, 1m, 500ms? -> whole seconds (s, m, h only)
  local v=$1
  case $v in
    *ms) echo "step must be whole seconds" >&2; exit 2 ;;
    *s) echo "${v%s}" ;;
    *m) echo $(( ${v%m} * 60 )) ;;
    *h) echo $(( ${v%h} * 3600 )) ;;
    *) echo "$v" ;;
  esac
}
STEP_S=$(step_s "$STEP")

maxn=0
for n in $HOSTS $PEERS_HOSTS; do (( n > maxn )) && maxn=$n; done
hostname_of() { printf 'host-%03d' "$1"; }

# Selector regex for exactly host-000 .. host-<N-1>.
host_regex() {
  local n=$1
  if (( n <= 100 )); then
    local tens=$(( n / 10 )) ones=$(( n % 10 )) parts=()
    if (( tens == 10 )); then parts+=("host-0[0-9][0-9]")
    elif (( tens > 0 )); then parts+=("host-0[0-$((tens - 1))][0-9]"); fi
    (( ones > 0 )) && parts+=("host-0${tens}[0-$((ones - 1))]")
    local IFS='|'; echo "${parts[*]}"
  else
    local i parts=()
    for (( i = 0; i < n; i++ )); do parts+=("$(hostname_of "$i")"); done
    local IFS='|'; echo "${parts[*]}"
  fi
}

# ---- 1. stores -----------------------------------------------------------------------------
t_stores=$(date +%s.%N)
store_of() {  # host index -> store path
  local h; h=$(hostname_of "$1")
  if [[ $h == "$ODD" ]]; then echo "$out/stores/odd.db"; else echo "$out/stores/clean-$(( $1 % K )).db"; fi
}
nk=$(( maxn < K ? maxn : K ))
for (( k = 0; k < nk; k++ )); do
  s=$out/stores/clean-$k.db
  if [[ ! -f $s ]]; then
    /usr/bin/time -f '%e %M' -o "$out/tmp/mk.time" nice "$mk" --out "$s.part" --hours "$HOURS" --seed $(( SEED0 + k )) \
      --common-channels "${src_arr[@]}" > /dev/null 2> "$out/tmp/mk.err" || { cat "$out/tmp/mk.err" >&2; exit 3; }
    mv "$s.part" "$s"
    log "store clean-$k (seed $(( SEED0 + k ))): $(tail -1 "$out/tmp/mk.time" | awk '{printf "%s s, %.0f MB RSS", $1, $2/1024}'), $(du -m "$s" | cut -f1) MB"
  fi
done
if [[ ! -f $out/stores/odd.db ]]; then
  /usr/bin/time -f '%e %M' -o "$out/tmp/mk.time" nice "$mk" --out "$out/stores/odd.db.part" --hours "$HOURS" --seed "$ODD_SEED" \
    --verbose --common-channels "${odd_srcs[@]}" > /dev/null 2> "$out/stores/odd.verbose" || { cat "$out/stores/odd.verbose" >&2; exit 3; }
  mv "$out/stores/odd.db.part" "$out/stores/odd.db"
  log "store odd (seed $ODD_SEED, faults kept): $(tail -1 "$out/tmp/mk.time" | awk '{printf "%s s, %.0f MB RSS", $1, $2/1024}')"
fi
t_stores=$(echo "$(date +%s.%N) - $t_stores" | bc)

# The odd host's fault spans in its own time line: its blocks (--verbose) against the sources' labels.
odd_start=$("$exp_bin" info "$out/stores/odd.db" | awk '/^time/ && !d {print $2; d = 1}')
python3 - "$out/stores/odd.verbose" "$odd_start" "$out/odd_faults.tsv" "${src_arr[@]}" <<'EOF'
import json, re, sys, datetime as dt
verbose, start_iso, dest, *srcs = sys.argv[1:]
start = dt.datetime.fromisoformat(start_iso.replace('Z', '+00:00')).timestamp()
faults = []
for s in srcs:
    lab = s.split(':', 1)[1] if ':' in s else None
    fl = []
    if lab:
        for f in json.load(open(lab)).get('faults', []):
            if 'start_unix_ns' in f and 'end_unix_ns' in f:
                fl.append((f['start_unix_ns'], f['end_unix_ns'], f.get('id', '?'), f.get('kind', '?'), f.get('subsystem', '?')))
    faults.append(fl)
rows = []
for line in open(verbose):
    m = re.match(r'block \d+: out (\d+) \+(\d+) from source (\d+) t (\d+)\.\.(\d+)', line)
    if not m: continue
    o, n, si, t0, t1 = map(int, m.groups())
    for fs, fe, fid, kind, sub in faults[si]:
        a, b = max(fs, t0), min(fe, t1)
        if a <= b:
            # output sample o holds source time t0; samples are 1 s apart in both
            oa, ob = start + o + (a - t0) / 1e9, start + o + (b - t0) / 1e9
            rows.append((oa, ob, si, fid, kind, sub))
rows.sort()
iso = lambda t: dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
with open(dest, 'w') as f:
    f.write('start\tend\tseconds\tsource\tfault\tkind\tsubsystem\n')
    for oa, ob, si, fid, kind, sub in rows:
        f.write(f'{iso(oa)}\t{iso(ob)}\t{ob - oa:.0f}\t{si}\t{fid}\t{kind}\t{sub}\n')
print(f'odd host: {len(rows)} fault spans, {sum(r[1]-r[0] for r in rows):.0f} s of faults in its recording', file=sys.stderr)
EOF

# ---- 2. backfill -----------------------------------------------------------------------------
[[ -f $out/backfill.tsv ]] || printf 'host\tstore\texport_s\tpromtool_s\tpromtool_rss_mb\tblocks_mb\n' > "$out/backfill.tsv"
mark_of() {  # what a host's data is made of
  local i=$1 h; h=$(hostname_of "$i")
  if [[ $h == "$ODD" ]]; then echo "store=odd seed=$ODD_SEED hours=$HOURS step=$STEP srcs=${odd_srcs[*]}"
  else echo "store=clean-$(( i % K )) seed=$(( SEED0 + i % K )) hours=$HOURS step=$STEP srcs=$SRCS"; fi
}
backfill_host() {
  local i=$1 h store tmp t0 t1 t2 bytes
  h=$(hostname_of "$i"); store=$(store_of "$i"); tmp=$out/tmp/$h
  rm -rf "$tmp"; mkdir -p "$tmp/tsdb"
  t0=$(date +%s.%N)
  nice "$exp_bin" export "$store" --format openmetrics --step "$STEP" --label "instance=$h" -o "$tmp/$h.om" \
    --no-progress > /dev/null 2> "$tmp/export.err" || { cat "$tmp/export.err" >&2; return 3; }
  t1=$(date +%s.%N)
  /usr/bin/time -f '%e %M' -o "$tmp/time" nice promtool tsdb create-blocks-from openmetrics --max-block-duration=24h \
    "$tmp/$h.om" "$tmp/tsdb" > "$tmp/promtool.log" 2>&1 || { cat "$tmp/promtool.log" >&2; return 3; }
  t2=$(date +%s.%N)
  rm -f "$tmp/$h.om"
  bytes=$(du -sb "$tmp/tsdb" | cut -f1)
  local b
  for b in "$tmp"/tsdb/*; do
    [[ -d $b && $(basename "$b") =~ ^[0-9A-Z]{26}$ ]] && mv "$b" "$out/tsdb/"
  done
  mark_of "$i" > "$out/backfilled/$h"
  printf '%s\t%s\t%.1f\t%.1f\t%.0f\t%.1f\n' "$h" "$(basename "$store" .db)" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "$t2 - $t1" | bc)" "$(tail -1 "$tmp/time" | awk '{print $2/1024}')" "$(echo "$bytes / 1048576" | bc -l)" >> "$out/backfill.tsv"
  rm -rf "$tmp"
}
t_backfill=$(date +%s.%N)
todo=()
for (( i = 0; i < maxn; i++ )); do
  h=$(hostname_of "$i")
  if [[ -f $out/backfilled/$h ]]; then
    [[ $(cat "$out/backfilled/$h") == "$(mark_of "$i")" ]] || {
      echo "$out/backfilled/$h says '$(cat "$out/backfilled/$h")', this run wants '$(mark_of "$i")':" \
           "remove $out/tsdb and $out/backfilled to rebuild" >&2; exit 2; }
  else
    todo+=("$i")
  fi
done
if (( ${#todo[@]} > 0 )); then
  log "backfilling ${#todo[@]} hosts, $BACKFILL_JOBS at a time"
  running=0 done_n=0
  for i in "${todo[@]}"; do
    if (( running >= BACKFILL_JOBS )); then wait -n || { log "a backfill failed"; exit 3; }; running=$(( running - 1 )); done_n=$(( done_n + 1 )); fi
    backfill_host "$i" &
    running=$(( running + 1 ))
    (( done_n % 10 == 0 && done_n > 0 )) && log "  $done_n/${#todo[@]} backfilled"
  done
  while (( running > 0 )); do wait -n || { log "a backfill failed"; exit 3; }; running=$(( running - 1 )); done
fi
t_backfill=$(echo "$(date +%s.%N) - $t_backfill" | bc)
log "stores ${t_stores} s, backfill ${t_backfill} s (${#todo[@]} hosts new); TSDB $(du -sm "$out/tsdb" | cut -f1) MB before compaction"

# ---- 3. Prometheus ---------------------------------------------------------------------------
if [[ -z ${PORT:-} ]]; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
fi
url=http://127.0.0.1:$PORT
printf 'global:\n  scrape_interval: 15s\n' > "$out/prometheus.yml"
prom_args=(--config.file="$out/prometheus.yml" --storage.tsdb.path="$out/tsdb" --storage.tsdb.retention.time=10y
           --web.listen-address=127.0.0.1:$PORT)
{ echo '#!/bin/sh'; echo "# the benchmark's Prometheus on its TSDB (Ctrl-C stops it)"; printf 'exec prometheus'; printf ' %q' "${prom_args[@]}"; echo; } > "$out/serve.sh"
chmod +x "$out/serve.sh"
prometheus "${prom_args[@]}" > "$out/prometheus.log" 2>&1 &
prom_pid=$!
trap 'kill $prom_pid 2>/dev/null; wait $prom_pid 2>/dev/null || true' EXIT
t_ready=$(date +%s.%N)
for (( w = 0; ; w++ )); do
  curl -sf "$url/-/ready" > /dev/null 2>&1 && break
  kill -0 $prom_pid 2>/dev/null || { tail -20 "$out/prometheus.log" >&2; exit 3; }
  (( w < 1200 )) || { echo "Prometheus not ready after 600 s" >&2; exit 3; }
  sleep 0.5
done
t_ready=$(echo "$(date +%s.%N) - $t_ready" | bc)
metric() { { curl -sf "$url/metrics" || true; } | awk -v m="$1" '$1 == m {v = $2} END {print v}'; }
tmp_dirs() { find "$out/tsdb" -maxdepth 1 -name '*.tmp*' | wc -l; }
state() { echo "$(metric prometheus_tsdb_blocks_loaded) $(metric prometheus_tsdb_compactions_total) $(tmp_dirs)"; }
log "Prometheus ready at $url in ${t_ready} s (pid $prom_pid): blocks, compactions, tmp dirs = $(state)"

# Overlapping blocks (every host covers the same 24 h) are merged by the server's compaction,
# which it runs about once a minute; wait until nothing has changed for SETTLE_S seconds.
t_settle=$(date +%s)
last=$(state) since=$(date +%s) settled=no
while :; do
  sleep 10
  now_state=$(state)
  if [[ $now_state != "$last" ]]; then last=$now_state since=$(date +%s); log "  compaction: blocks, compactions, tmp dirs = $now_state"; fi
  if (( $(date +%s) - since >= SETTLE_S )) && [[ ${now_state##* } == 0 ]]; then settled=yes; break; fi
  (( $(date +%s) - t_settle < COMPACT_WAIT_S )) || break
done
t_settle=$(( $(date +%s) - t_settle ))
read -r n_blocks n_compactions _ <<< "$last"
log "compaction settled=$settled after ${t_settle} s: $n_blocks blocks, $n_compactions compactions; TSDB $(du -sm "$out/tsdb" | cut -f1) MB"

# The common 24 h (every store starts at the first source's start), on the step grid.
read -r s_iso e_iso < <("$exp_bin" info "$out/stores/clean-0.db" | awk '/^time/ {print $2, $4; exit}')
s_unix=$(date -u -d "$s_iso" +%s) e_unix=$(date -u -d "$e_iso" +%s)
t_start=$(( (s_unix + STEP_S - 1) / STEP_S * STEP_S )) t_end=$(( e_unix / STEP_S * STEP_S ))
{
  echo "date                $(date -u +%FT%TZ)"
  echo "hosts built         $maxn (K=$K distinct stores + odd $ODD), ${HOURS} h each, step $STEP"
  echo "range               $s_iso .. $e_iso  (queried $t_start .. $t_end)"
  echo "stores              ${t_stores} s this run"
  echo "backfill            ${t_backfill} s this run, ${#todo[@]} hosts new (per host: backfill.tsv)"
  echo "prometheus          $(prometheus --version 2>&1 | head -1), ready in ${t_ready} s, $url"
  echo "compaction          settled=$settled after ${t_settle} s: $n_blocks blocks, $n_compactions compactions"
  echo "prometheus memory   $(awk '/VmRSS|VmHWM/ {printf "%s %.0f MB  ", $1, $2/1024}' /proc/$prom_pid/status)(after settling)"
  echo "tsdb                $out/tsdb, $(du -sm "$out/tsdb" | cut -f1) MB"
  echo "odd host faults     $(($(wc -l < "$out/odd_faults.tsv") - 1)) spans (odd_faults.tsv)"
} > "$out/summary.txt"
cat "$out/summary.txt" >&2
[[ $BUILD_ONLY == 1 ]] && exit 0

# ---- 4. detect -------------------------------------------------------------------------------
res=$out/results.tsv
[[ $APPEND == 1 && -s $res ]] || printf 'binary\tmode\targs\thosts\tjobs\tstatus\texit\twall_s\tpeak_rss_mb\tprom_hwm_mb\thosts_reported\tincidents\tincidents_odd\tmax_host\todd_host\tcompacting\n' > "$res"
measure() {  # bin mode n variant-number extra-args...
  local bin=$1 mode=$2 n=$3 v=$4 name sel tmo args jobs_used=- rc t rss st before after hwm json extra
  shift 4
  extra=$*
  name=$(basename "$bin")
  sel="{job=\"reveal\",instance=~\"$(host_regex "$n")\"}"
  args=(detect --prometheus "$url" --match "$sel" --start "$t_start" --end "$t_end" --step "$STEP" --no-progress --json)
  tmo=$EACH_TIMEOUT
  if [[ $mode == peers ]]; then args+=(--peers); tmo=$PEERS_TIMEOUT; fi
  args+=("$@")
  if [[ -n $JOBS && $("$bin" detect --help 2>&1 || true) == *--jobs* ]]; then args+=(--jobs "$JOBS"); jobs_used=$JOBS; fi
  json=$out/runs/$name-$mode$v-$n.json
  before=$(metric prometheus_tsdb_compactions_total)
  log "$name $mode $n: $bin ${args[*]}"
  set +e
  (ulimit -v $(( MEM_LIMIT_MB * 1024 )); exec /usr/bin/time -f '%e %M' -o "$out/tmp/time.txt" timeout "$tmo" "$bin" "${args[@]}") \
    > "$json" 2> "${json%.json}.err"
  rc=$?
  set -e
  after=$(metric prometheus_tsdb_compactions_total)
  hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$prom_pid/status)
  read -r t rss < <(tail -1 "$out/tmp/time.txt")
  case $rc in 0) st=ok ;; 124) st=timeout ;; *) st=failed ;; esac
  local summary="- - - - -"
  if [[ $st == ok && $mode == each ]]; then
    summary=$(jq -r --arg odd "$ODD" '[length, ([.[] | .incidents | length] | add),
        ([.[] | select(.run.hostname == $odd) | .incidents | length] | add // 0),
        (max_by(.incidents | length) | "\(.run.hostname):\(.incidents | length)"), "-"] | @tsv' "$json" | tr '\t' ' ')
  elif [[ $st == ok ]]; then
    summary=$(jq -r --arg odd "$ODD" 'def cnt: if type == "array" then length else . end;
        [(.hosts | length), ([.hosts[] | .incidents | cnt] | add),
         ([.hosts[] | select(.host == $odd) | .incidents | cnt] | add // 0),
         (.hosts | max_by(.incidents | cnt) | "\(.host):\(.incidents | cnt)"), (.odd_host // "null")] | @tsv' "$json" | tr '\t' ' ')
  fi
  [[ $st == ok ]] || log "  $st (exit $rc): $(head -c 300 "${json%.json}.err")"
  local compacting=no
  [[ $settled == yes && $before == "$after" ]] || compacting=yes
  read -r hr inc inc_odd maxh oddh <<< "$summary"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "${extra:--}" "$n" "$jobs_used" "$st" "$rc" "$t" \
    "$(echo "$rss / 1024" | bc -l)" "$hwm" "$hr" "$inc" "$inc_odd" "$maxh" "$oddh" "$compacting" >> "$res"
  log "  $(tail -1 "$res")"
  [[ $KEEP_JSON == 1 ]] || rm -f "$json"
}
IFS='|' read -r -a variants <<< "$EACH_VARIANTS"
[[ ${#variants[@]} -gt 0 ]] || variants=("")
for n in $HOSTS; do
  for (( v = 0; v < ${#variants[@]}; v++ )); do
    read -r -a va <<< "${variants[v]}"
    for b in "${bins[@]}"; do measure "$b" each "$n" "$v" ${va[@]+"${va[@]}"}; done
  done
done
read -r -a pa <<< "$PEERS_ARGS"
for n in $PEERS_HOSTS; do
  for b in "${bins[@]}"; do measure "$b" peers "$n" "" ${pa[@]+"${pa[@]}"}; done
done
column -t -s $'\t' "$res"
