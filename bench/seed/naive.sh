#!/bin/bash
# naive.sh: GET, and INCR if under the limit (not atomic) -- the seed article's naive limiter.
# Differences from the article: the port comes from $REDIS_PORT (the article hard-codes 6391),
# and the host is pinned to loopback so it can only ever talk to bench/run.sh's own server.
PORT=${REDIS_PORT:-6391}
cli() { redis-cli -h 127.0.0.1 -p "$PORT" "$@"; }
cur=$(cli GET naive:u1); cur=${cur:-0}
if [ "$cur" -lt 10 ]; then
  n=$(cli INCR naive:u1)
  [ "$n" = 1 ] && cli EXPIRE naive:u1 60 >/dev/null
  echo allowed
else
  echo denied
fi
