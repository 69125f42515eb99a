#!/usr/bin/env bash
# Runs a command and logs its wall-clock span, for work done on the host while a host day runs
# that the day's labels do not cover (a build, a test run): `hostday.py score DIR --beside LOG`
# counts the false incidents near it apart, and the rate away from it. Lines:
#   start <unix s> id=<pid> CMD...      end <unix s> id=<pid> rc=<status> CMD...
# (the id pairs them when several run at once; the end line is written also when interrupted).
# usage: BESIDE_LOG=/path/to/log bench/hostday/beside.sh CMD [ARGS...]   (exit status: CMD's)
set -u
log=${BESIDE_LOG:?set BESIDE_LOG to the log file}
cmd="$*"
rc=130
echo "start $(date -u +%s.%N) id=$$ $cmd" >>"$log"
trap 'echo "end $(date -u +%s.%N) id=$$ rc=$rc $cmd" >>"$log"' EXIT
"$@"
rc=$?
exit $rc
