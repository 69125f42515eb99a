#!/usr/bin/env bash
# Installs the browser check's npm packages (tests/report/package-lock.json) into
# tests/report/node_modules with `npm ci`, only when node_modules is missing or the lock file
# changed since the last install (a hash of it is kept in node_modules/.reveal-lock.sha256).
# Quiet when nothing is to do. Called by scripts/setup.sh.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../tests/report" && pwd)"
stamp="$dir/node_modules/.reveal-lock.sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [[ -d "$dir/node_modules/playwright-core" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
echo "browser_deps: npm ci in tests/report" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
echo "$want" >"$stamp"
