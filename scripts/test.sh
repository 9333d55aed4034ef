#!/usr/bin/env bash
# README command (2): install, build, and run every test: unit tests, and integration tests
# that start their own redis-server on a free loopback port and unix socket and stop it.
#
# Two full builds, no more. A gcc RelWithDebInfo build of rlcheck alone (-Wall -Wextra over all
# of src/) makes the .deb, which is installed and tried; it leaves out the debug info, a third
# of its time, which the .deb strips anyway (gcc's code is the same with or without). A clang 16
# AddressSanitizer + UBSan build makes the unit and integration tests, which run there, and the
# libFuzzer targets: their corpora and kept crashes are replayed, and each is fuzzed for a share
# of FUZZ_SECONDS. Last, a gcc ThreadSanitizer build of rlcheck alone, which the tests that run
# several worker threads (doctest suite "threads") run. SANITIZE=0 leaves out clang and the
# sanitizers: the tests are then built in the RelWithDebInfo build (with gcc) and run there; no
# fuzzing, no TSan.
#
# On 2 cores the sanitizer builds run beside the other phases at the lowest CPU priority: the
# ASan build beside the RelWithDebInfo build and the package, the TSan build beside the ASan
# tests and the fuzzing. They get little more than the cycles those leave idle, so the tests
# hardly run slower for them (and fuzzing runs for a fixed time). Each phase prints its wall
# time, a background build the time from its start to its end; the last line is the whole
# command's.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
phase_start=$SECONDS
phase() {
  echo "test.sh: $1 took $((SECONDS - phase_start))s" >&2
  phase_start=$SECONDS
}

# in_background KEY PHASE COMMAND...: runs COMMAND at nice 19 in a process group of its own,
# its output kept; finish KEY waits for it at this script's priority, shows its output and
# prints the phase's wall time (a failure ends the script).
logs=$(mktemp -d)
declare -A background_pid background_phase
in_background() {
  local key=$1
  background_phase[$key]=$2
  shift 2
  # shellcheck disable=SC2016  # expanded by the inner shell
  setsid nice -n 19 bash -c '"$@"; status=$?; echo "$SECONDS" >"$0"; exit "$status"' \
    "$logs/$key.seconds" "$@" >"$logs/$key" 2>&1 &
  background_pid[$key]=$!
}
finish() {
  local key=$1 status=0
  # Nothing left to run beside it: back to this script's priority (where allowed), so it does
  # not wait behind other builds on the machine.
  renice -n "$(nice)" -g "${background_pid[$key]}" >/dev/null 2>&1 || true
  wait "${background_pid[$key]}" || status=$?
  unset "background_pid[$key]"
  cat "$logs/$key"
  if [[ $status -ne 0 ]]; then
    echo "test.sh: ${background_phase[$key]} failed (exit $status)" >&2
    exit "$status"
  fi
  echo "test.sh: ${background_phase[$key]} took $(<"$logs/$key.seconds")s (in the background)" >&2
  phase_start=$SECONDS
}
# A failed phase leaves no background build behind.
stop_background() {
  local pid
  for pid in "${background_pid[@]}"; do
    kill -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$logs"
}
trap stop_background EXIT

scripts/install-deps.sh
phase install

if command -v clang-format >/dev/null; then
  unformatted=$(git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run 2>&1 | grep -c warning || true)
  [[ "$unformatted" -eq 0 ]] || { echo "clang-format: $unformatted places differ" >&2; exit 1; }
fi

sanitize=${SANITIZE:-1}
# The builds have folders of their own (build-release, build-sanitize, build-tsan): the options
# they set stay out of build/, the folder of scripts/run-main.sh and of a developer's builds.
release=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON)
# The integration tests mostly wait (windows, timeouts): their shards run side by side.
ctest_jobs=8
# run_ctest DIR: every test of the build in DIR, once. The probe's three shards
# (integration_probe*) run after the others, side by side, beside two busy loops
# (scripts/with-cpu-hogs.sh): their round trips time a live limiter from outside, and must hold
# on a loaded machine.
run_ctest() {
  local probe_shards='^integration_probe'
  (cd "$1" && ctest --output-on-failure --parallel "$ctest_jobs" -E "$probe_shards")
  (cd "$1" && ../scripts/with-cpu-hogs.sh ctest --output-on-failure --parallel 3 -R "$probe_shards")
}

if [[ "$sanitize" != 0 ]]; then
  # The tests and the fuzz targets; line tables are all the sanitizers' stack traces need
  # (file, line, inlined frames).
  in_background sanitize "build (ASan+UBSan: tests, fuzz targets)" \
    env BUILD_DIR=build-sanitize BUILD_TYPE=Debug scripts/build.sh -DCMAKE_CXX_COMPILER=clang++-16 \
    -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DRLCHECK_FUZZ=ON -DCMAKE_UNITY_BUILD=ON
  # What the .deb needs: rlcheck, its man page and completion (and the audit bench).
  BUILD_DIR=build-release BUILD_TYPE=RelWithDebInfo scripts/build.sh "${release[@]}" -DRLCHECK_TESTS=OFF
  phase "build (RelWithDebInfo)"
else
  BUILD_DIR=build-release BUILD_TYPE=RelWithDebInfo scripts/build.sh "${release[@]}" -DRLCHECK_TESTS=ON
  phase "build (RelWithDebInfo, tests)"
  run_ctest build-release
  phase "tests (RelWithDebInfo)"
fi

# The .deb: built, installed with apt, used, removed (root only, as in CI).
if [[ $(id -u) -eq 0 ]]; then
  BUILD_DIR=build-release scripts/test-package.sh
  phase "package"
fi

[[ "$sanitize" != 0 ]] || { echo "test.sh: all took $((SECONDS - started))s" >&2; exit 0; }

finish sanitize
# ThreadSanitizer: rlcheck alone is built with it; the integration tests of the "threads"
# suite (those with --threads 2) run it, and every `rlcheck serve` they start. Line tables
# (-g1) are all its reports need.
in_background tsan "build (TSan)" \
  env BUILD_DIR=build-tsan BUILD_TYPE=Debug BUILD_TARGET=rlcheck scripts/build.sh \
  -DRLCHECK_TSAN=ON -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DRLCHECK_TESTS=OFF -DCMAKE_UNITY_BUILD=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_ctest build-sanitize
phase "tests (ASan+UBSan) and fuzz replays"
scripts/fuzz.sh build-sanitize "${FUZZ_SECONDS:-120}"
phase fuzz

finish tsan
# gcc 12's TSan cannot map its shadow memory under the widest address randomisation of recent
# kernels; without randomisation (where the container allows it) it always can. The test
# binary is the ASan one: it only starts RLCHECK_TEST_BINARY. A race makes rlcheck exit 66
# with the report on stderr.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  norandom=(setarch "$(uname -m)" -R)
fi
RLCHECK_TEST_BINARY=$PWD/build-tsan/rlcheck \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
  "${norandom[@]}" build-sanitize/tests/rlcheck_integration_tests -ts=threads
phase "tests (TSan)"
echo "test.sh: all took $((SECONDS - started))s" >&2
