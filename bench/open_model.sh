#!/usr/bin/env bash
# bench/open_model.sh -- rlcheck's open model (--rate, --duration) next to hey at the same
# offered load.
#
#   bench/open_model.sh [path/to/rlcheck]
#
# Both tools offer the same constant rate over 50 keep-alive connections, alternating so that
# drift on a shared machine hits both alike:
#   rlcheck http URL --rate R/s --duration D -p 50 -r 1 --json
#   hey -z D -c 50 -q R/50 URL          (hey's -q is per worker: 50 x R/50 = R per second)
# against
#  1. `rlcheck serve` (sliding-window Lua limiter on a private redis-server, a limit so high that
#     every request is allowed), at RATE (5000/s) for DURATION (10s);
#  2. the same server at OVER_RATE (40000/s) for OVER_DURATION (2s), more than it can answer:
#     rlcheck still sends request i at its due instant start + i/R (or, with every connection
#     busy, as soon as one frees up) and counts its latency from that due instant, so the
#     backlog shows up in p99; each of hey's workers waits for its reply before it takes the
#     next tick (Go's ticker drops the ticks nobody takes), so hey sends fewer requests and its
#     latencies stay at a few milliseconds: the waiting it caused is never measured;
#  3. nginx answering a static 200 (when installed), at RATE for DURATION;
#  4. lateness (rlcheck alone, against the same nginx): how late rlcheck sends, its
#     runs[0].lateness_ms (sent - due: p50, p99, max), at each of LATENESS_RATES with uniform
#     arrivals and LATENESS_POISSON with --arrivals poisson, LATENESS_DURATION_S each, the
#     configurations taken in turn LATENESS_REPS times.
# For each run: achieved rate (replies / wall time of the process), client CPU (user+sys) per
# request and peak RSS from bench/rusage.py, latency p50/p99 (rlcheck: runs[0].latency_ms,
# from the due instant; hey: its latency distribution, from when it sent the request).
#
# Everything listens on 127.0.0.1 only, in a mktemp -d directory that a trap removes after
# stopping every process this script started (and only those). About 2.5-3 minutes.
#
# Tunables (environment):
#   RATE=5000 DURATION_S=10           the sustainable rows (rate must be a multiple of 50)
#   OVER_RATE=40000 OVER_DURATION_S=2 the overload row (0 to skip it)
#   OL_REPS=3                         alternating repetitions per tool and row
#   OL_ROWS="serve over nginx lateness" the rows to run
#   LATENESS_RATES="20000 40000 60000" LATENESS_POISSON="40000" LATENESS_DURATION_S=5
#   LATENESS_REPS=3                   the lateness row (rates in requests a second)
#   TIME_BUDGET_S=200                 run the nginx row only if, judging by the first, it ends within this
#   QUIET_LOAD=0.5 QUIET_WAIT_S=0     before measuring, wait up to QUIET_WAIT_S seconds (checking
#                                     every 60 s) for the 1-minute load average to drop below QUIET_LOAD
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=http_targets.sh
source "$(dirname "${BASH_SOURCE[0]}")/http_targets.sh"
readonly RATE=${RATE:-5000}
readonly DURATION_S=${DURATION_S:-10}
readonly OVER_RATE=${OVER_RATE:-40000}
readonly OVER_DURATION_S=${OVER_DURATION_S:-2}
readonly OL_REPS=${OL_REPS:-3}
readonly OL_ROWS=${OL_ROWS:-serve over nginx lateness}
readonly LATENESS_RATES=${LATENESS_RATES:-20000 40000 60000}
readonly LATENESS_POISSON=${LATENESS_POISSON:-40000}
readonly LATENESS_DURATION_S=${LATENESS_DURATION_S:-5}
readonly LATENESS_REPS=${LATENESS_REPS:-3}
readonly TIME_BUDGET_S=${TIME_BUDGET_S:-200}
readonly QUIET_LOAD=${QUIET_LOAD:-0.5}
readonly QUIET_WAIT_S=${QUIET_WAIT_S:-0}
readonly CONCURRENCY=50
readonly WARMUP_S=1
CLK_TCK=$(getconf CLK_TCK)
readonly CLK_TCK

