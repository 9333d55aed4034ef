#!/usr/bin/env bash
# bench/run.sh -- how fast is rlcheck, compared with what people would otherwise use?
#
#   bench/run.sh [path/to/rlcheck]
#
# 1. the seed article's bash harness (seq | xargs -P 50 | redis-cli --eval) against
#    `rlcheck redis --strategy lua -n 200 -p 50 --runs 4` at the same load;
# 2. rlcheck's throughput against redis-benchmark sending the same EVALSHA to the same server;
# 3. client CPU per request and peak RSS of both, from bench/rusage.py (wait4).
#
# Everything runs against a private redis-server on loopback that this script starts in a
# mktemp -d directory and always stops again (trap), so results never touch a real Redis and
# nothing is left running. About 60-85 s on a 2-vCPU machine; the --threads 2 row is
# skipped when it would end past TIME_BUDGET_S.
#
# Tunables (environment):
#   SEED_REPS=3        repetitions of the seed harness (~400 process spawns, 5-11 s each)
#   RLCHECK_REPS=10    repetitions of the small rlcheck run in part 1
#   TP_REPS=3          alternating repetitions per tool in part 2
#   TP_REQUESTS=100000 requests per throughput run
#   USE_HYPERFINE=auto part 1 timing: hyperfine when installed; "no" for the date +%s%N loop
#   TIME_BUDGET_S=90   run the --threads 2 row only if, judging by the threads 1 row, it
#                      would finish within this many seconds of the start
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
readonly SEED_DIR=$REPO/bench/seed
readonly LUA=$REPO/lua/sliding_window.lua
readonly SEED_REPS=${SEED_REPS:-3}
readonly RLCHECK_REPS=${RLCHECK_REPS:-10}
readonly TP_REPS=${TP_REPS:-3}
readonly TP_REQUESTS=${TP_REQUESTS:-100000}
readonly TIME_BUDGET_S=${TIME_BUDGET_S:-90}
readonly USE_HYPERFINE=${USE_HYPERFINE:-auto}
readonly CONCURRENCY=50

WORK=""        # mktemp -d: redis dir, socket, logs, raw measurements
REDIS_PID=""   # the redis-server this script started, and only that one (set by start_redis)
REDIS_PORT=""

# ---------------------------------------------------------------------------------------------
# setup and teardown

cleanup() {
  local rc=$?
  if [[ -n $REDIS_PID ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
    # SHUTDOWN NOSAVE first (clean exit, no dump); SIGTERM by pid as the fallback.
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  fi
  [[ -n $WORK ]] && rm -rf "$WORK"
  exit "$rc"
}

require_tools() {
  local t
  for t in redis-server redis-cli redis-benchmark jq awk xargs; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install -y redis-server redis-tools jq)"
  done
  [[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
  command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3)"
}

rcli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }

# ---------------------------------------------------------------------------------------------
# 1. seed harness vs rlcheck at the seed's load


# median_wall NAME REPS PREPARE COMMAND -> prints the median wall seconds; leaves hyperfine's
# JSON (with mean user/system) in $WORK/NAME.json or our own "wall cpu rss" rows in NAME.txt.
median_wall() {
  local name=$1 reps=$2 prepare=$3 cmd=$4 i
  if [[ $USE_HYPERFINE != no ]] && command -v hyperfine >/dev/null; then
    hyperfine --style none --runs "$reps" --prepare "$prepare" \
      --export-json "$WORK/$name.json" "$cmd" >/dev/null
    jq '.results[0].median' "$WORK/$name.json"
  else
    for i in $(seq 1 "$reps"); do
      bash -c "$prepare" >/dev/null
      timed_run /dev/null bash -c "$cmd" >>"$WORK/$name.txt"
    done
    col 1 "$WORK/$name.txt" | median
  fi
}

# Mean client CPU seconds per run, from whichever of the two files median_wall left behind.
cpu_per_run() {
  if [[ -f $WORK/$1.json ]]; then jq '.results[0].user + .results[0].system' "$WORK/$1.json"
  else col 2 "$WORK/$1.txt" | median; fi
}

bench_seed() {
  # One run of the article's harness: 200 requests through xargs -P 50, one redis-cli process
  # (plus a bash and a head) per request. Its "N allowed M denied" summary goes to seed.out so
  # we can check the harness really did the same work as rlcheck (10 allowed each run).
  local seed_out=$WORK/seed.out
  local seed_cmd="cd '$SEED_DIR' && seq 1 200 | xargs -P $CONCURRENCY -I{} ./lua.sh {} | sort | uniq -c | tr '\n' ' ' >>'$seed_out' && echo >>'$seed_out'"
  export REDIS_PORT   # read by bench/seed/lua.sh (the article hard-codes 6391)
  note "part 1: seed harness x$SEED_REPS (slow: two process spawns per request)"
  SEED_S=$(median_wall seed "$SEED_REPS" "redis-cli -h 127.0.0.1 -p $REDIS_PORT DEL lua:u1" "$seed_cmd")
  SEED_CPU=$(cpu_per_run seed)
  SEED_ALLOWED=$(awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "allowed") a = $i; printf "%s ", a + 0; a = "" }' "$seed_out")

  note "part 1: rlcheck -n 200 -p 50 --runs 4 x$RLCHECK_REPS"
  local rl="'$RLCHECK' redis --redis redis://127.0.0.1:$REDIS_PORT --strategy lua -n 200 -p $CONCURRENCY --runs 4 -q"
  # rlcheck uses a fresh key per run and deletes it afterwards, so nothing to reset; one
  # untimed run first warms the page cache for the binary and loads the script.
  bash -c "$rl" >/dev/null
  RL4_S=$(median_wall rl4 "$RLCHECK_REPS" "true" "$rl")
  RL4_CPU=$(cpu_per_run rl4)
}

