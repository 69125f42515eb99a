#!/usr/bin/env bash
# Long recordings (issue #19): `reveal detect` on a store of more than 4 Mi samples × channels
# analyses it as --streaming does (a reference that moves with time, the store read a chunk at a
# time) and says so in a note; `--peers` over two such stores scores each against its peers'
# model by the streaming driver; --whole-run, or an option only the whole-run analysis has
# (--html), asks for the whole-run analysis; a shorter store is analysed whole as before. The
# streaming analysis's peak memory is well under the whole-run one's on the same store, and
# `reveal export` of the long store writes every row. usage: long_recording_test.sh REVEAL
set -uo pipefail
REVEAL=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit

# 850 channels, 5200 samples (4.42 Mi values) and a 4000-sample copy (3.4 Mi): 17 slow signals
# each seen through 50 channels with a little noise of their own, as a host's many co-moving
# counters are.
python3 - "$T" <<'PY'
import random, sys
random.seed(1)
m = 850
t0 = 1_700_000_000_000_000_000
for name, n in (("long", 5200), ("short", 4000), ("peer", 5200)):
    with open(f"{sys.argv[1]}/{name}.csv", "w") as f:
        f.write("t_unix_ns,t_s," + ",".join(f"test:gauge{c}" for c in range(m)) + "\n")
        base = [random.uniform(10, 100) for _ in range(17)]
        for i in range(n):
            base = [b + random.uniform(-1, 1) for b in base]
            row = [f"{base[c % 17] * (1 + c // 17 * 0.01) + random.random() * 0.1:.3f}" for c in range(m)]
            f.write(f"{t0 + i * 1_000_000_000},{i}.000," + ",".join(row) + "\n")
PY
for s in long short peer; do
  expect_exit 0 "$REVEAL" import csv "$T/$s.csv" -o "$T/$s.db"
  rm -f "$T/$s.csv"
done

/usr/bin/time -f '%M' -o "$T/rss_stream" "$REVEAL" detect "$T/long.db" --json --no-progress > "$T/auto.json" 2> "$T/err" \
  || fail "detect on the long store: $(cat "$T/err")"
python3 - "$T/auto.json" <<'PY' || fail "the long store was not analysed as --streaming with a note"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference"]["mode"] == "streaming", d["reference"]["mode"]
notes = d["notes"]
assert notes and notes[0].startswith("a long recording (5200 samples × 850 channels, 1.4 h)"), notes
assert any(n.startswith("streaming: the reference moved") for n in notes), notes
PY
expect_exit 0 "$REVEAL" detect "$T/long.db" --no-progress
grep -q "a long recording (5200 samples × 850 channels" "$T/out" || fail "text report lacks the long-recording note"

/usr/bin/time -f '%M' -o "$T/rss_whole" "$REVEAL" detect "$T/long.db" --json --no-progress --whole-run > "$T/whole.json" 2> "$T/err" \
  || fail "detect --whole-run: $(cat "$T/err")"
python3 - "$T/whole.json" <<'PY' || fail "--whole-run did not give the whole-run analysis"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference"]["mode"] == "self", d["reference"]["mode"]
assert not any(n.startswith("a long recording") or n.startswith("streaming:") for n in d["notes"]), d["notes"]
PY
stream_kb=$(tail -1 "$T/rss_stream") whole_kb=$(tail -1 "$T/rss_whole")
(( stream_kb * 2 < whole_kb )) || fail "streaming peak RSS ${stream_kb} KB is not under half the whole-run's ${whole_kb} KB"
echo "ok:   long store: streaming ${stream_kb} KB, whole-run ${whole_kb} KB peak RSS"

expect_exit 0 "$REVEAL" detect "$T/long.db" --no-progress --html "$T/r.html"
grep -q "a long recording" "$T/out" && fail "--html (whole-run only) still analysed as --streaming"
expect_exit 0 "$REVEAL" detect "$T/short.db" --no-progress
grep -q "a long recording" "$T/out" && fail "a 3.4 Mi-value store was analysed as a long one"
grep -q "streaming: the reference moved" "$T/out" && fail "the short store was not analysed whole"

# Peers of two long hosts: each is scored against its reference model by the streaming driver
# (a note says so), in less memory than the whole-run analysis of one of them.
/usr/bin/time -f '%M' -o "$T/rss_peers" "$REVEAL" detect --peers "$T/long.db" "$T/peer.db" --json --no-progress \
  > "$T/peers.json" 2> "$T/err" || fail "detect --peers on two long stores: $(cat "$T/err")"
python3 - "$T/peers.json" <<'PY' || fail "the long peers were not scored by the streaming driver"
import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    notes = h["report"]["notes"]
    assert any(n.startswith("a long recording (5200 samples × 850 channels): scored against the peers' model") for n in notes), notes
    assert h["report"]["reference"]["mode"] == "baseline", h["report"]["reference"]
PY
peers_kb=$(tail -1 "$T/rss_peers")
(( peers_kb < whole_kb )) || fail "peers of two long stores peaked at ${peers_kb} KB, over one whole-run's ${whole_kb} KB"
echo "ok:   peers of two long stores: ${peers_kb} KB peak RSS"

expect_exit 0 "$REVEAL" export "$T/long.db" -o "$T/long-out.csv" --channels 'test:gauge1?'
python3 - "$T/long-out.csv" <<'PY' || fail "export of the long store"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 1 + 5200 and len(rows[0]) == 2 + 10, (len(rows), len(rows[0]))
PY
((fails)) && exit 1
echo "long recordings: all checks passed"
