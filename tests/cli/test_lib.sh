# Shared helpers of the CLI tests (sourced, not run). Needs T (a temp dir) set before use.
#   fail MSG...            count one failure and say it
#   expect_exit CODE CMD…  run CMD (stdout to $T/out, stderr to $T/err) and check its exit code
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_exit() {
  local want=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  [[ $got == "$want" ]] || fail "exit $got (want $want): $* — $(head -c 300 "$T/err")"
}
