# shellcheck shell=bash
# bench/lib.sh -- helpers shared by bench/run.sh, bench/http.sh and bench/open_model.sh;
# sourced, not run.
#
# Expects the caller to have set REPO (the repository root) and, before start_redis or
# timed_run, WORK (its mktemp -d directory). Sets RLCHECK (resolve_rlcheck) and REDIS_PORT,
# REDIS_PID (start_redis).

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "# $*" >&2; }

# ---------------------------------------------------------------------------------------------
# setup and teardown

# The binary under test: first argument, else build/rlcheck, built here if it is missing.
resolve_rlcheck() {
  local bin=${1:-$REPO/build/rlcheck}
  if [[ ! -x $bin && -z ${1:-} ]]; then
    note "building $bin (Release)"
    cmake -S "$REPO" -B "$REPO/build" -DCMAKE_BUILD_TYPE=Release -DRLCHECK_TESTS=OFF >/dev/null
    cmake --build "$REPO/build" -j"$(nproc)" >/dev/null
  fi
  [[ -x $bin ]] || die "rlcheck binary not found: $bin"
  # shellcheck disable=SC2034  # RLCHECK is the result, read by the calling script
  RLCHECK=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
}

# make_work: WORK, a fresh mktemp -d directory, and a trap that stops REDIS_PID (once
# start_redis has set it) and removes WORK on any exit, Ctrl-C included.
make_work() {
  WORK=$(mktemp -d)
  REDIS_PID=""
  trap cleanup_work EXIT INT TERM
}
cleanup_work() {
  local rc=$?
  stop_pid "$REDIS_PID"
  rm -rf "$WORK"
  exit "$rc"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# stop_pid PID: SIGTERM, up to 5 s for a clean exit, then SIGKILL.
stop_pid() {
  local pid=$1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}

# start_redis DIR [REDIS-SERVER ARGS...]: a throw-away redis-server on a random free loopback
# port, with DIR as its working directory and DIR/redis.log as its log; any further arguments
# go to redis-server. Sets REDIS_PORT and REDIS_PID. Persistence is off so the disk never
# enters the measurement. We check INFO's process_id so that we never mistake some other
# server that grabbed the port for ours.
start_redis() {
  local dir=$1 pid_seen
  shift
  mkdir -p "$dir"
  for _ in $(seq 1 20); do   # 20 random ports before giving up
    REDIS_PORT=$((20000 + RANDOM % 40000))
    port_in_use "$REDIS_PORT" && continue
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" "$@" --save '' --appendonly no \
      --dir "$dir" --logfile "$dir/redis.log" --daemonize no &
    REDIS_PID=$!
    for _ in $(seq 1 100); do
      kill -0 "$REDIS_PID" 2>/dev/null || break
      pid_seen=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" INFO server 2>/dev/null |
        tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }') || true   # not up yet
      [[ $pid_seen == "$REDIS_PID" ]] && return 0
      sleep 0.05
    done
    stop_pid "$REDIS_PID"
    REDIS_PID=""
  done
  die "could not start redis-server on a free port (see $dir/redis.log)"
}

# same_key_args: KEY_ARGS, rlcheck's options for a key as long as redis-benchmark's bench:rb,
# so that the two send the same EVALSHA: --key RL_KEY --reset (RL_KEY, default bench:rl; set
# empty, none: rlcheck's default key, rlcheck:<id>:sliding-window:1, 33 bytes to 8).
same_key_args() {
  KEY_ARGS=()
  local key=${RL_KEY-bench:rl}
  # shellcheck disable=SC2034  # KEY_ARGS is the result, read by the calling script
  [[ -z $key ]] || KEY_ARGS=(--key "$key" --reset)
}

# ---------------------------------------------------------------------------------------------
# measurement

# rb_requests_per_second CSV: the requests a second in redis-benchmark's --csv output (in
# cluster mode it prints the masters first: the figure follows the header).
rb_requests_per_second() { awk -F'"' '/^"test"/ { getline; print $4; exit }' "$1"; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now_ns() { date +%s%N; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }   # calc FORMAT EXPR
col() { awk -v c="$1" '{ print $c }' "$2"; }     # column c of a measurement file
ratio() { calc %.2f "$1 / $2"; }

# timed_run OUT COMMAND...: run COMMAND once with its stdout in OUT (bench/rusage.py, under
# /usr/bin/time); print "wall_s cpu_s maxrss_kb" and return COMMAND's exit status. CPU is
# user+sys of the client process and everything it waited for (for the seed harness: all the
# redis-cli's), from wait4 to the microsecond (/usr/bin/time prints hundredths of a second).
timed_run() {
  local out=$1
  shift
  python3 "$(dirname "${BASH_SOURCE[0]}")/rusage.py" "$out" "$@"
}

# ---------------------------------------------------------------------------------------------
# report

hr() { printf '%.0s-' $(seq 1 "$1"); echo; }   # hr WIDTH: a rule of WIDTH dashes
