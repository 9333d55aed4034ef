#!/usr/bin/env bash
# bench/targets.sh -- the figures of the 0.3 performance and memory targets, in one session:
#
#   bench/targets.sh [path/to/rlcheck]      # default: build/rlcheck, built with cmake if missing
#
#  1. `--pipeline 16` against `redis-benchmark -P 16` (bench/transport.sh, CASES=pipeline);
#  2. `rlcheck http` against `wrk -t1 -c50` (and hey, and rlcheck's curl client) on nginx's
#     static 200 (bench/http.sh, HTTP_SERVERS=nginx NGINX_EXTRA=0);
#  3. the open model's lateness at 20 000, 40 000 and 60 000/s, uniform, and 40 000/s Poisson,
#     against the same nginx (bench/open_model.sh, OL_ROWS=lateness);
#  4. peak RSS at SIZES requests, bytes per request, and an hour at 40 000/s projected
#     (bench/memory.sh, AUDIT_SIZES empty).
# Each part prints its own table and the load average before and after; this script adds the
# load average between parts. About 8 minutes on a 2-vCPU machine with the default SIZES.
#
# Tunables (environment): PIPELINE_REPS=5, HTTP_REPS=5, LATENESS_REPS=3, LATENESS_DURATION_S=5,
# SIZES="1000000 5000000 10000000 20000000", PARTS="pipeline http lateness memory".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly here
readonly PARTS=${PARTS:-pipeline http lateness memory}
bin=${1:-}

load() { echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC') load average: $(cut -d' ' -f1-3 /proc/loadavg) (on $(nproc) CPUs)"; }
part() { [[ " $PARTS " == *" $1 "* ]]; }

load
if part pipeline; then
  CASES=pipeline REPS=${PIPELINE_REPS:-5} "$here/transport.sh" "$bin"
  load
fi
if part http; then
  HTTP_SERVERS=nginx NGINX_EXTRA=0 HTTP_REPS=${HTTP_REPS:-5} "$here/http.sh" "$bin"
  load
fi
if part lateness; then
  OL_ROWS=lateness LATENESS_REPS=${LATENESS_REPS:-3} LATENESS_DURATION_S=${LATENESS_DURATION_S:-5} \
    "$here/open_model.sh" "$bin"
  load
fi
if part memory; then
  SIZES=${SIZES:-1000000 5000000 10000000 20000000} AUDIT_SIZES='' "$here/memory.sh" "$bin"
  load
fi
