#!/usr/bin/env bash
# Installs everything Reveal needs to build, test and run its demo on Debian 12.
# Idempotent: packages already present are skipped; apt-get update runs once per call
# only when something is missing.
#   scripts/setup.sh           build, test and demo dependencies
#   scripts/setup.sh --build   only what building `reveal` needs (the container image's build
#                              stage, deploy/kubernetes/Dockerfile)
set -euo pipefail
ONLY_BUILD=0
case ${1:-} in
  "") ;;
  --build) ONLY_BUILD=1 ;;
  *) echo "setup.sh: unknown argument '$1' (usage: setup.sh [--build])" >&2; exit 2 ;;
esac

BUILD_PKGS=(build-essential cmake pkg-config
            libsqlite3-dev libzstd-dev libeigen3-dev libcli11-dev nlohmann-json3-dev libfmt-dev
            libgtest-dev libgmock-dev libbenchmark-dev libpfm4-dev
            libcpp-httplib-dev libtomlplusplus-dev libboost-dev
            libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc)
# gRPC and protobuf: the agent's client of the kubelet pod-resources API (which pod uses which
# GPU; src/telemetry/kubelet), its generated stubs and the test's stand-in kubelet.
# Runtime for the demo, the end-to-end tests and the benchmarks.
# prometheus, wrk and curl: the agent's fleet test (a real Prometheus server scraping agents)
# and its /metrics load test. python3-sklearn: the Isolation Forest check against scikit-learn
# (tests/detectors/iforest_sklearn_test.py), its speed comparison (bench/pipeline) and, with
# python3-numpy, the SMD benchmark (bench/smd/eval.py) and its IsolationForest / PCA baselines.
# groff-base and man-db: the man page test (tests/cli/cli_docs_test.sh renders docs/reveal.1).
# nftables: the labelled fault suite's linkloss kind (bench/scenarios/faults.py; numgen random drop).
# apache2-utils (htpasswd), openssl and nginx: the TLS and basic-auth recipe of docs/AGENT.md, run
# as written by tests/cli/agent_tls_proxy_test.sh, which starts its own nginx on a loopback port.
RUN_PKGS=(stress-ng python3 python3-torch python3-numpy python3-sklearn procps iproute2 time prometheus wrk curl
          groff-base man-db nftables apache2-utils openssl)
# nginx-light only where no nginx is installed (nginx-core or nginx-full would be replaced by it).
# Installed for the test, not to serve: the service Debian would start on port 80 is masked
# during the install and left stopped and disabled (see below).
NGINX_NEW=0
if ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then RUN_PKGS+=(nginx-light); NGINX_NEW=1; fi
# The HTML report's browser check (tests/report/browser_check.mjs): Debian's headless-capable
# Chromium (playwright-core drives it by executablePath; no browser download) and a font for
# the full-page screenshot.
RUN_PKGS+=(chromium fonts-dejavu-core)
# Node and npm only where the commands are missing: a host with another Node (nodesource's
# nodejs bundles npm) keeps it, since Debian's npm would conflict with that package.
command -v node >/dev/null || RUN_PKGS+=(nodejs)
command -v npm >/dev/null || RUN_PKGS+=(npm)

# kubectl: renders the Kubernetes manifests (kubectl kustomize) and python3-kubernetes holds the
# API's schemas (its models) that tests/deploy/k8s_validate.py checks them against. A host with
# another kubectl (the upstream package, which owns /usr/bin/kubectl too) keeps it.
RUN_PKGS+=(python3-kubernetes)
command -v kubectl >/dev/null || RUN_PKGS+=(kubernetes-client)

want=("${BUILD_PKGS[@]}" "${RUN_PKGS[@]}")
((ONLY_BUILD)) && want=("${BUILD_PKGS[@]}")
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  SYSTEMD=0
  [[ -d /run/systemd/system ]] && SYSTEMD=1
  ((NGINX_NEW && SYSTEMD)) && { $SUDO systemctl mask nginx >/dev/null 2>&1 || true; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if ((NGINX_NEW && SYSTEMD)); then
    $SUDO systemctl unmask nginx >/dev/null 2>&1 || true
    $SUDO systemctl disable nginx >/dev/null 2>&1 || true
  elif ((NGINX_NEW)) && command -v service >/dev/null; then  # no systemd: a container's init scripts
    $SUDO service nginx stop >/dev/null 2>&1 || true
  fi
fi
# npm packages of the browser check (tests/report/package-lock.json into tests/report/node_modules)
((ONLY_BUILD)) || "$(dirname "$0")/browser_deps.sh"
echo "setup: dependencies present" >&2
