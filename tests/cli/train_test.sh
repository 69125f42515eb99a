#!/usr/bin/env bash
# `reveal train` and `reveal detect --baseline MODEL` (include/reveal/baseline_model.h) on the
# recorded fixtures (tests/fixtures/recordings/README.md): a model trained on h200-clean scores
# the contention run exactly as `--baseline h200-clean.db` does; a model of fleet-a and fleet-c
# finds fleet-b's memory hog; `reveal info MODEL`; and damaged or misused model files are one
# "reveal: error:" line with the documented exit code, never a crash.
# usage: train_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
R=$FIX/recordings
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
expect() {  # expect CODE NEEDLE -- ARGS...: exit code, one stderr line holding NEEDLE
  local code=$1 needle=$2; shift 3
  "$REVEAL" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [[ $rc -ne $code || $(grep -c . "$T/err") -ne 1 ]] || ! grep -qF -- "$needle" "$T/err"; then
    fail "reveal $* -> rc=$rc (want $code, '$needle'): $(cat "$T/err")"
  else
    echo "ok:   reveal $* -> $rc: $(cat "$T/err")"
  fi
}

# --- train and detect against the model ---------------------------------------------------------
M=$T/h200.model
expect_exit 0 "$REVEAL" train "$R/h200-clean.db" -o "$M"
cat "$T/out"
for want in "Reveal train" "1 used, from 1 host" "reference windows" "channels " "Isolation Forest" \
            "PCA residual" "bytes, model format version 2"; do
  grep -qF "$want" "$T/out" || fail "train summary lacks '$want'"
done
[[ $(head -c 8 "$M") == REVEALMD ]] || fail "model file does not start with REVEALMD"
[[ ! -e "$M.tmp" ]] || fail "temporary file left behind"

expect_exit 0 "$REVEAL" detect "$R/h200-gpu-contention.db" --baseline "$M"
grep -qF "reference: baseline model $M (trained on 1 known-good run of vm)" "$T/out" ||
  fail "mode line: $(grep reference: "$T/out")"
grep -q "^SUMMARY: [1-9]" "$T/out" || fail "no incident against the model: $(head -8 "$T/out")"

# One code path: the stored model and the store trained in memory score every window the same.
"$REVEAL" detect "$R/h200-gpu-contention.db" --baseline "$M" --json >"$T/model.json" || fail "detect --json (model)"
"$REVEAL" detect "$R/h200-gpu-contention.db" --baseline "$R/h200-clean.db" --json >"$T/store.json" || fail "detect --json (store)"
python3 - "$T/model.json" "$T/store.json" "$M" <<'PY' || fail "model and store baselines differ"
import json, sys
m, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert m["reference"]["mode"] == "baseline" and m["reference"]["model"] == sys.argv[3], m["reference"]
assert s["reference"]["model"] is None and s["reference"]["baselines"] == m["reference"]["baselines"], s["reference"]
assert m["windows"]["fused"] == s["windows"]["fused"], "fused scores differ"
for a, b in zip(m["windows"]["detectors"], s["windows"]["detectors"]):
    assert a["raw"] == b["raw"] and a["tail_p"] == b["tail_p"], a["name"]
assert [(i["start_s"], i["end_s"], i["subsystem"]) for i in m["incidents"]] == \
       [(i["start_s"], i["end_s"], i["subsystem"]) for i in s["incidents"]]
assert m["channels"] == s["channels"], (m["channels"], s["channels"])
PY

# Settings the model fixed: the same value is fine, another is a usage error.
expect_exit 0 "$REVEAL" detect "$R/h200-clean.db" --baseline "$M" --window 3 --pca report
expect 2 "trained with 3" -- detect "$R/h200-clean.db" --baseline "$M" --window 5
expect 2 "pearson-cut: the model was trained with 0.5" -- detect "$R/h200-clean.db" --baseline "$M" --pearson-cut 0.7
expect 2 "trained with 10" -- detect "$R/h200-clean.db" --baseline "$M" --trail 20
expect 2 "trained with report" -- detect "$R/h200-clean.db" --baseline "$M" --pca fuse

