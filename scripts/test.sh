#!/usr/bin/env bash
# README command (2): install, build, and run every test: unit tests, and integration tests
# that start their own redis-server on a free loopback port and unix socket and stop it.
# Then the .deb is installed and tried; then (SANITIZE=0 skips these) the same tests again in
# an AddressSanitizer + UBSan build made with clang, which also builds the libFuzzer targets:
# their corpora and kept crashes are replayed, and each is fuzzed for a share of FUZZ_SECONDS;
# last, the tests that run several worker threads (doctest suite "threads") against a
# ThreadSanitizer build of rlcheck. Each phase prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

phase_start=$SECONDS
phase() {
  echo "test.sh: $1 took $((SECONDS - phase_start))s" >&2
  phase_start=$SECONDS
}

scripts/install-deps.sh
phase install

if command -v clang-format >/dev/null; then
  unformatted=$(git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run 2>&1 | grep -c warning || true)
  [[ "$unformatted" -eq 0 ]] || { echo "clang-format: $unformatted places differ" >&2; exit 1; }
fi

BUILD_DIR=build BUILD_TYPE=RelWithDebInfo scripts/build.sh
phase "build (RelWithDebInfo)"
(cd build && ctest --output-on-failure --parallel 4)
phase "tests (RelWithDebInfo)"

# The .deb: built, installed with apt, used, removed (root only, as in CI).
if [[ $(id -u) -eq 0 ]]; then
  BUILD_DIR=build scripts/test-package.sh
  phase "package"
fi

if [[ "${SANITIZE:-1}" != 0 ]]; then
  # One unity build serves the ASan/UBSan tests and the fuzz targets.
  BUILD_DIR=build-sanitize BUILD_TYPE=Debug scripts/build.sh -DCMAKE_CXX_COMPILER=clang++-16 \
    -DRLCHECK_FUZZ=ON -DCMAKE_UNITY_BUILD=ON
  phase "build (ASan+UBSan, fuzz targets)"
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure --parallel 4)
  phase "tests (ASan+UBSan) and fuzz replays"
  scripts/fuzz.sh build-sanitize "${FUZZ_SECONDS:-120}"
  phase fuzz

  # ThreadSanitizer: rlcheck alone is built with it; the integration tests of the "threads"
  # suite (those with --threads 2) run it, and every `rlcheck serve` they start, from the
  # RelWithDebInfo test binary. A race makes rlcheck exit 66 with the report on stderr.
  BUILD_DIR=build-tsan BUILD_TYPE=Debug BUILD_TARGET=rlcheck scripts/build.sh -DRLCHECK_TSAN=ON \
    -DRLCHECK_TESTS=OFF -DCMAKE_UNITY_BUILD=ON
  phase "build (TSan)"
  # gcc 12's TSan cannot map its shadow memory under the widest address randomisation of recent
  # kernels; without randomisation (where the container allows it) it always can.
  norandom=()
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    norandom=(setarch "$(uname -m)" -R)
  fi
  RLCHECK_TEST_BINARY=$PWD/build-tsan/rlcheck \
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
    "${norandom[@]}" build/tests/rlcheck_integration_tests -ts=threads
  phase "tests (TSan)"
fi
