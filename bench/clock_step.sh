#!/usr/bin/env bash
# bench/clock_step.sh -- a correct limiter on a host whose wall clock is stepped mid-run:
#
#   bench/clock_step.sh [path/to/rlcheck] [path/to/another/rlcheck]
#
# Runs `rlcheck redis --strategy STRATEGY --limit 10 --window 1s --rate RATE --duration 4s`
# against a private redis-server on loopback and, 1.5 s in, steps CLOCK_REALTIME forward by
# STEP_MS (Redis TIME, which the built-in strategies decide by, jumps with it), then back by the
# same once the run is over (or BACK_AT_S seconds into the run: a step there and back again,
# which a reading at the run's ends alone does not see). Each binary given runs side by side through the same step, and
# prints its verdict, its failed checks and what it read of the limiter's clock
# (runs[].limiter_clock). A binary without the allowance fails the correct Lua limiter
# (limit, contract, retry-after-accuracy); one with it passes and names the step.
#
# Changes this host's clock: needs root, and a host no time daemon is steering meanwhile. The
# clock is stepped back even if a run fails. About 5 s.
#
# Tunables (environment): STEP_MS=30, STRATEGY=lua, RATE=40/s, BACK_AT_S (empty: after the run;
# else more than 1.5 and less than 4).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
readonly STEP_MS=${STEP_MS:-30}
readonly STRATEGY=${STRATEGY:-lua}
readonly RATE=${RATE:-40/s}
readonly BACK_AT_S=${BACK_AT_S:-}

WORK=$(mktemp -d)
REDIS_PID=""
STEPPED=0
step_clock() {   # step_clock MS: CLOCK_REALTIME moves by MS milliseconds (negative: back)
  python3 -c "import time; time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME) + $1 / 1000)"
}
cleanup() {
  local rc=$?
  [[ $STEPPED == 1 ]] && step_clock "-$STEP_MS"
  stop_pid "$REDIS_PID"
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT INT TERM

[[ $(id -u) == 0 ]] || die "stepping the clock needs root"
resolve_rlcheck "${1:-}"
bins=("$RLCHECK")
[[ -n ${2:-} ]] && bins+=("$2")
start_redis "$WORK/redis"

echo "rlcheck clock-step demo  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)"
back="after the run"
[[ -n $BACK_AT_S ]] && back="at $BACK_AT_S s"
echo "--strategy $STRATEGY --limit 10 --window 1s --rate $RATE --duration 4s; CLOCK_REALTIME +${STEP_MS} ms at 1.5 s, back $back"
pids=()
for i in "${!bins[@]}"; do
  "${bins[$i]}" redis --redis "redis://127.0.0.1:$REDIS_PORT" --strategy "$STRATEGY" --limit 10 \
    --window 1s --rate "$RATE" --duration 4s --json >"$WORK/out$i.json" 2>/dev/null &
  pids+=($!)
done
sleep 1.5
step_clock "$STEP_MS"
STEPPED=1
if [[ -n $BACK_AT_S ]]; then
  sleep "$(calc %.3f "$BACK_AT_S - 1.5")"
  step_clock "-$STEP_MS"
  STEPPED=0
fi
for pid in "${pids[@]}"; do wait "$pid" || true; done
if [[ $STEPPED == 1 ]]; then
  step_clock "-$STEP_MS"
  STEPPED=0
fi
for i in "${!bins[@]}"; do
  echo "${bins[$i]} ($("${bins[$i]}" --version | head -n1)):"
  jq -c '{verdict, failed: [.checks[] | select(.status == "fail") | .id],
          limiter_clock: .runs[0].limiter_clock}' "$WORK/out$i.json"
done
