#!/usr/bin/env bash
# bench/http.sh -- how fast is `rlcheck http` (native client, and curl) next to wrk and hey?
#
#   bench/http.sh [path/to/rlcheck]
#
# The tools send the same GET with the same header, N requests over 50 keep-alive
# connections, alternating so that drift on a shared machine hits both alike, against:
#  1. `rlcheck serve` (sliding-window Lua limiter on a private redis-server, a limit so high that
#     every request is allowed): the server a user of rlcheck http points it at;
#  2. nginx answering a static 200 (when nginx is installed): a server that is not the
#     bottleneck, so the row measures the clients.
# Every run is measured by bench/rusage.py: client CPU (user+sys) per request and peak RSS.
#
# Everything listens on 127.0.0.1 only, in a mktemp -d directory that a trap removes after
# stopping every process this script started (and only those). About 3-4 minutes on 2 vCPUs.
#
# Tunables (environment):
#   HTTP_REPS=5          alternating repetitions per tool and server
#   OPEN_SECONDS=10      the open-model row: --rate 60000/s for this long
#   HTTP_REQUESTS=20000  requests per run
#   TIME_BUDGET_S=300    run the nginx row only if, judging by the first, it ends within this
#   HTTP_SERVERS="serve nginx"  the rows to run (nginx alone: the comparison with wrk on a
#                        server that is not the bottleneck)
#   NGINX_EXTRA=1        0 skips the nginx extras (--threads 2 vs wrk -t2, the open model)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=http_targets.sh
source "$(dirname "${BASH_SOURCE[0]}")/http_targets.sh"
readonly HTTP_REPS=${HTTP_REPS:-5}
readonly HTTP_REQUESTS=${HTTP_REQUESTS:-20000}
readonly TIME_BUDGET_S=${TIME_BUDGET_S:-300}
readonly OPEN_SECONDS=${OPEN_SECONDS:-10}
readonly HTTP_SERVERS=${HTTP_SERVERS:-serve nginx}
readonly NGINX_EXTRA=${NGINX_EXTRA:-1}
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
  # nginx-light, wrk and hey are Debian packages; the bench installs them, the tests do not.
  "$REPO/scripts/install-deps.sh" nginx-light wrk hey time jq
  local tool
  for tool in redis-server redis-cli jq hey wrk; do
    command -v "$tool" >/dev/null || die "$tool not found"
  done
  [[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
  command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3)"
}

# ---------------------------------------------------------------------------------------------
# measurement: every run appends "wall_s cpu_s rss_kb rps_reported requests" to WORK/NAME.TOOL

# rlcheck_run NAME TOOL URL ARGS...: one run of rlcheck http with ARGS (the client, --threads,
# --rate); --limit 1000000 so that the limit check passes; every response must be a 200.
rlcheck_run() {
  local name=$1 tool=$2 url=$3 json=$WORK/rl.json m n
  shift 3
  m=$(timed_run "$json" "$RLCHECK" http "$url" -p "$CONCURRENCY" -r 1 --limit 1000000 \
    --window 1m -H "$API_KEY_HEADER" --json "$@") ||
    die "rlcheck http exited $? against $url: verdict $(jq -r '.verdict' "$json" 2>/dev/null)"
  n=$(jq '.runs[0] | .allowed + .denied + .errors' "$json")
  [[ $(jq -r '.runs[0].allowed' "$json") == "$n" ]] ||
    die "rlcheck http: not every request was allowed against $url: $(jq -c '.runs[0]' "$json" | cut -c1-300)"
  echo "$m $(jq '.summary.requests_per_second' "$json") $n" >>"$WORK/$name.$tool"
}

