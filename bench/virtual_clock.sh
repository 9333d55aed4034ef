#!/usr/bin/env bash
# bench/virtual_clock.sh -- how many virtual hours per real second `--virtual-clock` audits, and
# whether rlcheck or Redis is what limits it.
#
#   bench/virtual_clock.sh [path/to/rlcheck]
#
# The limiter is a client-time sliding log (ARGV: limit, window_ms, now_ms, a unique member;
# reply {allowed, remaining, retry_ms}; tests/fixtures/time/client_sliding_log.lua), run as
#   rlcheck redis --script LUA --arg {limit} --arg {window_ms} --arg {now_ms} --arg {uuid}
#                 -l 10 -w 1h -r 1 --virtual-clock --json ...
# on a private redis-server, in two shapes:
#   a. one identity, --rate 1/s --duration 3h (10 800 requests, strictly one after another):
#      target under 5 s real;
#   b. --identities 10000 --rate 10000/1m --duration 24h -p 200 (14.4 M requests), as is, with
#      --pipeline 8, and with --pipeline 8 --threads 2: target under 60 s real.
# Every run must pass (exit 0) with every request answered. FLUSHALL before each, since each run
# starts its virtual clock at the wall clock's now and the previous run's entries lie ahead of it.
# For each: wall time, virtual hours per real second, client CPU (user+sys) per request and peak
# RSS from bench/rusage.py, and the CPU redis-server used meanwhile (from /proc), per request
# and as a share of the wall time: a redis-server near 100 % of one core is the bottleneck.
# Then redis-benchmark sends the same script by EVALSHA (200 connections, -P 1 and -P 8, 10 000
# keys, random now and member: all but 10 calls per key are denials, as most of rlcheck's are)
# to the same server, for Redis's own ceiling on this machine, and the table prints rlcheck's rate
# as a ratio of it.
#
# Everything listens on 127.0.0.1 only, in a mktemp -d directory that a trap removes after
# stopping the redis-server this script started (and only it). About 13 minutes on 2 vCPUs,
# most of it the unpipelined 24 h row (6 min).
#
# Tunables (environment):
#   B_DURATION=24h     the virtual span of the b rows (rate stays 10000/1m)
#   B_VARIANTS="plain pipeline8 pipeline8-threads2"   which b rows to run
#   RB_REQUESTS=1000000  requests per redis-benchmark run
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
readonly B_DURATION=${B_DURATION:-24h}
readonly B_VARIANTS=${B_VARIANTS:-plain pipeline8 pipeline8-threads2}
readonly RB_REQUESTS=${RB_REQUESTS:-1000000}
readonly IDENTITIES=10000
readonly CONNECTIONS=200
CLK_TCK=$(getconf CLK_TCK)
readonly CLK_TCK

WORK=""        # mktemp -d: the script, redis's dir, raw measurements
REDIS_PID=""   # the one process this script starts
REDIS_PORT=""
LUA=""
ROWS=()        # "label|requests|wall|cpu|rss|redis_cpu|virtual_ms|allowed" per rlcheck run
RB_ROWS=()     # "pipeline|rps|wall|redis_cpu" per redis-benchmark run

cleanup() {
  local rc=$?
  stop_pid "$REDIS_PID"
  [[ -n $WORK ]] && rm -rf "$WORK"
  exit "$rc"
}

require_tools() {
  local tool
  for tool in redis-server redis-cli redis-benchmark jq; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y redis-server redis-tools jq)"
  done
  [[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
  command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3)"
}

# The client-time sliding log of the tests: the limiter decides at the now it is given, never
# Redis's TIME.
write_script() {
  LUA=$WORK/client_sliding_log.lua
  cp "$REPO/tests/fixtures/time/client_sliding_log.lua" "$LUA"
}

# CPU seconds redis-server has used so far.
redis_cpu_s() {
  awk -v hz="$CLK_TCK" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$REDIS_PID/stat"
}

# ---------------------------------------------------------------------------------------------
# measurement

