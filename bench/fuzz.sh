#!/usr/bin/env bash
# bench/fuzz.sh [BUILD_DIR] [RUNS] [SECONDS] -- runs every libFuzzer target of a
# -DRLCHECK_FUZZ=ON build (default build-sanitize) for RUNS executions (default 10 000 000), or
# at most SECONDS per target when given (the slow targets), one after another, from its
# seed corpus and kept crashes, and prints one line per target: executions, seconds, exec/s,
# coverage (edges) and features. New inputs go to a scratch folder; a crash stops the script
# and is kept as BUILD_DIR/fuzz-artifacts/NAME_fuzzer-crash-*.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-$REPO/build-sanitize}
runs=${2:-10000000}
max_seconds=${3:-0}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build_dir/fuzz-artifacts"

printf '%-30s %10s %8s %8s %6s %7s\n' target runs seconds exec/s cov ft
for binary in "$build_dir"/fuzz/*_fuzzer; do
  [[ -x $binary ]] || continue
  name=$(basename "$binary")
  inputs=()
  for dir in "$REPO/fuzz/corpus/$name" "$REPO/fuzz/regressions/$name"; do
    [[ -d $dir ]] && inputs+=("$dir")
  done
  mkdir -p "$scratch/$name"
  start=$(date +%s%N)
  ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$binary" -runs="$runs" -max_total_time="$max_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build_dir/fuzz-artifacts/$name-" "$scratch/$name" "${inputs[@]}" \
    >"$scratch/$name.log" 2>&1 || { tail -60 "$scratch/$name.log" >&2; exit 1; }
  seconds=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { print (b - a) / 1e9 }')
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$scratch/$name.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' <<<"$done_line" | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' <<<"$done_line" | cut -d' ' -f2)
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log")
  printf '%-30s %10s %8.0f %8.0f %6s %7s\n' "$name" "$executed" "$seconds" \
    "$(awk -v n="$executed" -v s="$seconds" 'BEGIN { print n / s }')" "$cov" "$ft"
done
