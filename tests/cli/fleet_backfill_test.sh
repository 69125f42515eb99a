#!/usr/bin/env bash
# The fleet through a Prometheus loaded by backfilling (issue #19): the fleet fixtures
# (tests/fixtures/recordings/README.md; fleet-b had a memory and CPU hog from +30 s to +60 s) are
# written with `reveal export --format openmetrics` (instance labels fleet-a/b/c), turned into
# TSDB blocks by `promtool tsdb create-blocks-from openmetrics`, and served by a real Prometheus.
# Then
#   - `reveal detect --prometheus … --jobs 2` gives one report per host, in host order, with the
#     same incidents (subsystem, start, end to the second) as `reveal detect` on each store: what
#     went through the text, the backfill and the API is the store's channels and values;
#   - `--peers` names fleet-b, as `reveal detect --peers` on the stores does;
#   - a host the server lists (by storage block) without a sample in the range is named on
#     stderr and left out, not an error for the fleet; alone, it is one error line (exit 3);
#   - a selector matching no host is one clear error line (exit 3);
#   - `export --step 15s` keeps one sample per 15 s per series, `--label` sets the job label,
#     and a reserved or malformed label is refused (exit 2).
# About 20 seconds. Skipped (exit 0, "SKIP: ...") only when prometheus or promtool is missing.
# usage: fleet_backfill_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
R=$FIX/recordings
PROMETHEUS=${REVEAL_PROMETHEUS:-$(command -v prometheus || true)}
PROMTOOL=${REVEAL_PROMTOOL:-$(command -v promtool || true)}
if [[ -z $PROMETHEUS || -z $PROMTOOL ]]; then
  echo "SKIP: no prometheus or promtool binary (Debian: apt-get install prometheus)"
  exit 0
fi
T=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
die() { echo "FAIL: $*"; [[ -s $T/prometheus.log ]] && tail -5 "$T/prometheus.log"; exit 1; }
"$REVEAL" export "$R/fleet-a.db" --format openmetrics -o /dev/null 2>"$T/err"
if grep -q "built without the agent" "$T/err"; then
  echo "SKIP: this reveal has no --format openmetrics (built with REVEAL_STATIC_DEPS)"
  exit 0
fi

# Backfill the three hosts, and fleet-gone: fleet-a's samples moved to the start of its 2-h
# block (or after fleet-c's end when that start is too close), so that the block holds a host
# with no sample in the range: listed by the server (it lists by block), read as nothing.
for h in a b c; do
  "$REVEAL" export "$R/fleet-$h.db" --format openmetrics --label "instance=fleet-$h" -o "$T/fleet-$h.om" \
    2>"$T/export.log" || die "export fleet-$h: $(cat "$T/export.log")"
done
first=$(head -1 "$T/fleet-a.om")
[[ $first == 'reveal_'*'{channel="'*'",job="reveal",instance="fleet-a"} '* ]] || fail "first line: $first"
[[ $(tail -1 "$T/fleet-a.om") == "# EOF" ]] || fail "no # EOF at the end"
T0=$(awk 'NR == 1 {print int($NF)}' "$T/fleet-a.om")
T1=$(awk '$1 != "#" {t = $NF} END {print int(t) + 1}' "$T/fleet-c.om")
D=$(awk 'NR == 1 {a = $NF} $1 != "#" {t = $NF} END {print int(t - a) + 1}' "$T/fleet-a.om")
B=$((T0 - T0 % 7200))
if ((T0 - B > D + 400)); then GONE_AT=$((B + 10)); else GONE_AT=$((T1 + 400)); fi
((GONE_AT + D < B + 7200 || GONE_AT < T0)) || die "no room for fleet-gone in the 2-h block of $T0"
{
  grep -v '^# EOF' "$T/fleet-a.om"
  awk -v d=$((GONE_AT - T0)) '$1 != "#" {t = $NF; $NF = sprintf("%.3f", t + d); sub(/instance="fleet-a"/, "instance=\"fleet-gone\""); print}' "$T/fleet-a.om"
  echo '# EOF'
} >"$T/fleet-a+gone.om"
for f in fleet-a+gone fleet-b fleet-c; do
  "$PROMTOOL" tsdb create-blocks-from openmetrics "$T/$f.om" "$T/tsdb" >"$T/promtool.log" 2>&1 ||
    die "promtool on $f: $(tail -3 "$T/promtool.log")"
done

PP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 15s\n' >"$T/prometheus.yml"
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --storage.tsdb.retention.time=100y \
  --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$T/prometheus.log" 2>&1 &
pid=$!
for _ in $(seq 150); do curl -sf --max-time 1 "http://127.0.0.1:$PP/-/ready" >/dev/null && break; sleep 0.2; done
curl -sf --max-time 1 "http://127.0.0.1:$PP/-/ready" >/dev/null || die "Prometheus did not become ready"
URL="http://127.0.0.1:$PP"

