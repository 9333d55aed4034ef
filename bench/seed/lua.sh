#!/bin/bash
# lua.sh: one request against the seed article's sliding.lua; prints allowed or denied.
# The article only describes it: "calls redis-cli --eval sliding.lua lua:u1 , 10 60000
# "req-$1-$RANDOM" and looks at the first value". redis-cli --eval sends the whole script
# (EVAL, not EVALSHA) over a fresh connection from a fresh process for every request; that
# per-request cost is what bench/run.sh compares rlcheck against.
# No dirname/head helpers: one bash and one redis-cli per request, so the harness is not
# charged for processes the article does not need. The port comes from $REDIS_PORT (the
# article uses 6391) and the host is pinned to loopback.
PORT=${REDIS_PORT:-6391}
out=$(redis-cli -h 127.0.0.1 -p "$PORT" --eval "${0%/*}/sliding.lua" lua:u1 , 10 60000 "req-$1-$RANDOM")
if [ "${out%%$'\n'*}" = 1 ]; then echo allowed; else echo denied; fi