# ---------------------------------------------------------------------------------------------
# 2 + 3. throughput, CPU per request and peak RSS: rlcheck vs redis-benchmark

# rlcheck_tp THREADS: one run, appends "wall cpu rss rps_reported" to rl_tN.txt
rlcheck_tp() {
  local t=$1 f=$WORK/rl_t$1.txt json=$WORK/rl.json m
  m=$(timed_run "$json" "$RLCHECK" redis --redis "redis://127.0.0.1:$REDIS_PORT" --strategy lua \
    -n "$TP_REQUESTS" -p "$CONCURRENCY" --runs 1 --threads "$t" --json)
  echo "$m $(jq '.summary.requests_per_second' "$json")" >>"$f"
  [[ $(jq -r '.runs[0].errors' "$json") == 0 ]] || die "rlcheck reported errors: $json"
}

# rb_tp THREADS: one redis-benchmark run of the same EVALSHA, same key shape, same arguments.
# -r makes redis-benchmark substitute __rand_int__, giving each ZADD member a (mostly)
# unique id the way rlcheck's {uuid} does. The key is reset so each run starts from an
# empty limiter, as every rlcheck run does.
rb_tp() {
  local t=$1 f=$WORK/rb_t$1.txt csv=$WORK/rb.csv threads=() m
  ((t > 1)) && threads=(--threads "$t")
  rcli DEL bench:rb >/dev/null
  m=$(timed_run "$csv" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -n "$TP_REQUESTS" -c "$CONCURRENCY" \
    -r 1000000 "${threads[@]}" --csv EVALSHA "$SHA" 1 bench:rb 10 60000 __rand_int__)
  echo "$m $(awk -F'"' 'NR == 2 { print $4 }' "$csv")" >>"$f"
}

# Alternate the two tools so that drift on a shared machine hits both equally.
bench_throughput() {
  local t=$1 i
  for i in $(seq 1 "$TP_REPS"); do
    note "part 2: threads $t, rep $i/$TP_REPS: rlcheck, redis-benchmark"
    rlcheck_tp "$t"
    rb_tp "$t"
  done
}

# ---------------------------------------------------------------------------------------------
# report

# tp_row LABEL FILE THREADS: medians of one tool's throughput runs
tp_row() {
  local f=$2 rps_tool wall rps_wall cpu_us rss_mb
  rps_tool=$(col 4 "$f" | median)
  wall=$(col 1 "$f" | median)
  rps_wall=$(calc %.0f "$TP_REQUESTS / $wall")
  cpu_us=$(calc %.1f "$(col 2 "$f" | median) * 1e6 / $TP_REQUESTS")
  rss_mb=$(calc %.1f "$(col 3 "$f" | median) / 1024")
  printf '%-22s %7s %12.0f %12s %9.2f %14s %12s\n' "$1" "$3" "$rps_tool" "$rps_wall" "$wall" "$cpu_us" "$rss_mb"
}

