#!/usr/bin/env bash
# bench/transport.sh -- rlcheck's Redis transport against redis-benchmark, in one session:
#
#   bench/transport.sh [path/to/rlcheck]
#
# Four cases, each the same EVALSHA of lua/sliding_window.lua (limit 10, window 60 s, a fresh
# member per call) from 50 connections, on a key as long as redis-benchmark's (rlcheck --key
# RL_KEY --reset: rlcheck's default key, rlcheck:<id>:sliding-window:1, is 33 bytes to
# redis-benchmark's 8, and the server hashes it on each of the script's calls; RL_KEY= empty
# keeps the default):
#   standalone   rlcheck -p 50                 vs redis-benchmark -c 50
#   pipeline     rlcheck -p 50 --pipeline 16   vs redis-benchmark -c 50 -P 16
#   tls          rlcheck over rediss:// -p 50  vs redis-benchmark --tls -c 50
#   cluster      rlcheck -p 50 --identities 48 on a 3-master cluster
#                                              vs redis-benchmark --cluster -c 50 (key {tag})
# For each case, REPS alternating pairs (rlcheck, then redis-benchmark) so that drift on a
# shared machine hits both; the table shows medians and the ratios of the medians. Client CPU
# and peak RSS come from bench/rusage.py (wait4).
#
# Every server (a plain and a TLS redis-server, three cluster masters) is private: started here
# on free loopback ports in a mktemp -d directory and stopped by a trap. About 2-3 minutes on a
# 2-vCPU machine.
#
# Tunables (environment): REPS=5 pairs per case, REQUESTS=100000 per run, CASES="standalone
# pipeline tls cluster", RL_KEY=bench:rl (not for the cluster case, which spreads 48 keys).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
readonly LUA=$REPO/lua/sliding_window.lua
readonly REPS=${REPS:-5}
readonly REQUESTS=${REQUESTS:-100000}
readonly CASES=${CASES:-standalone pipeline tls cluster}
readonly CONCURRENCY=50
same_key_args

WORK=""
PIDS=()          # every redis-server started here
PLAIN_PORT="" TLS_PORT="" CLUSTER_PORTS=() SHA=""

cleanup() {
  local rc=$? pid
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  [[ -n $WORK ]] && rm -rf "$WORK"
  exit "$rc"
}

free_port() {
  local port
  for _ in $(seq 1 50); do
    # Below the kernel's ephemeral range (32768 up), with the cluster bus port (+10000) too:
    # a client socket's local port there made a cluster node fail to bind its bus now and then.
    port=$((20000 + RANDOM % 2700))
    port_in_use "$port" || port_in_use $((port + 10000)) || { echo "$port"; return; }
  done
  die "no free port"
}

# wait_ping PORT [redis-cli TLS args...]
wait_ping() {
  local port=$1
  shift
  for _ in $(seq 1 200); do
    [[ $(redis-cli -p "$port" "$@" PING 2>/dev/null) == PONG ]] && return 0
    sleep 0.05
  done
  die "redis-server on $port did not answer"
}

make_certificates() {
  local d=$WORK/tls
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/ca.key" \
    -out "$d/ca.pem" -subj /CN=bench-ca -days 1 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/server.key" \
    -out "$d/server.csr" -subj /CN=localhost 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/ext"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
    -out "$d/server.pem" -days 1 -extfile "$d/ext" 2>/dev/null
}

start_servers() {
  local dir port i nodes=()
  PLAIN_PORT=$(free_port)
  mkdir -p "$WORK/plain"
  redis-server --bind 127.0.0.1 --port "$PLAIN_PORT" --save '' --appendonly no \
    --dir "$WORK/plain" --logfile "$WORK/plain/redis.log" &
  PIDS+=($!)
  wait_ping "$PLAIN_PORT"

  make_certificates
  TLS_PORT=$(free_port)
  mkdir -p "$WORK/tlsd"
  redis-server --bind 127.0.0.1 --port 0 --tls-port "$TLS_PORT" \
    --tls-cert-file "$WORK/tls/server.pem" --tls-key-file "$WORK/tls/server.key" \
    --tls-ca-cert-file "$WORK/tls/ca.pem" --tls-auth-clients no --save '' --appendonly no \
    --dir "$WORK/tlsd" --logfile "$WORK/tlsd/redis.log" &
  PIDS+=($!)
  wait_ping "$TLS_PORT" --tls --cacert "$WORK/tls/ca.pem"

  for i in 1 2 3; do
    port=$(free_port)
    dir=$WORK/cluster$i
    mkdir -p "$dir"
    redis-server --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
      --cluster-config-file "$dir/nodes.conf" --save '' --appendonly no --dir "$dir" \
      --logfile "$dir/redis.log" &
    PIDS+=($!)
    wait_ping "$port"
    CLUSTER_PORTS+=("$port")
    nodes+=("127.0.0.1:$port")
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-yes >/dev/null
  for _ in $(seq 1 200); do
    redis-cli -p "${CLUSTER_PORTS[0]}" CLUSTER INFO | grep -q 'cluster_state:ok' && break
    sleep 0.05
  done

  SHA=$(redis-cli -p "$PLAIN_PORT" SCRIPT LOAD "$(cat "$LUA")")
  redis-cli -p "$TLS_PORT" --tls --cacert "$WORK/tls/ca.pem" SCRIPT LOAD "$(cat "$LUA")" >/dev/null
  for port in "${CLUSTER_PORTS[@]}"; do redis-cli -p "$port" SCRIPT LOAD "$(cat "$LUA")" >/dev/null; done
}

