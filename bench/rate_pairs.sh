#!/usr/bin/env bash
# bench/rate_pairs.sh -- the pipelined rate of rlcheck against redis-benchmark's, run by run:
#
#   bench/rate_pairs.sh [path/to/rlcheck]
#
# Each rep runs `rlcheck redis --pipeline 16 --strategy lua -n REQUESTS -p 50` and then
# `redis-benchmark -P 16 -c 50` with the same EVALSHA of lua/sliding_window.lua, against one
# throw-away redis-server, rlcheck on a key as long as redis-benchmark's (--key RL_KEY --reset).
# It prints the medians of each client's requests a second, the median of the paired ratios
# (each rlcheck run divided by the redis-benchmark run after it) and a 95 % bootstrap interval
# of that median: both clients saturate the one server, so an interval that holds 1.0 says
# level.
#
# Tunables (environment): REPS=31, REQUESTS=100000, RL_KEY=bench:rl (empty: rlcheck's default
# key, rlcheck:<id>:sliding-window:1, 33 bytes to redis-benchmark's 8).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"
command -v redis-benchmark >/dev/null || die "redis-benchmark not found (Debian: redis-tools)"
command -v jq >/dev/null || die "jq not found"
readonly REPS=${REPS:-31} REQUESTS=${REQUESTS:-100000}
same_key_args
resolve_rlcheck "${1:-}"

make_work
start_redis "$WORK/redis"
SHA=$(redis-cli -p "$REDIS_PORT" SCRIPT LOAD "$(cat "$REPO/lua/sliding_window.lua")")

rows=$WORK/rows
for rep in $(seq 1 "$REPS"); do
  note "rep $rep/$REPS"
  "$RLCHECK" redis --redis "redis://127.0.0.1:$REDIS_PORT" --pipeline 16 --strategy lua \
    -n "$REQUESTS" -p 50 --runs 1 --json --max-errors "$REQUESTS" "${KEY_ARGS[@]}" \
    >"$WORK/rl.json" || true  # a verdict is not a failure
  [[ $(jq -r '.runs[0].errors' "$WORK/rl.json") == 0 ]] || die "rlcheck reported errors"
  rl=$(jq -r '.summary.requests_per_second' "$WORK/rl.json")
  redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -P 16 -n "$REQUESTS" -c 50 -r 1000000 --csv \
    EVALSHA "$SHA" 1 bench:rb 10 60000 __rand_int__ >"$WORK/rb.csv"
  rb=$(rb_requests_per_second "$WORK/rb.csv")
  echo "$rl $rb" >>"$rows"
done

key_options=${KEY_ARGS[*]:-"rlcheck's default key"}
echo "pipelined rate, $REQUESTS requests, $REPS alternating pairs, $key_options;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$rows" <<'PY'
import random
import statistics as st
import sys

rows = [tuple(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
paired = [rl / rb for rl, rb in rows]
random.seed(1)
medians = sorted(st.median(random.choices(paired, k=len(paired))) for _ in range(2000))
print(f"rlcheck {st.median(r for r, _ in rows):.0f} r/s, redis-benchmark "
      f"{st.median(b for _, b in rows):.0f} r/s (medians)")
print(f"paired median {st.median(paired):.3f}, 95 % bootstrap interval "
      f"{medians[50]:.3f}-{medians[1949]:.3f}")
PY
