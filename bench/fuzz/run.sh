#!/usr/bin/env bash
# Builds one libFuzzer target per importer (csv, prometheus, nvidia_smi, reveal_table, and array:
# the smd manifest + array reader), for the untrusted-file loaders (store: load_recording on
# the bytes written to a file; model: BaselineModel::decode, a whole file or a payload) and
# http_server (the agent's Boost.Beast server on raw request bytes over loopback), with
# AddressSanitizer and UndefinedBehaviorSanitizer, then runs each for FUZZ_S seconds (default
# 60) from the seeds in bench/fuzz/seeds/<target>/ (store and model seeds: bench/fuzz/make_seeds.cpp).
# A crash leaves its input as $FUZZ_OUT/<target>-crash-* and makes this script exit 1.
# usage: bench/fuzz/run.sh [TARGET...]   env: FUZZ_S (0 = build only), FUZZ_OUT (default build-fuzz),
#        CXX (clang++-14)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${FUZZ_OUT:-$ROOT/build-fuzz}
FUZZ_S=${FUZZ_S:-60}
CXX=${CXX:-clang++-14}
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(csv prometheus nvidia_smi reveal_table array store model http_server)
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$ROOT/include" -I"$ROOT/src" -isystem /usr/include/eigen3)
mkdir -p "$OUT/obj"

objs=()
for src in import_common csv_import prometheus_import nvidia_smi_import reveal_table_import array_import; do
  "$CXX" "${FLAGS[@]}" -c "$ROOT/src/store/ingest/$src.cpp" -o "$OUT/obj/$src.o" || exit 2
  objs+=("$OUT/obj/$src.o")
done
# parse_utc_time (util/units.cpp) and kVersion (util/version.cpp, version from CMakeLists.txt)
"$CXX" "${FLAGS[@]}" -c "$ROOT/src/util/units.cpp" -o "$OUT/obj/units.o" || exit 2
VERSION=$(sed -n 's/^project(reveal VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
"$CXX" "${FLAGS[@]}" -DREVEAL_VERSION="\"$VERSION\"" -c "$ROOT/src/util/version.cpp" -o "$OUT/obj/version.o" || exit 2
objs+=("$OUT/obj/units.o" "$OUT/obj/version.o")
# The loaders' libreveal sources (compiled once, again when changed): the store reader, and
# the model reader with the pipeline it scores with.
store_srcs=(store/sqlite_store store/chunk_codec store/tenant_codec store/head_log telemetry/channel)
model_srcs=($(cd "$ROOT/src" && ls pipeline/*.cpp detectors/*.cpp features/*.cpp explain/*.cpp | sed 's/\.cpp$//')
            util/glob)
lib_objs() {  # the objects of the sources named, built as needed
  for src in "$@"; do
    local o="$OUT/obj/lib_${src//\//_}.o"
    if [[ ! -f "$o" || "$ROOT/src/$src.cpp" -nt "$o" ]]; then
      "$CXX" "${FLAGS[@]}" -c "$ROOT/src/$src.cpp" -o "$o" || return 2
    fi
    echo "$o"
  done
}
for t in "${TARGETS[@]}"; do
  if [[ $t == http_server ]]; then  # the agent's server alone (Boost headers, no importer)
    "$CXX" "${FLAGS[@]}" -c "$ROOT/src/agent/http_server.cpp" -o "$OUT/obj/http_server.o" || exit 2
    "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$ROOT/bench/fuzz/${t}_fuzz.cpp" "$OUT/obj/http_server.o" -pthread \
      -o "$OUT/${t}_fuzz" || exit 2
    continue
  fi
  extra=()
  case $t in
    store) mapfile -t extra < <(lib_objs "${store_srcs[@]}") ;;
    model) mapfile -t extra < <(lib_objs "${model_srcs[@]}" "${store_srcs[@]}") ;;
  esac
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$ROOT/bench/fuzz/${t}_fuzz.cpp" "${extra[@]}" "${objs[@]}" \
    -lsqlite3 -lzstd -lfmt -lpthread -o "$OUT/${t}_fuzz" || exit 2
done

((FUZZ_S > 0)) || { echo "built ${TARGETS[*]} in $OUT (FUZZ_S=0: not run)"; exit 0; }
status=0
for t in "${TARGETS[@]}"; do
  mkdir -p "$OUT/corpus/$t"
  echo "== $t: ${FUZZ_S} s"
  # Store and model seeds are whole files: larger inputs than the importers'.
  # A store or model input taking over 10 s is reported as a hang.
  case $t in store) lim=(-max_len=16384 -timeout=10) ;; model) lim=(-max_len=409600 -timeout=10) ;; *) lim=(-max_len=4096) ;; esac
  if ! "$OUT/${t}_fuzz" -max_total_time="$FUZZ_S" "${lim[@]}" -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$OUT/$t-" "$OUT/corpus/$t" "$ROOT/bench/fuzz/seeds/$t" 2>"$OUT/$t.log"; then
    echo "!! $t found a crash:"; grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$OUT/$t.log" | head -5
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$OUT/$t.log" | sed "s/^/   /"
done
exit $status
