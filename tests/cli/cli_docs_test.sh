#!/usr/bin/env bash
# The man page and the bash completion script: docs/reveal.1 and docs/reveal.bash must be what
# `reveal docs man` and `reveal docs completion bash` generate now (scripts/gen_cli_docs.sh
# regenerates them); the man page must render with groff (scripts/setup.sh installs groff-base)
# and hold every subcommand, flag and exit code; the completion script, sourced into bash, must
# complete subcommands, nested subcommands, flags and IsMember values.
# usage: cli_docs_test.sh REVEAL
set -uo pipefail
REVEAL=$1
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit

expect_exit 0 "$REVEAL" docs man
cp "$T/out" "$T/reveal.1"
expect_exit 0 "$REVEAL" docs completion bash
cp "$T/out" "$T/reveal.bash"
expect_exit 2 "$REVEAL" docs completion zsh
for f in reveal.1 reveal.bash; do
  diff -u "$top/docs/$f" "$T/$f" >"$T/diff" || fail "docs/$f is stale; run scripts/gen_cli_docs.sh build/reveal: $(head -30 "$T/diff")"
done

# --- the man page ------------------------------------------------------------------------------
command -v groff >/dev/null || fail "groff missing (scripts/setup.sh installs groff-base)"
groff -man -Tutf8 -ww -z "$T/reveal.1" 2>"$T/warn" || fail "groff failed"
[[ -s $T/warn ]] && fail "groff warnings: $(head -5 "$T/warn")"
groff -man -Tascii "$T/reveal.1" 2>/dev/null | sed 's/.\x08//g' >"$T/man.txt"
for section in NAME SYNOPSIS DESCRIPTION COMMANDS EXAMPLES "EXIT STATUS"; do
  grep -q "^$section" "$T/man.txt" || fail "man page: no $section section"
done
# Every subcommand and every flag its --help lists are in the man page.
for cmd in probes record detect report train "config show" "config diff" "config drift" info export "import csv" "import smd" \
           "import prometheus" "import nvidia-smi" "import reveal-table" agent "docs metrics" "docs man" \
           "docs completion"; do
  grep -q "^ *reveal $cmd" "$T/man.txt" || fail "man page lacks 'reveal $cmd'"
  # shellcheck disable=SC2086
  for flag in $("$REVEAL" $cmd --help | grep -oE '^  +(-[a-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+'); do
    [[ $flag == --help ]] && continue
    grep -q -- "$flag" "$T/man.txt" || fail "man page lacks reveal $cmd $flag"
  done
done
grep -q "fail-on-incident" "$T/man.txt" || fail "man page lacks --fail-on-incident"
for code in 0 1 2 3; do
  sed -n '/^EXIT STATUS/,/^SEE ALSO/p' "$T/man.txt" | grep -qE "^ +$code +" || fail "EXIT STATUS lacks $code"
done
grep -q "reveal detect run.db --baseline good.model --fail-on-incident" "$T/man.txt" || fail "EXAMPLES lack detect's"
grep -q "reveal docs man" "$T/man.txt" || fail "the docs command is not in the man page"
sed -n '/^OPTIONS/,/^COMMANDS/p' "$T/man.txt" | grep -q -- "--version" || fail "OPTIONS lacks --version"
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$T/reveal.1" >/dev/null 2>"$T/manerr" || fail "man -l failed: $(cat "$T/manerr")"
fi

# --- the completion script ------------------------------------------------------------------------
mkdir -p "$T/dir/sub" && touch "$T/dir/run.db" "$T/dir/good.model" "$T/dir/notes.txt"
complete_words() {  # words of the command line, the last being completed -> COMPREPLY, one per line
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _reveal; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$T/reveal.bash" "$@" | sort
}
check() {  # want (space-separated, sorted), then the words
  local want=$1
  shift
  local got
  got=$(complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
  [[ $got == "$want" ]] || fail "completing '$*': got '$got', want '$want'"
}
check "detect" reveal de
check "--fail-on-incident --false-per-day" reveal detect --fa
check "--fail-on-incident" reveal detect run.db --fai
check "config" reveal con
check "diff drift" reveal config d
check "drift" reveal config dr
check "csv" reveal import cs
check "nvidia-smi" reveal import nv
check "--channels-from" reveal import csv x.csv --chan
check "--manifest" reveal import smd x.pkl --man
check "" reveal import csv x.csv --man
check "fuse off report" reveal detect run.db --pca ""
check "--output" reveal export run.db --out
check "--no-progress" reveal train a.db --no
check "completion man metrics" reveal docs ""
check "--version" reveal --ver
cd "$T/dir" || exit 1
check "good.model run.db sub" reveal detect ""
check "good.model run.db sub" reveal info ""
check "notes.txt" reveal import csv no
check "run.db" reveal detect --baseline ru
((fails)) && exit 1
echo "man page and completion are current and work"