# rlcheck_run CASE: one run; appends "wall cpu rss rps" to rl_CASE.txt
rlcheck_run() {
  local c=$1 json=$WORK/rl.json args=() m
  case $c in
    standalone) args=(--redis "redis://127.0.0.1:$PLAIN_PORT") ;;
    pipeline) args=(--redis "redis://127.0.0.1:$PLAIN_PORT" --pipeline 16) ;;
    tls) args=(--redis "rediss://127.0.0.1:$TLS_PORT" --tls-ca "$WORK/tls/ca.pem") ;;
    cluster) args=(--redis "redis://127.0.0.1:${CLUSTER_PORTS[0]}" --identities 48) ;;
  esac
  [[ $c == cluster ]] || args+=("${KEY_ARGS[@]}")
  m=$(timed_run "$json" "$RLCHECK" redis "${args[@]}" --strategy lua -n "$REQUESTS" \
    -p "$CONCURRENCY" --runs 1 --json --max-errors "$REQUESTS") || true
  [[ $(jq -r '.runs[0].errors' "$json") == 0 ]] || die "rlcheck reported errors ($c): $json"
  echo "$m $(jq '.summary.requests_per_second' "$json")" >>"$WORK/rl_$c.txt"
}

# rb_run CASE: one redis-benchmark run of the same EVALSHA; appends to rb_CASE.txt
rb_run() {
  local c=$1 csv=$WORK/rb.csv args=() key=bench:rb m
  case $c in
    standalone) args=(-p "$PLAIN_PORT") ;;
    pipeline) args=(-p "$PLAIN_PORT" -P 16) ;;
    tls) args=(-p "$TLS_PORT" --tls --cacert "$WORK/tls/ca.pem") ;;
    cluster) args=(-p "${CLUSTER_PORTS[0]}" --cluster) key='bench:{tag}' ;;
  esac
  m=$(timed_run "$csv" redis-benchmark -h 127.0.0.1 "${args[@]}" -n "$REQUESTS" \
    -c "$CONCURRENCY" -r 1000000 --csv EVALSHA "$SHA" 1 "$key" 10 60000 __rand_int__)
  echo "$m $(rb_requests_per_second "$csv")" >>"$WORK/rb_$c.txt"
}

report() {
  local c rl rb
  echo
  echo "rlcheck transport bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)"
  echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))   redis: $(redis-server --version | awk '{ print $3 }')"
  echo "EVALSHA sliding_window.lua, $REQUESTS requests, $CONCURRENCY connections, median of $REPS alternating pairs"
  printf '%-11s %12s %12s %9s %12s %12s %9s %9s %9s\n' case "rlcheck r/s" "r-b r/s" "r/s ratio" \
    "rlcheck µs" "r-b µs" "CPU ratio" "rl RSS MB" "rb RSS MB"
  hr 104
  for c in $CASES; do
    rl=$WORK/rl_$c.txt rb=$WORK/rb_$c.txt
    printf '%-11s %12.0f %12.0f %9s %12.2f %12.2f %9s %9.1f %9.1f\n' "$c" \
      "$(col 4 "$rl" | median)" "$(col 4 "$rb" | median)" \
      "$(ratio "$(col 4 "$rl" | median)" "$(col 4 "$rb" | median)")" \
      "$(calc %.3f "$(col 2 "$rl" | median) * 1e6 / $REQUESTS")" \
      "$(calc %.3f "$(col 2 "$rb" | median) * 1e6 / $REQUESTS")" \
      "$(ratio "$(col 2 "$rl" | median)" "$(col 2 "$rb" | median)")" \
      "$(calc %.1f "$(col 3 "$rl" | median) / 1024")" "$(calc %.1f "$(col 3 "$rb" | median) / 1024")"
  done
  echo "r/s: rlcheck's summary.requests_per_second / redis-benchmark's own figure; µs: client"
  echo "CPU (user+sys) per request; ratios are rlcheck / redis-benchmark of the medians."
  for c in $CASES; do
    printf '%-11s r/s per run, in order: rlcheck %s; redis-benchmark %s\n' "$c" \
      "$(col 4 "$WORK/rl_$c.txt" | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }')" \
      "$(col 4 "$WORK/rb_$c.txt" | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 }')"
  done
  echo "time: ${SECONDS}s; load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg) (on $(nproc) CPUs)"
}

main() {
  local c i
  for t in redis-server redis-cli redis-benchmark jq openssl; do
    command -v "$t" >/dev/null || die "$t is needed"
  done
  resolve_rlcheck "${1:-}"
  WORK=$(mktemp -d)
  trap cleanup EXIT INT TERM
  SECONDS=0
  LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
  start_servers
  for c in $CASES; do
    for i in $(seq 1 "$REPS"); do
      note "$c: pair $i/$REPS"
      rlcheck_run "$c"
      rb_run "$c"
    done
  done
  report
}

main "$@"
