#!/usr/bin/env bash
# Regenerates docs/reveal.1 (man page) and docs/reveal.bash (bash completion) from the CLI
# definitions (`reveal docs man`, `reveal docs completion bash`); tests/cli/cli_docs_test.sh
# fails when they are stale.  usage: scripts/gen_cli_docs.sh [REVEAL]   (default build/reveal)
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REVEAL=${1:-$top/build/reveal}
"$REVEAL" docs man >"$top/docs/reveal.1"
"$REVEAL" docs completion bash >"$top/docs/reveal.bash"
echo "wrote docs/reveal.1 and docs/reveal.bash" >&2