# A model of two quiet hosts finds the third one's memory hog (+30 s .. +60 s).
F=$T/fleet.model
expect_exit 0 "$REVEAL" train "$R/fleet-a.db" "$R/fleet-c.db" -o "$F" --pca off
grep -qF "2 used, from 1 host" "$T/out" || fail "fleet summary: $(cat "$T/out")"
"$REVEAL" detect "$R/fleet-b.db" --baseline "$F" --json >"$T/fleet.json" || fail "detect fleet-b --baseline model"
python3 - "$T/fleet.json" <<'PY' || fail "fleet-b against the fleet model"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference"]["baselines"] == ["vm", "vm"], d["reference"]
inc = [i for i in d["incidents"] if i["start_s"] < 60 and i["end_s"] > 30]
assert inc and inc[0]["subsystem"] == "memory", [(i["start_s"], i["end_s"], i["subsystem"]) for i in d["incidents"]]
assert [x["name"] for x in d["windows"]["detectors"]] == ["robust_z", "robust_z_trail", "iforest"], "the model's --pca off applies"
PY
expect_exit 0 "$REVEAL" train "$R/fleet-a.db" -o "$F"  # an earlier model file is replaced

# --- reveal info MODEL ------------------------------------------------------------------------
expect_exit 0 "$REVEAL" info "$M"
for want in "Reveal baseline model" "format      version 2" "h200-clean.db  host vm, 121 samples" "channels " \
            "by subsystem:"; do
  grep -qF "$want" "$T/out" || fail "info lacks '$want': $(cat "$T/out")"
done
expect_exit 0 "$REVEAL" info "$M" --json
python3 - "$T/out" <<'PY' || fail "info --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "reveal.model-info/1", d["schema"]
m = d["metadata"]
assert m["format"] == "reveal.model" and m["format_version"] == 2, m["format"]
assert m["training"][0]["hostname"] == "vm" and m["training"][0]["samples"] == 121, m["training"]
assert m["window"] == {"length": 3, "stride": 1, "trail": 10}, m["window"]
assert len(m["channels"]) == m["model"]["channels"] > m["model"]["model_channels"] > 0, m["model"]
assert {"name", "unit", "subsystem", "floor"} <= set(m["channels"][0]), m["channels"][0]
PY

# --- misuse and damage --------------------------------------------------------------------------
expect 2 "required" -- train "$R/fleet-a.db"
expect 2 "required" -- train -o "$T/x.model"
expect 3 "no such file" -- train "$T/missing.db" -o "$T/x.model"
echo "precious" >"$T/notes.txt"
expect 3 "refusing to overwrite" -- train "$R/fleet-a.db" -o "$T/notes.txt"
grep -q precious "$T/notes.txt" || fail "-o clobbered a file that is not a model"
cp "$R/fleet-c.db" "$T/store.db"
expect 3 "refusing to overwrite" -- train "$R/fleet-a.db" -o "$T/store.db"
cmp -s "$R/fleet-c.db" "$T/store.db" || fail "-o clobbered a store"
expect 3 "is a baseline model (from reveal train), not a recording" -- train "$M" -o "$T/x.model"
expect 3 "is a baseline model (from reveal train), not a recording" -- detect "$M"
expect 3 "is a baseline model (from reveal train), not a recording" -- export "$M" -o -
expect 2 "give it alone" -- detect "$R/fleet-b.db" --baseline "$F" --baseline "$R/fleet-a.db"
expect 3 "no such file" -- detect "$R/fleet-b.db" --baseline "$T/missing.model"
size=$(stat -c %s "$M")
head -c $((size / 2)) "$M" >"$T/trunc.model"
expect 3 "$T/trunc.model: model payload is truncated or corrupt" -- detect "$R/fleet-b.db" --baseline "$T/trunc.model"
expect 3 "$T/trunc.model" -- info "$T/trunc.model"
head -c 10 "$M" >"$T/short.model"
expect 3 "truncated" -- detect "$R/fleet-b.db" --baseline "$T/short.model"
cp "$M" "$T/corrupt.model"
dd if=/dev/urandom of="$T/corrupt.model" bs=1 seek=$((size / 2)) count=64 conv=notrunc status=none
expect 3 "$T/corrupt.model: model payload is corrupt" -- detect "$R/fleet-b.db" --baseline "$T/corrupt.model"
cp "$M" "$T/v1.model"  # version 1: before the trailing-mean stream
printf '\x01' | dd of="$T/v1.model" bs=1 seek=8 conv=notrunc status=none
expect 3 "model format version 1 is not supported" -- detect "$R/fleet-b.db" --baseline "$T/v1.model"
cp "$M" "$T/v3.model"
printf '\x03' | dd of="$T/v3.model" bs=1 seek=8 conv=notrunc status=none
expect 3 "model format version 3 is not supported" -- detect "$R/fleet-b.db" --baseline "$T/v3.model"
cp "$M" "$T/magic.model"
printf 'X' | dd of="$T/magic.model" bs=1 seek=0 conv=notrunc status=none
expect 3 "$T/magic.model" -- detect "$R/fleet-b.db" --baseline "$T/magic.model"

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "all train tests passed"