# hey_run NAME URL: one run of hey, HTTP_REQUESTS requests.
hey_run() {
  local name=$1 url=$2 out=$WORK/hey.txt m ok
  m=$(timed_run "$out" hey -n "$HTTP_REQUESTS" -c "$CONCURRENCY" -H "$API_KEY_HEADER" "$url") ||
    die "hey exited $? against $url"
  ok=$(awk '$1 == "[200]" { print $2 }' "$out")
  [[ $ok == "$HTTP_REQUESTS" ]] || die "hey: not every response was a 200 from $url: $(tr -s ' \n' ' ' <"$out" | cut -c1-300)"
  echo "$m $(awk '/Requests\/sec:/ { print $2 }' "$out") $HTTP_REQUESTS" >>"$WORK/$name.hey"
}

# wrk_run NAME URL THREADS SECONDS: one run of wrk (it sends for a time, not a count).
wrk_run() {
  local name=$1 url=$2 threads=$3 seconds=$4 out=$WORK/wrk.txt m n
  m=$(timed_run "$out" wrk -t"$threads" -c "$CONCURRENCY" -d"${seconds}s" -H "$API_KEY_HEADER" "$url") ||
    die "wrk exited $? against $url"
  grep -q 'Non-2xx' "$out" && die "wrk: responses other than 2xx from $url"
  n=$(awk '/requests in/ { print $1 }' "$out")
  echo "$m $(awk '/Requests\/sec:/ { print $2 }' "$out") $n" >>"$WORK/$name.wrk"
}

# bench_target NAME URL: alternate rlcheck (native), rlcheck (curl), hey and wrk HTTP_REPS
# times, after one untimed warm-up (page cache for the binaries, the server's first
# allocations). wrk runs for about as long as rlcheck native took.
bench_target() {
  local name=$1 url=$2 i secs
  note "$name: warm-up"
  rlcheck_run warmup native "$url" -n "$HTTP_REQUESTS" --http-client native
  hey_run warmup "$url"
  for i in $(seq 1 "$HTTP_REPS"); do
    note "$name: rep $i/$HTTP_REPS: rlcheck native, rlcheck curl, hey, wrk"
    rlcheck_run "$name" native "$url" -n "$HTTP_REQUESTS" --http-client native
    rlcheck_run "$name" curl "$url" -n "$HTTP_REQUESTS" --http-client curl
    hey_run "$name" "$url"
    secs=$(calc %.0f "$(tail -n1 "$WORK/$name.native" | cut -d' ' -f1) + 0.5")
    ((secs < 2)) && secs=2
    wrk_run "$name" "$url" 1 "$secs"
  done
}

# bench_nginx_extra URL: --threads 2 against wrk -t2, and the open model at 60000/s.
bench_nginx_extra() {
  local url=$1 i
  for i in $(seq 1 "$HTTP_REPS"); do
    note "nginx: rep $i/$HTTP_REPS: rlcheck --threads 2, wrk -t2, rlcheck --rate 60000/s"
    rlcheck_run threads2 native "$url" -n "$HTTP_REQUESTS" --threads 2
    wrk_run threads2 "$url" 2 3
    rlcheck_run open native "$url" --rate 60000/s --duration "${OPEN_SECONDS}s"
  done
}

# ---------------------------------------------------------------------------------------------
# report

# tool_row LABEL TOOL FILE: medians of one tool's runs against one server
tool_row() {
  local f=$3
  printf '%-22s %-15s %11.0f %8.2f %11.1f %11.1f\n' "$1" "$2" "$(col 4 "$f" | median)" \
    "$(col 1 "$f" | median)" \
    "$(awk '{ print $2 * 1e6 / $5 }' "$f" | median)" \
    "$(calc %.1f "$(col 3 "$f" | median) / 1024")"
}

rps_of() { col 4 "$WORK/$1" | median; }
cpu_of() { awk '{ print $2 * 1e6 / $5 }' "$WORK/$1" | median; }