WORK=""        # mktemp -d: redis and nginx dirs, logs, raw measurements
REDIS_PID=""   # the processes this script started, and only those
SERVE_PID=""
NGINX_PID=""
REDIS_PORT=""
SERVE_URL=""
NGINX_URL=""
RUN_NO=0       # numbers the API keys, so every run starts from an empty limiter key

# ---------------------------------------------------------------------------------------------
# setup and teardown

require_tools() {
  local tool
  for tool in redis-server redis-cli jq; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y redis-server redis-tools jq)"
  done
  command -v hey >/dev/null || die "hey not found (apt-get install -y hey)"
  [[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install -y time)"
  command -v python3 >/dev/null || die "python3 not found (apt-get install -y python3)"
  ((RATE % CONCURRENCY == 0 && OVER_RATE % CONCURRENCY == 0)) ||
    die "RATE and OVER_RATE must be multiples of $CONCURRENCY (hey's -q is per connection)"
}

# wait_quiet: other people's builds and tests share the CPUs; give them QUIET_WAIT_S to finish.
wait_quiet() {
  local waited=0 load
  while :; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    awk -v l="$load" -v q="$QUIET_LOAD" 'BEGIN { exit !(l <= q) }' && return 0
    if ((waited + 60 > QUIET_WAIT_S)); then
      ((QUIET_WAIT_S > 0)) && note "load average $load still above $QUIET_LOAD after ${waited}s: measuring anyway"
      return 0
    fi
    note "load average $load above $QUIET_LOAD, waiting 60 s; busiest processes:"
    ps -eo pid,pcpu,comm --sort=-pcpu | sed -n 2,4p >&2
    sleep 60
    waited=$((waited + 60))
  done
}

has_row() { [[ " $OL_ROWS " == *" $1 "* ]]; }

# ---------------------------------------------------------------------------------------------
# measurement
#
# Each run appends "wall cpu rss replies p50_ms p99_ms" to WORK/NAME.rl or WORK/NAME.hey;
# rlcheck's lines go on with its lateness "p50_ms p99_ms max_ms".
# Every run uses its own X-API-Key, so that each starts from an empty sliding-window key on
# rlcheck serve (the key of one run at 5000/s holds 50 000 entries; sharing one key over the
# whole bench would carry hundreds of thousands from run to run, and approach the limit).

# rlcheck_run NAME URL RATE DURATION_S [ARGS...]: one open-model run (ARGS: more options, such
# as --arrivals poisson); every request must be allowed.
rlcheck_run() {
  local name=$1 url=$2 rate=$3 dur=$4 json=$WORK/rl.json m replies
  shift 4
  RUN_NO=$((RUN_NO + 1))
  m=$(timed_run "$json" "$RLCHECK" http "$url" --rate "$rate/s" --duration "${dur}s" \
    -p "$CONCURRENCY" -r 1 --limit 1000000 -H "X-API-Key: ol-$RUN_NO" --json "$@") ||
    die "rlcheck http exited $? against $url: verdict $(jq -r '.verdict' "$json" 2>/dev/null)" \
      "$(jq -c '.runs[0] | {allowed, denied, errors, error_kinds}' "$json" 2>/dev/null)"
  replies=$(jq '.runs[0] | .allowed + .denied + .errors' "$json")
  [[ $(jq '.runs[0].allowed' "$json") == "$((rate * dur))" && $replies == "$((rate * dur))" ]] ||
    die "rlcheck http: not every one of $((rate * dur)) requests was allowed against $url: $(jq -c '.runs[0]' "$json" | cut -c1-300)"
  echo "$m $replies $(jq -r '.runs[0] | "\(.latency_ms.p50) \(.latency_ms.p99)" +
    " \(.lateness_ms.p50 // "nan") \(.lateness_ms.p99 // "nan") \(.lateness_ms.max // "nan")"' \
    "$json")" >>"$WORK/$name.rl"
}

