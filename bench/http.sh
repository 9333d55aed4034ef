#!/usr/bin/env bash
# bench/http.sh -- how fast is `rlcheck http` as an HTTP load generator, next to hey?
#
#   bench/http.sh [path/to/rlcheck]
#
# Both tools send the same GET with the same header, N requests over 50 keep-alive
# connections, alternating so that drift on a shared machine hits both alike, against:
#  1. `rlcheck serve` (sliding-window Lua limiter on a private redis-server, a limit so high that
#     every request is allowed): the server a user of rlcheck http points it at;
#  2. nginx answering a static 200 (when nginx is installed): a server that is not the
#     bottleneck, so the row measures the clients.
# Every run is wrapped in /usr/bin/time -v: client CPU (user+sys) per request and peak RSS.
#
# Everything listens on 127.0.0.1 only, in a mktemp -d directory that a trap removes after
# stopping every process this script started (and only those). About 20-40 s on 2 vCPUs.
#
# Tunables (environment):
#   HTTP_REPS=3          alternating repetitions per tool and server
#   HTTP_REQUESTS=20000  requests per run
#   TIME_BUDGET_S=90     run the nginx row only if, judging by the first, it ends within this
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=http_targets.sh
source "$(dirname "${BASH_SOURCE[0]}")/http_targets.sh"
readonly HTTP_REPS=${HTTP_REPS:-3}
readonly HTTP_REQUESTS=${HTTP_REQUESTS:-20000}
readonly TIME_BUDGET_S=${TIME_BUDGET_S:-90}
readonly CONCURRENCY=50
readonly API_KEY_HEADER='X-API-Key: bench'

WORK=""        # mktemp -d: redis and nginx dirs, logs, raw measurements
REDIS_PID=""   # the processes this script started, and only those
SERVE_PID=""
NGINX_PID=""
REDIS_PORT=""
SERVE_URL=""
NGINX_URL=""

# ---------------------------------------------------------------------------------------------
# setup and teardown