# virtual_run LABEL REQUESTS RLCHECK-ARGS...: one --virtual-clock run; it must pass and answer
# every one of REQUESTS.
virtual_run() {
  local label=$1 requests=$2 json=$WORK/run.json m r0 r1 answered wall cpu rss
  shift 2
  redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
  note "$label: rlcheck redis $* (${requests} requests)"
  r0=$(redis_cpu_s)
  m=$(timed_run "$json" "$RLCHECK" redis --redis "redis://127.0.0.1:$REDIS_PORT" --script "$LUA" \
    --arg '{limit}' --arg '{window_ms}' --arg '{now_ms}' --arg '{uuid}' -l 10 -w 1h -r 1 \
    --virtual-clock --json "$@") ||
    die "$label: rlcheck exited $?: verdict $(jq -r '.verdict' "$json" 2>/dev/null)"
  r1=$(redis_cpu_s)
  answered=$(jq '.runs[0] | .allowed + .denied' "$json")
  [[ $(jq -r '.verdict' "$json") == pass && $answered == "$requests" ]] ||
    die "$label: expected a pass with $requests requests answered: $(jq -c '.runs[0]' "$json" | cut -c1-300)"
  read -r wall cpu rss <<<"$m"
  ROWS+=("$label|$requests|$wall|$cpu|$rss|$(calc %.2f "$r1 - $r0")|$(jq '.summary.virtual_span_ms' "$json")|$(jq '.runs[0].allowed' "$json")")
}

# rb_run PIPELINE: redis-benchmark, the same script by EVALSHA from CONNECTIONS connections.
rb_run() {
  local pipeline=$1 sha out=$WORK/rb.csv r0 r1 m rps wall cpu rss
  redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
  sha=$(redis-cli -p "$REDIS_PORT" SCRIPT LOAD "$(cat "$LUA")")
  note "redis-benchmark -c $CONNECTIONS -P $pipeline -n $RB_REQUESTS EVALSHA (same script)"
  r0=$(redis_cpu_s)
  m=$(timed_run "$out" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c "$CONNECTIONS" \
    -P "$pipeline" -n "$RB_REQUESTS" -r "$IDENTITIES" --csv \
    EVALSHA "$sha" 1 'vb:__rand_int__' 10 3600000 __rand_int__ __rand_int__) ||
    die "redis-benchmark exited $?"
  r1=$(redis_cpu_s)
  rps=$(awk -F'"' 'NR == 2 { print $4 }' "$out")
  [[ -n $rps ]] || die "redis-benchmark: no result in $(cat "$out")"
  read -r wall cpu rss <<<"$m"
  RB_ROWS+=("$pipeline|$rps|$wall|$(calc %.2f "$r1 - $r0")|$cpu")
}

# ---------------------------------------------------------------------------------------------
# report

readonly ROW_FMT='%-46s %10s %8s %9s %10s %8s %8s %10s %9s\n'

# rb_rps PIPELINE: redis-benchmark's own rate at that depth
rb_rps() {
  local row
  for row in "${RB_ROWS[@]}"; do
    [[ ${row%%|*} == "$1" ]] && { cut -d'|' -f2 <<<"$row"; return; }
  done
  echo 0
}