# hey_run NAME URL RATE DURATION_S: -z DURATION, -q RATE/50 per worker; every reply a 200.
hey_run() {
  local name=$1 url=$2 rate=$3 dur=$4 out=$WORK/hey.txt m ok replies
  RUN_NO=$((RUN_NO + 1))
  m=$(timed_run "$out" hey -z "${dur}s" -c "$CONCURRENCY" -q "$((rate / CONCURRENCY))" \
    -H "X-API-Key: ol-$RUN_NO" "$url") || die "hey exited $? against $url"
  ok=$(awk '$1 == "[200]" { print $2 }' "$out")
  # every status line "[code] N responses" plus every error line "[N] message"
  replies=$(awk '/^Status code distribution:/ { s = 1; next } /^Error distribution:/ { s = 0; e = 1; next }
    s && $1 ~ /^\[[0-9]+\]$/ { n += $2 } e && $1 ~ /^\[[0-9]+\]$/ { gsub(/[][]/, "", $1); n += $1 }
    END { print n + 0 }' "$out")
  [[ -n $ok && $ok == "$replies" ]] ||
    die "hey: not every reply was a 200 from $url ($ok of $replies): $(tr -s ' \n' ' ' <"$out" | cut -c1-400)"
  echo "$m $replies $(awk '$2 == "in" && $1 == "50%" { p50 = $3 * 1000 } $2 == "in" && $1 == "99%" { p99 = $3 * 1000 }
    END { printf "%.3f %.3f", p50, p99 }' "$out")" >>"$WORK/$name.hey"
}

# Busy CPU seconds of the whole machine so far (all CPUs; idle and iowait excluded).
machine_busy_s() {
  awk -v hz="$CLK_TCK" '$1 == "cpu" { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}

# CPU seconds used so far by the servers this script started (nginx: master and worker).
servers_cpu_s() {
  local p pids=()
  for p in "$SERVE_PID" "$REDIS_PID" "$NGINX_PID"; do
    [[ -n $p ]] || continue
    pids+=("$p")
    mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "$p" || true)
  done
  for p in "${pids[@]}"; do cat "/proc/$p/stat" 2>/dev/null || true; done |
    awk -v hz="$CLK_TCK" '{ sub(/^.*\) /, ""); s += $12 + $13 } END { printf "%.2f\n", s / hz }'
}

# bench_row NAME URL RATE DURATION_S [warm-up]: with "warm-up", first one short untimed run of
# each tool (page cache for the binaries, the server's first allocations); then OL_REPS
# alternating pairs. Writes "busy_s ours_s wall_s" to NAME.other: the CPU time the whole machine
# spent during the row, and the part of it both clients and the servers account for; the rest is
# other people's work (and this script's jq/awk), which would skew the row.
bench_row() {
  local name=$1 url=$2 rate=$3 dur=$4 warm=${5:-} i b0 s0 t0 client
  b0=$(machine_busy_s) s0=$(servers_cpu_s) t0=$(now_ns)
  if [[ $warm == warm-up ]]; then
    note "$name: warm-up, ${WARMUP_S}s at $RATE/s each"
    rlcheck_run "$name.warm" "$url" "$RATE" "$WARMUP_S"
    hey_run "$name.warm" "$url" "$RATE" "$WARMUP_S"
  fi
  for i in $(seq 1 "$OL_REPS"); do
    note "$name: rep $i/$OL_REPS at $rate/s for ${dur}s: rlcheck http, hey"
    rlcheck_run "$name" "$url" "$rate" "$dur"
    hey_run "$name" "$url" "$rate" "$dur"
  done
  client=$(cat "$WORK/$name".*rl "$WORK/$name".*hey 2>/dev/null | awk '{ s += $2 } END { print s + 0 }')
  echo "$(calc %.1f "$(machine_busy_s) - $b0")" "$(calc %.1f "$(servers_cpu_s) - $s0 + $client")" \
    "$(calc %.1f "($(now_ns) - $t0) / 1e9")" >"$WORK/$name.other"
}

# lateness_row URL: rlcheck alone, each configuration of the lateness row in turn, LATENESS_REPS
# times (so drift hits all of them alike). Files late.RATE.ARRIVALS.rl; late.other as above.
lateness_configs() {
  local r
  for r in $LATENESS_RATES; do echo "$r uniform"; done
  for r in $LATENESS_POISSON; do echo "$r poisson"; done
}

lateness_row() {
  local url=$1 i rate arrivals b0 s0 t0 client
  b0=$(machine_busy_s) s0=$(servers_cpu_s) t0=$(now_ns)
  note "lateness: warm-up, ${WARMUP_S}s at $RATE/s"
  rlcheck_run late.warm "$url" "$RATE" "$WARMUP_S"
  for i in $(seq 1 "$LATENESS_REPS"); do
    while read -r rate arrivals; do
      note "lateness: rep $i/$LATENESS_REPS at $rate/s ($arrivals) for ${LATENESS_DURATION_S}s"
      rlcheck_run "late.$rate.$arrivals" "$url" "$rate" "$LATENESS_DURATION_S" --arrivals "$arrivals"
    done < <(lateness_configs)
  done
  client=$(cat "$WORK"/late.*rl | awk '{ s += $2 } END { print s + 0 }')
  echo "$(calc %.1f "$(machine_busy_s) - $b0")" "$(calc %.1f "$(servers_cpu_s) - $s0 + $client")" \
    "$(calc %.1f "($(now_ns) - $t0) / 1e9")" >"$WORK/late.other"
}

# ---------------------------------------------------------------------------------------------
# report

readonly ROW_FMT='%-30s %-12s %9s %10s %8s %10s %10s %9s %9s\n'

# tool_row LABEL TOOL FILE OFFERED: medians of one tool's runs in one row
tool_row() {
  local f=$3 offered=$4
  # shellcheck disable=SC2059  # the format is ROW_FMT
  printf "$ROW_FMT" "$1" "$2" \
    "$(col 4 "$f" | median | awk '{ printf "%.0f", $1 }')" \
    "$(awk -v o="$offered" '{ printf "%.2f\n", $4 / o }' "$f" | median)" \
    "$(awk '{ printf "%.0f\n", $4 / $1 }' "$f" | median)" \
    "$(awk '{ printf "%.2f\n", $2 * 1e6 / $4 }' "$f" | median | awk '{ printf "%.1f", $1 }')" \
    "$(col 3 "$f" | median | awk '{ printf "%.1f", $1 / 1024 }')" \
    "$(col 5 "$f" | median | awk '{ printf "%.2f", $1 }')" \
    "$(col 6 "$f" | median | awk '{ printf "%.2f", $1 }')"
}

# rate_of / cpu_of FILE: median rate (replies / wall) and CPU per reply, for the ratios
rate_of() { awk '{ printf "%.3f\n", $4 / $1 }' "$1" | median; }
cpu_of() { awk '{ printf "%.4f\n", $2 * 1e6 / $4 }' "$1" | median; }

per_run() { awk '{ printf "%s%.0f/%.0f/%.1f", (NR > 1 ? ", " : ""), $4 / $1, $2 * 1e6 / $4, $6 }' "$1"; }

report_row() {
  local label=$1 rl=$WORK/$2.rl hey=$WORK/$2.hey offered=$3
  tool_row "$label" "rlcheck http" "$rl" "$offered"
  tool_row "" hey "$hey" "$offered"
  # shellcheck disable=SC2059  # the format is ROW_FMT
  printf "$ROW_FMT" "" "rlcheck/hey" "" "" "$(ratio "$(rate_of "$rl")" "$(rate_of "$hey")")x" \
    "$(ratio "$(cpu_of "$rl")" "$(cpu_of "$hey")")x" \
    "$(ratio "$(col 3 "$rl" | median)" "$(col 3 "$hey" | median)")x" "" ""
  printf '%-30s per run, rate/CPU us/p99 ms: rlcheck %s; hey %s\n' "" "$(per_run "$rl")" "$(per_run "$hey")"
  # /proc/stat counts timer ticks, which miss short bursts on a mostly idle CPU, while the
  # per-process times are exact: on a quiet machine the busy figure can come out a little above
  # or well below ours. Only a busy figure more than 10 % above ours says somebody else ran.
  awk -v n="$(nproc)" '{ o = $1 - $2; printf "%-30s machine busy %.1f CPU s in the row'"'"'s %.0f s, clients + servers %.1f: other processes %s\n",
    "", $1, $3, $2, (o < 0.1 * $1 ? "~0" : sprintf("%.1f CPU s (%.0f%% of %d CPUs)", o, 100 * o / ($3 * n), n)) }' \
    "$WORK/$2.other"
}

