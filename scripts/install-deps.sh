#!/usr/bin/env bash
# Installs what rlcheck needs to build, test and run, from Debian bookworm's packages.
# Idempotent: asks apt only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git ccache
  libhiredis-dev libevent-dev libcurl4-openssl-dev libhttp-parser-dev libcli11-dev libfmt-dev
  nlohmann-json3-dev
  # The gRPC target: gRPC's C++ library, protobuf and its .proto parser (libprotoc).
  libgrpc++-dev libprotobuf-dev libprotoc-dev protobuf-compiler protobuf-compiler-grpc
  doctest-dev libssl-dev openssl
  redis-server redis-tools libxml2-utils dpkg-dev man-db
  # The docs test: examples in README.md and docs/ pipe JSON reports through jq.
  jq
  # The --html screenshot test: a headless browser, a font for its text, a PNG's colours.
  chromium fonts-dejavu-core imagemagick
  # The sanitizer build and the libFuzzer targets (scripts/fuzz.sh): clang 16 and its runtimes.
  clang-16 libclang-rt-16-dev
  # The limiters teams run, started by the integration tests on loopback (real_*_test.cpp):
  # nginx limit_req, HAProxy stick tables, Flask-Limiter and the limits library (its Lua
  # scripts too), with the Redis client they use for Redis storage; rack-attack (Allow2Ban)
  # served by WEBrick; Symfony's RateLimiter (below).
  nginx-light haproxy python3-flask python3-flask-limiter python3-limits python3-redis
  ruby-rack-attack ruby-webrick
  # Symfony's RateLimiter behind PHP's built-in server, its state in a filesystem cache.
  php-cli php-symfony-rate-limiter php-symfony-cache php-symfony-lock
  # --metrics-listen's tests: a real Prometheus scrapes rlcheck, promtool checks the text.
  prometheus
  # The gRPC test servers (tests/fixtures/grpc), built offline with Go from Debian's packages:
  # grpc-go, go-grpc-middleware's rate-limit interceptor, x/time/rate's token bucket, redigo,
  # protoc-gen-go; h2load for bench/grpc.
  golang-go golang-google-grpc-dev golang-github-grpc-ecosystem-go-grpc-middleware-dev
  golang-golang-x-time-dev golang-goprotobuf-dev golang-google-protobuf-dev
  golang-google-genproto-dev golang-github-gomodule-redigo-dev nghttp2-client
  # express-slow-down (npm, below) runs on node.
  nodejs
)
# Debian's npm, unless the nodejs installed brings its own (NodeSource's does).
command -v npm >/dev/null 2>&1 || packages+=(npm)
packages+=("$@")

# express and express-slow-down exist only on npm: installed as package-lock.json pins them,
# into the fixture's node_modules (ignored by git), when missing or older than the lock.
install_npm_fixtures() {
  local fixture
  fixture="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/fixtures/express_slow_down"
  local installed="$fixture/node_modules/.package-lock.json"
  if [[ ! -f "$installed" || "$fixture/package-lock.json" -nt "$installed" ]]; then
    echo "installing: express-slow-down's test app (npm ci in $fixture)" >&2
    npm ci --prefix "$fixture" --no-audit --no-fund --loglevel=error >/dev/null
  fi
}

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  install_npm_fixtures
  exit 0
fi

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
echo "installing: ${missing[*]}" >&2

# Installing a server (nginx, haproxy, redis) tries to start its service, which fails in a
# container without an init system and fails the install. A policy-rc.d that exits 101 tells
# invoke-rc.d not to start any: put one in place for the install when there is none, and take
# away only the one this script put there (a policy the machine already had stays as it was).
policy=/usr/sbin/policy-rc.d
if [[ ! -e "$policy" && ! -L "$policy" ]]; then
  "${sudo[@]}" sh -c "printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy"
  trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi

"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
install_npm_fixtures