report_throughput() {
  local t=$1 rl=$WORK/rl_t$1.txt rb=$WORK/rb_t$1.txt
  tp_row rlcheck "$rl" "$t"
  tp_row redis-benchmark "$rb" "$t"
  printf '%-22s %7s %11sx %11sx %8sx %13sx %11sx\n' "ratio rlcheck/r-b" "$t" \
    "$(ratio "$(col 4 "$rl" | median)" "$(col 4 "$rb" | median)")" \
    "$(ratio "$(col 1 "$rb" | median)" "$(col 1 "$rl" | median)")" \
    "$(ratio "$(col 1 "$rl" | median)" "$(col 1 "$rb" | median)")" \
    "$(ratio "$(col 2 "$rl" | median)" "$(col 2 "$rb" | median)")" \
    "$(ratio "$(col 3 "$rl" | median)" "$(col 3 "$rb" | median)")"
}

report() {
  local model
  model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo
  echo "rlcheck bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)  cpu: $model"
  echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))"
  echo "server:  $(redis-server --version | awk '{ print $1, $2, $3 }'), 127.0.0.1:$REDIS_PORT, no persistence"
  echo
  echo "1. seed harness vs rlcheck: 200 requests, 50 at a time, sliding window limit 10 per 60s"
  hr 96
  printf '%-52s %10s %6s %16s\n' "" "median s" "reps" "client CPU s/run"
  printf '%-52s %10.3f %6s %16.2f\n' "seed: seq 1 200 | xargs -P 50 lua.sh  (1 run)" "$SEED_S" "$SEED_REPS" "$SEED_CPU"
  printf '%-52s %10.3f %6s %16.3f\n' "rlcheck -n 200 -p 50 --runs 4        (4 runs)" "$RL4_S" "$RLCHECK_REPS" "$RL4_CPU"
  printf '%-52s %9.1fx %6s %15.0fx\n' "ratio seed-1-run / rlcheck-4-runs" \
    "$(ratio "$SEED_S" "$RL4_S")" "" "$(ratio "$SEED_CPU" "$RL4_CPU")"
  echo "seed harness allowed per run: ${SEED_ALLOWED}(expected 10 each)"
  echo
  echo "2+3. throughput: EVALSHA sliding_window.lua, $TP_REQUESTS requests, 50 connections, median of $TP_REPS alternating runs"
  echo "     (limit 10 per 60s: all but 10 requests per run are denials, for both tools)"
  hr 96
  printf '%-22s %7s %12s %12s %9s %14s %12s\n' tool threads "rps (tool)" "rps (wall)" "wall s" "CPU us/req" "max RSS MB"
  report_throughput 1
  if [[ -f $WORK/rl_t2.txt ]]; then report_throughput 2
  else echo "(threads 2 row skipped: it would have ended after TIME_BUDGET_S=${TIME_BUDGET_S}s)"; fi
  hr 96
  echo "rps (tool): rlcheck summary.requests_per_second / redis-benchmark's own figure;"
  echo "rps (wall): requests / wall time of the whole process (connect, script load, report)."
  echo "ratios: rps and 'rps (wall)' > 1 means rlcheck is faster; wall, CPU and RSS > 1 mean rlcheck uses more."
  echo "total bench time: ${SECONDS}s; load average before: $LOAD_BEFORE, after: $LOAD_AFTER (on $(nproc) CPUs)"
}

# ---------------------------------------------------------------------------------------------

main() {
  require_tools
  resolve_rlcheck "${1:-}"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlcheck-bench.XXXXXX")
  trap cleanup EXIT
  trap 'echo "bench: command failed at line $LINENO" >&2' ERR
  trap 'exit 130' INT TERM
  start_redis "$WORK" --unixsocket "$WORK/redis.sock"
  note "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT, dir $WORK"
  SHA=$(rcli SCRIPT LOAD "$(cat "$LUA")")
  [[ $SHA =~ ^[0-9a-f]{40}$ ]] || die "SCRIPT LOAD failed: $SHA"

  SECONDS=0
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  bench_seed
  local t1_start=$SECONDS
  bench_throughput 1
  # The threads 2 row costs about what the threads 1 row did; skip it rather than overrun.
  if ((2 * SECONDS - t1_start < TIME_BUDGET_S)); then bench_throughput 2
  else note "skipping threads 2: would end after TIME_BUDGET_S=${TIME_BUDGET_S}s"; fi
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  report
}

main "$@"