readonly LATE_FMT='%-18s %8s %8s %8s %10s %9s %10s %10s %10s  %s\n'

report_lateness() {
  local rate arrivals f
  echo
  echo "lateness: rlcheck http NGINX_URL --rate R/s --duration ${LATENESS_DURATION_S}s --arrivals A -p $CONCURRENCY -r 1 --json,"
  echo "  median of $LATENESS_REPS runs per configuration, the configurations taken in turn"
  hr 112
  # shellcheck disable=SC2059  # the format is LATE_FMT
  printf "$LATE_FMT" "offered, arrivals" replies /offered rate/s "CPU us/req" "lat p99" \
    "late p50" "late p99" "late max" "late p99 per run, ms"
  while read -r rate arrivals; do
    f=$WORK/late.$rate.$arrivals.rl
    # shellcheck disable=SC2059  # the format is LATE_FMT
    printf "$LATE_FMT" "$rate/s $arrivals" "$(col 4 "$f" | median | awk '{ printf "%.0f", $1 }')" \
      "$(awk -v o="$((rate * LATENESS_DURATION_S))" '{ printf "%.2f\n", $4 / o }' "$f" | median)" \
      "$(awk '{ printf "%.0f\n", $4 / $1 }' "$f" | median)" \
      "$(awk '{ printf "%.2f\n", $2 * 1e6 / $4 }' "$f" | median | awk '{ printf "%.1f", $1 }')" \
      "$(col 6 "$f" | median | awk '{ printf "%.3f", $1 }')" \
      "$(col 7 "$f" | median | awk '{ printf "%.3f", $1 }')" \
      "$(col 8 "$f" | median | awk '{ printf "%.3f", $1 }')" \
      "$(col 9 "$f" | median | awk '{ printf "%.3f", $1 }')" \
      "$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $8 }' "$f")"
  done < <(lateness_configs)
  hr 112
  echo "rate/s: replies / wall time of the client process; lat p99: latency from the due instant (ms);"
  echo "late: runs[0].lateness_ms, sent - due (ms); p50/p99/max are medians over the runs."
  awk -v n="$(nproc)" '{ o = $1 - $2; printf "machine busy %.1f CPU s in the row'"'"'s %.0f s, rlcheck + servers %.1f: other processes %s\n",
    $1, $3, $2, (o < 0.1 * $1 ? "~0" : sprintf("%.1f CPU s (%.0f%% of %d CPUs)", o, 100 * o / ($3 * n), n)) }' \
    "$WORK/late.other"
}

