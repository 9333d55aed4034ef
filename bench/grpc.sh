#!/usr/bin/env bash
# bench/grpc.sh -- how fast is the gRPC client next to h2load, against the same server?
#
#   bench/grpc.sh [BUILD_DIR]
#
# BUILD_DIR (default build-rel) holds bench/rlcheck_grpc_bench. The server is the token-bucket
# test server of tests/fixtures/grpc (grpc-go behind go-grpc-middleware's rate-limit
# interceptor) with a bucket far larger than the runs, so every call is admitted; it is built
# into BUILD_DIR/grpc-servers when missing. Each row sends GRPC_CALLS unary calls of the same
# request over one HTTP/2 connection with M calls in flight: rlcheck's client (-p M, one
# worker) and h2load (-c 1 -m M, the request framed by hand), alternating GRPC_REPS times.
# Every run is measured by bench/rusage.py: wall time and CPU (user+sys) of the client
# process, every thread included. The server listens on 127.0.0.1 and is stopped at the end.
#
# Tunables (environment):
#   GRPC_CALLS=20000      calls per run
#   GRPC_REPS=3           alternating repetitions per tool
#   GRPC_INFLIGHT="1 10 50"  calls in flight per row
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly BUILD_DIR=${1:-build-rel}
readonly GRPC_CALLS=${GRPC_CALLS:-20000}
readonly GRPC_REPS=${GRPC_REPS:-3}
readonly GRPC_INFLIGHT=${GRPC_INFLIGHT:-1 10 50}
readonly BENCH="$BUILD_DIR/bench/rlcheck_grpc_bench"
[[ -x "$BENCH" ]] || { echo "grpc.sh: $BENCH missing (cmake --build $BUILD_DIR --target rlcheck_grpc_bench)" >&2; exit 1; }
command -v h2load >/dev/null || { echo "grpc.sh: h2load missing (nghttp2-client)" >&2; exit 1; }

servers="$BUILD_DIR/grpc-servers"
[[ -x "$servers/bin/token_bucket_server" ]] || "$REPO/tests/fixtures/grpc/build-servers.sh" "$servers"

work=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -z "$server_pid" ]] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$servers/bin/token_bucket_server" -port "$port" -rate 1e9 -burst 1000000000 >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q listening "$work/server.log" && break
  sleep 0.05
done

# rlcheck.fixture.SayRequest{text: "hello", seq: 1}, in gRPC's framing (uncompressed, length).
printf '\x00\x00\x00\x00\x09\x0a\x05hello\x10\x01' >"$work/say.bin"
readonly DATA='{"text": "hello", "seq": 1}'

printf '%-8s %-10s %10s %12s %14s\n' in-flight client calls/s cpu_us/call wall_s
for inflight in $GRPC_INFLIGHT; do
  for _ in $(seq "$GRPC_REPS"); do
    read -r wall cpu _ < <(python3 "$REPO/bench/rusage.py" "$work/rlcheck.out" \
      "$BENCH" "127.0.0.1:$port" "$REPO/tests/fixtures/grpc" "$GRPC_CALLS" "$inflight" 1 "$DATA")
    awk -v m="$inflight" -v w="$wall" -v c="$cpu" -v n="$GRPC_CALLS" \
      'BEGIN { printf "%-8s %-10s %10.0f %12.2f %14.3f\n", m, "rlcheck", n / w, c / n * 1e6, w }'
    read -r wall cpu _ < <(python3 "$REPO/bench/rusage.py" "$work/h2load.out" \
      h2load -n "$GRPC_CALLS" -c 1 -m "$inflight" -d "$work/say.bin" \
      -H 'content-type: application/grpc' -H 'te: trailers' \
      "http://127.0.0.1:$port/rlcheck.fixture.Echo/Say")
    grep -q "$GRPC_CALLS succeeded" "$work/h2load.out" || { cat "$work/h2load.out" >&2; exit 1; }
    awk -v m="$inflight" -v w="$wall" -v c="$cpu" -v n="$GRPC_CALLS" \
      'BEGIN { printf "%-8s %-10s %10.0f %12.2f %14.3f\n", m, "h2load", n / w, c / n * 1e6, w }'
  done
done
