#!/usr/bin/env bash
# bench/cpu_pairs.sh -- client CPU of pipelined runs, several rlcheck binaries and
# redis-benchmark taken in turn, run by run:
#
#   bench/cpu_pairs.sh BINARY [BINARY...]
#
# Each rep runs every binary (`redis --pipeline 16 --strategy lua -n REQUESTS -p 50`) and then
# `redis-benchmark -P 16 -c 50` with the same EVALSHA, against one throw-away redis-server, and
# reads each process's CPU two ways, in two runs: `perf stat -e task-clock` (the CPU its
# threads ran) and user + system time from wait4 (bench/rusage.py, which also counts the
# process's exit, and /usr/bin/time's own fraction of a millisecond). It
# prints the medians and the paired ratios (each run divided by redis-benchmark's of the same
# rep, then the median), which drift less than ratios of medians when the machine's speed
# changes during the reps.
#
# rlcheck sends to a key as long as redis-benchmark's (--key RL_KEY --reset), so that the two
# send the same bytes.
#
# Tunables (environment): REPS=11, REQUESTS=100000, RL_KEY=bench:rl (empty: rlcheck's default
# key, rlcheck:<id>:sliding-window:1).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"
readonly REPS=${REPS:-11}
readonly REQUESTS=${REQUESTS:-100000}
same_key_args
(($# > 0)) || die "usage: bench/cpu_pairs.sh BINARY [BINARY...]"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
command -v redis-benchmark >/dev/null || die "redis-benchmark not found (Debian: redis-tools)"

make_work
start_redis "$WORK/redis"
SHA=$(redis-cli -p "$REDIS_PORT" SCRIPT LOAD "$(cat "$REPO/lua/sliding_window.lua")")

# measure OUT COMMAND...: "task_clock_ms wait4_cpu_ms": two runs of COMMAND, one under
# `perf stat` alone, one under bench/rusage.py (whose python and /usr/bin/time perf would count).
measure() {
  local out=$1 stat=$WORK/stat
  shift
  perf stat -x, -o "$stat" -e task-clock "$@" >"$out" || true  # a verdict is not a failure
  local clock wait4
  clock=$(awk -F, '/task-clock/ { print $1 }' "$stat")
  wait4=$( (python3 "$REPO/bench/rusage.py" "$out" "$@" || true) | awk '{ printf "%.3f", $2 * 1000 }')
  echo "$clock $wait4"
}

rows=$WORK/rows
for rep in $(seq 1 "$REPS"); do
  note "rep $rep/$REPS"
  row=""
  for bin in "$@"; do
    row+=" $(measure "$WORK/rl.json" "$bin" redis --redis "redis://127.0.0.1:$REDIS_PORT" \
      --pipeline 16 --strategy lua -n "$REQUESTS" -p 50 --runs 1 --json --max-errors "$REQUESTS" \
      "${KEY_ARGS[@]}")"
  done
  row+=" $(measure "$WORK/rb.csv" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -P 16 \
    -n "$REQUESTS" -c 50 -r 1000000 --csv EVALSHA "$SHA" 1 bench:rb 10 60000 __rand_int__)"
  echo "$row" >>"$rows"
done

echo "client CPU, $REQUESTS pipelined requests, $REPS reps; $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$rows" "$@" <<'PY'
import statistics as st
import sys

rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
names = sys.argv[2:] + ["redis-benchmark"]
print(f"{'':32s} {'task-clock ms':>14s} {'/ r-b paired':>13s} {'wait4 ms':>9s} {'/ r-b paired':>13s}")
for i, name in enumerate(names):
    clock = [r[2 * i] for r in rows]
    wait4 = [r[2 * i + 1] for r in rows]
    rb_clock = [r[-2] for r in rows]
    rb_wait4 = [r[-1] for r in rows]
    paired_clock = st.median(c / b for c, b in zip(clock, rb_clock))
    paired_wait4 = st.median(c / b for c, b in zip(wait4, rb_wait4))
    print(f"{name[-32:]:32s} {st.median(clock):14.1f} {paired_clock:13.3f} "
          f"{st.median(wait4):9.1f} {paired_wait4:13.3f}")
PY