# report_pairs: the rows that compare rlcheck with hey
report_pairs() {
  echo "GET with a fresh 'X-API-Key' per run, $CONCURRENCY connections, median of $OL_REPS alternating runs:"
  echo "  rlcheck http URL --rate R/s --duration D -p $CONCURRENCY -r 1 --json   vs   hey -z D -c $CONCURRENCY -q R/$CONCURRENCY URL"
  hr 112
  # shellcheck disable=SC2059  # the format is ROW_FMT
  printf "$ROW_FMT" "target, offered load" tool replies "/offered" "rate/s" "CPU us/req" "RSS MB" "p50 ms" "p99 ms"
  [[ -f $WORK/serve.rl ]] && report_row "rlcheck serve, $RATE/s x ${DURATION_S}s" serve "$((RATE * DURATION_S))"
  if [[ -f $WORK/over.rl ]]; then
    report_row "rlcheck serve, $OVER_RATE/s x ${OVER_DURATION_S}s" over "$((OVER_RATE * OVER_DURATION_S))"
  fi
  if [[ -f $WORK/nginx.rl ]]; then report_row "nginx static 200, $RATE/s x ${DURATION_S}s" nginx "$((RATE * DURATION_S))"
  else echo "nginx row skipped: ${NGINX_SKIPPED:-}"; fi
  hr 112
  echo "replies: answered requests per run; /offered: replies / (rate x duration)."
  echo "rate/s: replies / wall time of the whole client process (rlcheck: until its last reply; hey: -z's end)."
  echo "CPU: user+sys of the client process per reply; RSS: its peak resident set."
  echo "p50/p99: rlcheck from each request's due instant (start + i/R), hey from when it sent the request."
  echo "ratios: rate > 1 means rlcheck answered more per second; CPU and RSS > 1 mean rlcheck uses more."
  echo "machine busy: CPU time of the whole machine during the row (/proc/stat); what both clients and the"
  echo "  servers do not account for is other people's work (or this script's jq/awk); ~0 = under 10 %, a clean row."
}

