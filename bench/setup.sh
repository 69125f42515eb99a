#!/usr/bin/env bash
# Opt-in: installs the tools that bench/compare_overhead.sh measures Reveal against (Debian 12
# packages). Not part of scripts/setup.sh: the build, the tests and CI do not need any of this.
# Idempotent: packages already present are skipped; apt-get update runs once, only when something
# is missing. The packages' init scripts are not relied on: the benchmark starts its own
# instances on loopback and stops them (and ignores any instance a package may have started).
#   usage: bench/setup.sh
set -euo pipefail

# netdata's Debian metapackage pulls netdata-core, -web and -plugins-bash; -plugins-python is
# only a Recommends, listed here so the install matches a default `apt-get install netdata`.
PKGS=(prometheus-node-exporter netdata netdata-plugins-python curl procps time)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "bench/setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "bench/setup: comparison tools present" \
     "(node-exporter $(dpkg-query -W -f='${Version}' prometheus-node-exporter)," \
     "netdata $(dpkg-query -W -f='${Version}' netdata))" >&2
