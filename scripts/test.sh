#!/usr/bin/env bash
# README command (2): install, build, and run every test: unit tests, and integration tests
# that start their own redis-server on a free loopback port and unix socket and stop it.
# Then the .deb is installed and tried, and the same tests run again in an AddressSanitizer +
# UBSan build (SANITIZE=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

if command -v clang-format >/dev/null; then
  unformatted=$(git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run 2>&1 | grep -c warning || true)
  [[ "$unformatted" -eq 0 ]] || { echo "clang-format: $unformatted places differ" >&2; exit 1; }
fi

BUILD_DIR=build BUILD_TYPE=RelWithDebInfo scripts/build.sh
(cd build && ctest --output-on-failure --parallel 4)

# The .deb: built, installed with apt, used, removed (root only, as in CI).
if [[ $(id -u) -eq 0 ]]; then
  BUILD_DIR=build scripts/test-package.sh
fi

if [[ "${SANITIZE:-1}" != 0 ]]; then
  BUILD_DIR=build-sanitize BUILD_TYPE=Debug scripts/build.sh -DRLCHECK_SANITIZE=ON
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure --parallel 4)
fi
