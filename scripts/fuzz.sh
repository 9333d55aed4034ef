#!/usr/bin/env bash
# Fuzzes every libFuzzer target of a -DRLCHECK_FUZZ=ON build for a bounded time.
#   scripts/fuzz.sh [BUILD_DIR] [SECONDS]      (defaults: build-sanitize, 120)
# SECONDS is the whole step's budget, shared by the targets (two run at a time), so adding a
# target does not make the step longer. Each starts from its seed corpus and kept crashes
# (fuzz/corpus/NAME_fuzzer, fuzz/regressions/NAME_fuzzer); what it finds new goes to a scratch
# folder. A crash fails the step and is kept as BUILD_DIR/fuzz-artifacts/NAME_fuzzer-crash-*:
# copy it into fuzz/regressions/NAME_fuzzer/ with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-sanitize}
budget=${2:-120}
jobs=2

mapfile -t targets < <(find "$build_dir/fuzz" -maxdepth 1 -name '*_fuzzer' -type f -executable |
  sort)
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz: no targets in $build_dir/fuzz" >&2; exit 1; }
per_target=$(( budget * jobs / ${#targets[@]} ))
(( per_target >= 5 )) || per_target=5

artifacts=$build_dir/fuzz-artifacts
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"

fuzz_one() {
  local binary=$1 name
  name=$(basename "$binary")
  local inputs=()
  for dir in fuzz/corpus/"$name" fuzz/regressions/"$name"; do
    [[ -d $dir ]] && inputs+=("$dir")
  done
  mkdir -p "$scratch/$name"
  if ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$binary" -max_total_time="$per_target" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$name-" -print_final_stats=1 \
    "$scratch/$name" "${inputs[@]}" >"$scratch/$name.log" 2>&1; then
    local runs cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log")
    cov=$(grep -o 'cov: [0-9]*' "$scratch/$name.log" | tail -1)
    echo "fuzz: $name: ${runs:-?} runs in ${per_target}s, $cov"
  else
    echo "fuzz: $name FAILED; its log:" >&2
    tail -60 "$scratch/$name.log" >&2
    return 1
  fi
}
export -f fuzz_one
export scratch artifacts per_target

echo "fuzz: ${#targets[@]} targets, ${per_target}s each, $jobs at a time"
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$1"' _ {}