require_tools() {
  local tool
  for tool in redis-server redis-cli jq; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y redis-server redis-tools jq)"
  done
  command -v hey >/dev/null || die "hey not found (apt-get install -y hey)"
  [[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
}

# ---------------------------------------------------------------------------------------------
# measurement

# rlcheck_run NAME URL: one run, appends "wall cpu rss rps_reported" to NAME.rl.
# --limit 1000000 so that the limit check passes; every response must be a 200.
rlcheck_run() {
  local name=$1 url=$2 json=$WORK/rl.json m
  m=$(timed_run "$json" "$RLCHECK" http "$url" -n "$HTTP_REQUESTS" -p "$CONCURRENCY" -r 1 \
    --limit 1000000 -H "$API_KEY_HEADER" --json) ||
    die "rlcheck http exited $? against $url: verdict $(jq -r '.verdict' "$json" 2>/dev/null)"
  [[ $(jq -r '.runs[0].allowed' "$json") == "$HTTP_REQUESTS" ]] ||
    die "rlcheck http: not every request was allowed against $url: $(jq -c '.runs[0]' "$json" | cut -c1-300)"
  echo "$m $(jq '.summary.requests_per_second' "$json")" >>"$WORK/$name.rl"
}

# hey_run NAME URL: one run, appends "wall cpu rss rps_reported" to NAME.hey.
hey_run() {
  local name=$1 url=$2 out=$WORK/hey.txt m ok
  m=$(timed_run "$out" hey -n "$HTTP_REQUESTS" -c "$CONCURRENCY" -H "$API_KEY_HEADER" "$url") ||
    die "hey exited $? against $url"
  ok=$(awk '$1 == "[200]" { print $2 }' "$out")
  [[ $ok == "$HTTP_REQUESTS" ]] || die "hey: not every response was a 200 from $url: $(tr -s ' \n' ' ' <"$out" | cut -c1-300)"
  echo "$m $(awk '/Requests\/sec:/ { print $2 }' "$out")" >>"$WORK/$name.hey"
}

# bench_target NAME URL: alternate the two tools HTTP_REPS times, after one untimed warm-up
# of each (page cache for the binaries, the server's first allocations).
bench_target() {
  local name=$1 url=$2 i
  note "$name: warm-up"
  rlcheck_run warmup "$url"
  hey_run warmup "$url"
  for i in $(seq 1 "$HTTP_REPS"); do
    note "$name: rep $i/$HTTP_REPS: rlcheck http, hey"
    rlcheck_run "$name" "$url"
    hey_run "$name" "$url"
  done
}

# ---------------------------------------------------------------------------------------------
# report

# tool_row LABEL TOOL FILE: medians of one tool's runs against one server
tool_row() {
  local f=$3 wall
  wall=$(col 1 "$f" | median)
  printf '%-26s %-12s %11.0f %11.0f %8.2f %11.1f %11.1f\n' "$1" "$2" "$(col 4 "$f" | median)" \
    "$(calc %.0f "$HTTP_REQUESTS / $wall")" "$wall" \
    "$(calc %.1f "$(col 2 "$f" | median) * 1e6 / $HTTP_REQUESTS")" \
    "$(calc %.1f "$(col 3 "$f" | median) / 1024")"
}

report_target() {
  local label=$1 rl=$WORK/$2.rl hey=$WORK/$2.hey
  tool_row "$label" "rlcheck http" "$rl"
  tool_row "" hey "$hey"
  printf '%-26s %-12s %10sx %10sx %7sx %10sx %10sx\n' "" "rlcheck/hey" \
    "$(ratio "$(col 4 "$rl" | median)" "$(col 4 "$hey" | median)")" \
    "$(ratio "$(col 1 "$hey" | median)" "$(col 1 "$rl" | median)")" \
    "$(ratio "$(col 1 "$rl" | median)" "$(col 1 "$hey" | median)")" \
    "$(ratio "$(col 2 "$rl" | median)" "$(col 2 "$hey" | median)")" \
    "$(ratio "$(col 3 "$rl" | median)" "$(col 3 "$hey" | median)")"
  printf '%-26s rps (tool) per run, in order: rlcheck %s; hey %s\n' "" \
    "$(col 4 "$rl" | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }')" "$(col 4 "$hey" | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }')"
}

report() {
  local model
  model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo
  echo "rlcheck http bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)  cpu: $model"
  echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))"
  echo "hey:     $(dpkg-query -W -f '${Version}' hey 2>/dev/null || echo unknown)" \
    "  redis: $(redis-server --version | awk '{ print $3 }')" \
    "  nginx: ${NGINX_VERSION:-not run}"
  echo
  echo "GET with '$API_KEY_HEADER', $HTTP_REQUESTS requests, $CONCURRENCY connections," \
    "median of $HTTP_REPS alternating runs"
  hr 100
  printf '%-26s %-12s %11s %11s %8s %11s %11s\n' server tool "rps (tool)" "rps (wall)" "wall s" \
    "CPU us/req" "max RSS MB"
  report_target "rlcheck serve (lua)" serve
  if [[ -f $WORK/nginx.rl ]]; then report_target "nginx static 200" nginx
  else echo "nginx row skipped: ${NGINX_SKIPPED:-}"; fi
  hr 100
  echo "rps (tool): rlcheck summary.requests_per_second / hey's Requests/sec;"
  echo "rps (wall): requests / wall time of the whole process; CPU: user+sys of the client process."
  echo "ratios: rps > 1 means rlcheck is faster; wall, CPU and RSS > 1 mean rlcheck uses more."
  echo "total bench time: ${SECONDS}s; load average before: $LOAD_BEFORE, after: $LOAD_AFTER (on $(nproc) CPUs)"
}

# ---------------------------------------------------------------------------------------------

main() {
  require_tools
  resolve_rlcheck "${1:-}"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlcheck-http-bench.XXXXXX")
  trap cleanup EXIT
  trap 'echo "bench: command failed at line $LINENO" >&2' ERR
  trap 'exit 130' INT TERM
  SECONDS=0
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

  start_redis "$WORK/redis"
  start_serve
  note "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT; rlcheck serve pid $SERVE_PID on $SERVE_URL"
  bench_target serve "$SERVE_URL"
  stop_pid "$SERVE_PID"   # the second row runs without the first server's load
  SERVE_PID=""

  # The nginx row costs about what the first did, usually less; skip it rather than overrun.
  NGINX_SKIPPED=""
  if ((2 * SECONDS >= TIME_BUDGET_S)); then
    NGINX_SKIPPED="it would have ended after TIME_BUDGET_S=${TIME_BUDGET_S}s"
  elif start_nginx; then
    note "nginx pid $NGINX_PID on $NGINX_URL"
    bench_target nginx "$NGINX_URL"
  else
    NGINX_SKIPPED="nginx not installed or did not start"
  fi
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  report
}

main "$@"