report_target() {
  local label=$1 name=$2 tool
  for tool in native curl hey wrk; do
    [[ -f $WORK/$name.$tool ]] || continue
    case $tool in native) t="rlcheck native" ;; curl) t="rlcheck curl" ;; wrk) t="wrk -t1" ;; *) t=$tool ;; esac
    tool_row "$label" "$t" "$WORK/$name.$tool"
    label=""
  done
  printf '%-22s %-15s rps %sx wrk, %sx hey; CPU/request %sx wrk  (curl: rps %sx wrk)\n' "" \
    "native vs" "$(ratio "$(rps_of "$name.native")" "$(rps_of "$name.wrk")")" \
    "$(ratio "$(rps_of "$name.native")" "$(rps_of "$name.hey")")" \
    "$(ratio "$(cpu_of "$name.native")" "$(cpu_of "$name.wrk")")" \
    "$(ratio "$(rps_of "$name.curl")" "$(rps_of "$name.wrk")")"
  printf '%-22s rps per run, in order: native %s; wrk %s\n' "" \
    "$(col 4 "$WORK/$name.native" | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }')" \
    "$(col 4 "$WORK/$name.wrk" | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }')"
}

report() {
  local model
  model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo
  echo "rlcheck http bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)  cpu: $model"
  echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))"
  echo "hey: $(dpkg-query -W -f '${Version}' hey 2>/dev/null || echo unknown)" \
    "  wrk: $(dpkg-query -W -f '${Version}' wrk 2>/dev/null || echo unknown)" \
    "  redis: $(redis-server --version | awk '{ print $3 }')" \
    "  nginx: ${NGINX_VERSION:-not run}"
  echo
  echo "GET with '$API_KEY_HEADER', $HTTP_REQUESTS requests (wrk: as long), $CONCURRENCY" \
    "connections, median of $HTTP_REPS alternating runs"
  hr 90
  printf '%-22s %-15s %11s %8s %11s %11s\n' server tool "rps (tool)" "wall s" "CPU us/req" \
    "max RSS MB"
  [[ -f $WORK/serve.native ]] && report_target "rlcheck serve (lua)" serve
  if [[ -f $WORK/nginx.native ]]; then
    report_target "nginx static 200" nginx
    if [[ -f $WORK/threads2.native ]]; then
      tool_row "nginx, 2 threads" "rlcheck -t 2" "$WORK/threads2.native"
      tool_row "" "wrk -t2" "$WORK/threads2.wrk"
      printf '%-22s %-15s rps %sx wrk -t2\n' "" "native vs" \
        "$(ratio "$(rps_of threads2.native)" "$(rps_of threads2.wrk)")"
      printf '%-22s %-15s offered 60000/s for %ss: achieved %s/s (median), %s of the rate\n' \
        "nginx, open model" "rlcheck native" "$OPEN_SECONDS" "$(rps_of open.native)" \
        "$(ratio "$(rps_of open.native)" 60000)"
    fi
  else echo "nginx rows skipped: ${NGINX_SKIPPED:-}"; fi
  hr 90
  echo "rps (tool): rlcheck summary.requests_per_second, hey's and wrk's Requests/sec;"
  echo "CPU: user+sys of the client process per request it sent."
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

  if [[ " $HTTP_SERVERS " == *" serve "* ]]; then
    start_redis "$WORK/redis"
    start_serve
    note "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT; rlcheck serve pid $SERVE_PID on $SERVE_URL"
    bench_target serve "$SERVE_URL"
    stop_pid "$SERVE_PID"   # the second row runs without the first server's load
    SERVE_PID=""
  fi

  # The nginx row costs about what the first did, usually less; skip it rather than overrun.
  NGINX_SKIPPED=""
  if [[ " $HTTP_SERVERS " != *" nginx "* ]]; then
    NGINX_SKIPPED="not in HTTP_SERVERS"
  elif ((2 * SECONDS >= TIME_BUDGET_S)); then
    NGINX_SKIPPED="it would have ended after TIME_BUDGET_S=${TIME_BUDGET_S}s"
  elif start_nginx; then
    note "nginx pid $NGINX_PID on $NGINX_URL"
    bench_target nginx "$NGINX_URL"
    if ((NGINX_EXTRA)); then bench_nginx_extra "$NGINX_URL"; fi
  else
    NGINX_SKIPPED="nginx not installed or did not start"
  fi
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  report
}

main "$@"