report() {
  local model
  model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo
  echo "rlcheck open-model bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)  cpu: $model"
  echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))"
  echo "hey:     $(dpkg-query -W -f '${Version}' hey 2>/dev/null || echo unknown)" \
    "  redis: $(redis-server --version | awk '{ print $3 }')" \
    "  nginx: ${NGINX_VERSION:-not run}"
  echo
  if compgen -G "$WORK/*.hey" >/dev/null; then report_pairs; fi
  if [[ -f $WORK/late.other ]]; then report_lateness
  else echo "lateness row skipped: ${LATENESS_SKIPPED:-}"; fi
  echo "total bench time: ${SECONDS}s; load average before: $LOAD_BEFORE, after: $LOAD_AFTER" \
    "(on $(nproc) CPUs; 'after' includes the bench's own processes)"
}

# ---------------------------------------------------------------------------------------------

main() {
  local t0 row_s
  require_tools
  resolve_rlcheck "${1:-}"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlcheck-open-bench.XXXXXX")
  trap cleanup EXIT
  trap 'echo "bench: command failed at line $LINENO" >&2' ERR
  trap 'exit 130' INT TERM
  wait_quiet
  SECONDS=0
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

  row_s=0
  if has_row serve || has_row over; then
    start_redis "$WORK/redis"
    start_serve
    note "redis-server pid $REDIS_PID on 127.0.0.1:$REDIS_PORT; rlcheck serve pid $SERVE_PID on $SERVE_URL"
    t0=$SECONDS
    if has_row serve; then bench_row serve "$SERVE_URL" "$RATE" "$DURATION_S" warm-up; fi
    row_s=$((SECONDS - t0))
    if ((OVER_RATE > 0)) && has_row over; then
      bench_row over "$SERVE_URL" "$OVER_RATE" "$OVER_DURATION_S"
    fi
    stop_pid "$SERVE_PID"   # the nginx row runs without the first server's load
    SERVE_PID=""
  fi

  # The nginx row costs what the first did; skip it rather than overrun.
  NGINX_SKIPPED="" LATENESS_SKIPPED="not in OL_ROWS"
  if ! has_row nginx && ! has_row lateness; then
    NGINX_SKIPPED="not in OL_ROWS"
  elif ((SECONDS + row_s >= TIME_BUDGET_S)); then
    NGINX_SKIPPED="it would have ended after TIME_BUDGET_S=${TIME_BUDGET_S}s"
    if has_row lateness; then LATENESS_SKIPPED=$NGINX_SKIPPED; fi
  elif start_nginx; then
    note "nginx pid $NGINX_PID on $NGINX_URL"
    if has_row nginx; then bench_row nginx "$NGINX_URL" "$RATE" "$DURATION_S" warm-up
    else NGINX_SKIPPED="not in OL_ROWS"; fi
    if has_row lateness; then lateness_row "$NGINX_URL"; fi
  else
    NGINX_SKIPPED="nginx not installed or did not start"
    if has_row lateness; then LATENESS_SKIPPED=$NGINX_SKIPPED; fi
  fi
  LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
  report
}

main "$@"
