#!/usr/bin/env bash
# Runs a command and logs its wall-clock span, for work done on the host while a host day runs
# that the day's labels do not cover (a build, a test run): `hostday.py score DIR --beside LOG`
# counts the false incidents near it apart, and the rate away from it.
# usage: BESIDE_LOG=/path/to/log bench/hostday/beside.sh CMD [ARGS...]   (exit status: CMD's)
set -u
log=${BESIDE_LOG:?set BESIDE_LOG to the log file}
echo "start $(date -u +%s.%N) $*" >>"$log"
"$@"
rc=$?
echo "end $(date -u +%s.%N) rc=$rc $*" >>"$log"
exit $rc