report() {
  local row label requests wall cpu rss rcpu vms allowed rb model pipeline rps target
  model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo
  echo "rlcheck --virtual-clock bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)  cpu: $model"
  echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))"
  echo "redis:   $(redis-server --version | awk '{ print $3 }'), 127.0.0.1:$REDIS_PORT, no persistence"
  echo
  echo "client-time sliding log, -l 10 -w 1h -r 1 --virtual-clock, one run each"
  hr 130
  # shellcheck disable=SC2059  # the format is ROW_FMT
  printf "$ROW_FMT" run requests "wall s" "virt h/s" "CPU us/req" "RSS MB" "redis s" "redis us/req" "redis %"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r label requests wall cpu rss rcpu vms allowed <<<"$row"
    # shellcheck disable=SC2059
    printf "$ROW_FMT" "$label" "$requests" "$(calc %.2f "$wall")" "$(calc %.3f "$vms / 3.6e6 / $wall")" \
      "$(calc %.2f "$cpu * 1e6 / $requests")" "$(calc %.0f "$rss / 1024")" "$rcpu" \
      "$(calc %.2f "$rcpu * 1e6 / $requests")" "$(calc %.0f "100 * $rcpu / $wall")"
  done
  hr 130
  for row in "${ROWS[@]}"; do
    IFS='|' read -r label requests wall cpu rss rcpu vms allowed <<<"$row"
    printf '%-46s %s allowed; %s req/s' "$label" "$allowed" "$(calc %.0f "$requests / $wall")"
    case $label in
      b.*pipeline*) rb=$(rb_rps 8) ;;
      b.*) rb=$(rb_rps 1) ;;
      *) rb=0 ;;
    esac
    if [[ $rb != 0 ]]; then
      printf ' = %sx redis-benchmark at the same depth' "$(ratio "$requests / $wall" "$rb")"
    fi
    echo
  done
  echo
  echo "redis-benchmark -c $CONNECTIONS -n $RB_REQUESTS -r $IDENTITIES EVALSHA <same script> 1 vb:__rand_int__ 10 3600000 __rand_int__ __rand_int__"
  for row in "${RB_ROWS[@]}"; do
    IFS='|' read -r pipeline rps wall rcpu cpu <<<"$row"
    printf '  -P %-2s %8.0f req/s  client CPU %5.2f us/req  redis %6.2f s = %5.2f us/req, %3.0f %% of the wall time\n' \
      "$pipeline" "$rps" "$(calc %.2f "$cpu * 1e6 / $RB_REQUESTS")" "$rcpu" \
      "$(calc %.2f "$rcpu * 1e6 / $RB_REQUESTS")" "$(calc %.0f "100 * $rcpu / $wall")"
  done
  echo
  echo "Redis's floor: the CPU redis-server spent per request, times the requests, is the least wall"
  echo "time one redis-server core needs for them, whatever the client does; against each row's target:"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r label requests wall cpu rss rcpu vms allowed <<<"$row"
    target=60
    [[ $label == a.* ]] && target=5
    printf '  %-46s %6.1f s of Redis CPU (%.2f us/req) in %.1f s: %s s needs <= %.2f us/req\n' "$label" \
      "$rcpu" "$(calc %.2f "$rcpu * 1e6 / $requests")" "$wall" "$target" \
      "$(calc %.2f "$target * 1e6 / $requests")"
  done
  echo
  echo "virt h/s: virtual hours audited per real second (summary.virtual_span_ms / wall)."
  echo "CPU: user+sys of rlcheck per request; RSS: its peak resident set (14.4 M records are kept)."
  echo "redis s: CPU redis-server used during the run (/proc/PID/stat); redis %: of the run's wall"
  echo "  time. One redis-server runs on one core: near 100 %, Redis is what limits the rate."
  echo "total bench time: ${SECONDS}s; load average before: $LOAD_BEFORE, after: $LOAD_AFTER (on $(nproc) CPUs)"
}

# ---------------------------------------------------------------------------------------------

main() {
  local v hours
  require_tools
  resolve_rlcheck "${1:-}"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlcheck-virtual-bench.XXXXXX")
  trap cleanup EXIT
  trap 'echo "bench: command failed at line $LINENO" >&2' ERR
  trap 'exit 130' INT TERM
  SECONDS=0
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  write_script
  start_redis "$WORK/redis"
  note "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT"

  virtual_run "a. 1 identity, 1/s x 3h" 10800 --rate 1/s --duration 3h
  [[ $B_DURATION =~ ^([0-9]+)h$ ]] || die "B_DURATION must be whole hours (e.g. 24h)"
  hours=${BASH_REMATCH[1]}
  for v in $B_VARIANTS; do
    local extra=()
    case $v in
      plain) ;;
      pipeline8) extra=(--pipeline 8) ;;
      pipeline8-threads2) extra=(--pipeline 8 --threads 2) ;;
      *) die "unknown B_VARIANTS entry: $v" ;;
    esac
    virtual_run "b. 10k ids ${hours}h -p $CONNECTIONS${extra[*]:+ ${extra[*]}}" "$((IDENTITIES * 60 * hours))" \
      --identities "$IDENTITIES" --rate 10000/1m --duration "$B_DURATION" -p "$CONNECTIONS" "${extra[@]}"
  done
  rb_run 1
  rb_run 8
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  report
}

main "$@"
