#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test (unit, CLI, end to end),
# then rebuilds the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

echo "== build and run all tests"
BUILD_DIR=build scripts/build.sh -DREVEAL_BUILD_TESTS=ON
cmake --build build -j"$(nproc)" --target reveal_tests >/dev/null
ctest --test-dir build --output-on-failure --no-tests=error -j2

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DREVEAL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)" --target reveal_tests reveal_cli 2>&1 | grep -E "error|warning" || true
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --no-tests=error -L unit -j2
echo "== all tests passed"