# One report per host, the same incidents as the stores'.
expect_exit 0 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --jobs 2 --json
cp "$T/out" "$T/each.json"
for h in a b c; do "$REVEAL" detect "$R/fleet-$h.db" --json >"$T/store-$h.json"; done
python3 - "$T" <<'PY' || fail "per-host reports differ from the stores' (above)"
import json, sys
t = sys.argv[1]
each = json.load(open(f"{t}/each.json"))
hosts = [d["source"].rsplit("instance=", 1)[1] for d in each]
assert hosts == ["fleet-a", "fleet-b", "fleet-c"], hosts
def incidents(d):
    return [(i["subsystem"], round(i["start_s"]), round(i["end_s"])) for i in d["incidents"]]
ok = True
for d, h in zip(each, "abc"):
    s = json.load(open(f"{t}/store-{h}.json"))
    if incidents(d) != incidents(s):
        print(f"fleet-{h}: Prometheus {incidents(d)} != store {incidents(s)}")
        ok = False
    if d["run"]["samples"] != s["run"]["samples"]:
        print(f"fleet-{h}: {d['run']['samples']} samples from Prometheus, {s['run']['samples']} in the store")
        ok = False
assert incidents(each[1]), "fleet-b has no incident"
sys.exit(0 if ok else 1)
PY

# fleet-gone is listed but has no sample in the range: named once on stderr, not analysed.
curl -sf --max-time 5 "$URL/api/v1/label/instance/values?match[]=%7Bjob%3D%22reveal%22%7D&start=$T0&end=$T1" |
  grep -q '"fleet-gone"' || fail "the server does not list fleet-gone for the range: the case is not exercised"
grep -q "not analysed, less than one window of samples in the range: fleet-gone (0 samples)$" "$T/err" ||
  fail "fleet-gone on stderr: $(cat "$T/err")"

# Peers: fleet-b, as over the stores; fleet-gone left out with a note.
expect_exit 0 "$REVEAL" detect --prometheus "$URL" --match '{job="reveal"}' --start "$T0" --end "$T1" --peers --json
odd=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["odd_host"])' "$T/out")
[[ $odd == fleet-b ]] || fail "--peers named '$odd', not fleet-b"
grep -q 'left out.*fleet-gone (0 samples)' "$T/out" || fail "--peers: no note on fleet-gone"
# Only fleet-gone in the range: one line, exit 3.
expect_exit 3 "$REVEAL" detect --prometheus "$URL" --match '{instance="fleet-gone"}' --start "$T0" --end "$T1"
[[ $(wc -l <"$T/err") == 1 ]] && grep -q "has one window of samples in the range: fleet-gone (0 samples)$" "$T/err" ||
  fail "fleet-gone alone: $(cat "$T/err")"
expect_exit 0 "$REVEAL" detect --peers "$R/fleet-a.db" "$R/fleet-b.db" "$R/fleet-c.db" --json
odd=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["odd_host"])' "$T/out")
[[ $odd == *fleet-b.db ]] || fail "--peers over the stores named '$odd'"

# No host: one line, exit 3.
expect_exit 3 "$REVEAL" detect --prometheus "$URL" --match '{job="nobody"}' --start "$T0" --end "$T1"
[[ $(wc -l <"$T/err") == 1 ]] && grep -q "no series matches" "$T/err" || fail "no host: $(cat "$T/err")"

# --step and --label.
"$REVEAL" export "$R/fleet-a.db" --format openmetrics --step 15s --label job=node --label instance=x -o "$T/step.om" 2>/dev/null
python3 - "$T/step.om" <<'PY' || fail "--step 15s / --label job=node"
import sys
times = [float(l.rsplit(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith('reveal_proc_stat_idle_total{channel="proc.stat:idle"')]
assert all('job="node",instance="x"}' in l for l in open(sys.argv[1]) if not l.startswith("#")), "labels"
assert len(times) >= 6, times
assert all(int(b // 15) == int(a // 15) + 1 for a, b in zip(times, times[1:])), times
PY
expect_exit 2 "$REVEAL" export "$R/fleet-a.db" --format openmetrics --label channel=x -o "$T/x.om"
grep -q "label of every channel" "$T/err" || fail "--label channel=x: $(cat "$T/err")"
expect_exit 2 "$REVEAL" export "$R/fleet-a.db" --format openmetrics --label 9x=1 -o "$T/x.om"
expect_exit 2 "$REVEAL" export "$R/fleet-a.db" --label job=x -o "$T/x.csv"

((fails == 0)) && echo "PASS: fleet backfill" || { echo "$fails failure(s)"; exit 1; }
