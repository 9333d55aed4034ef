#!/usr/bin/env bash
# bench/memory.sh -- what rlcheck keeps per request, and what its audits cost, in one session:
#
#   bench/memory.sh [path/to/rlcheck] [path/to/rlcheck_audit_bench]
#
# Peak RSS (bench/rusage.py) of `rlcheck redis --strategy lua --runs 1 -n N` against a
# private redis-server on loopback (-p 16 --pipeline 32: the fastest way to N requests here),
# for N in SIZES; bytes per request come from the slope of RSS between the smallest and the
# largest N. Then the audit bench (every check over synthetic runs of AUDIT_SIZES records) for
# its CPU time. At 10 million requests this takes several minutes on a 2-vCPU machine.
#
# The slope then projects the peak RSS of PROJECT_REQUESTS (an hour at 40 000 requests/s).
#
# Tunables (environment): SIZES="1000000 3000000 10000000", AUDIT_SIZES="1000000 10000000"
# (empty: no audit bench), PROJECT_REQUESTS=144000000, AUDIT=auto (rlcheck's --audit: batch
# keeps every record, stream keeps none; auto streams runs over 10 M requests).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
readonly SIZES=${SIZES:-1000000 3000000 10000000}
readonly AUDIT_SIZES=${AUDIT_SIZES-1000000 10000000}
readonly PROJECT_REQUESTS=${PROJECT_REQUESTS:-144000000}
readonly AUDIT=${AUDIT:-auto}

make_work

resolve_rlcheck "${1:-}"
AUDIT_BENCH=${2:-$(dirname "$RLCHECK")/bench/rlcheck_audit_bench}
start_redis "$WORK/redis"

SECONDS=0
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "rlcheck memory bench  $(date -u '+%Y-%m-%d %H:%M UTC')  nproc $(nproc)"
echo "rlcheck: $RLCHECK ($("$RLCHECK" --version | head -n1))"
echo "rlcheck redis --strategy lua --runs 1 -n N -p 16 --pipeline 32 --audit $AUDIT --quiet, one run per N"
printf '%-12s %10s %10s %12s %12s\n' requests wall_s cpu_s peak_rss_mb rss_b_per_req
hr 61
first_n="" first_kb="" last_n="" last_kb=""
for n in $SIZES; do
  redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
  read -r wall cpu kb < <(timed_run "$WORK/out.txt" "$RLCHECK" redis \
    --redis "redis://127.0.0.1:$REDIS_PORT" --strategy lua --runs 1 -n "$n" -p 16 \
    --pipeline 32 --audit "$AUDIT" --quiet || true)
  printf '%-12s %10.1f %10.1f %12.1f %12.1f\n' "$n" "$wall" "$cpu" "$(calc %.1f "$kb / 1024")" \
    "$(calc %.1f "$kb * 1024 / $n")"
  [[ -z $first_n ]] && first_n=$n first_kb=$kb
  last_n=$n last_kb=$kb
done
if [[ $last_n != "$first_n" ]]; then
  echo "bytes per request (RSS slope $first_n..$last_n):" \
    "$(calc %.1f "($last_kb - $first_kb) * 1024 / ($last_n - $first_n)")"
  echo "projected peak RSS at $PROJECT_REQUESTS requests (the same slope from $first_n):" \
    "$(calc %.0f "($first_kb + ($last_kb - $first_kb) * ($PROJECT_REQUESTS - $first_n) / ($last_n - $first_n)) / 1024") MB"
fi
echo "time: ${SECONDS}s; load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg) (on $(nproc) CPUs)"

if [[ -x $AUDIT_BENCH ]]; then
  echo
  for n in $AUDIT_SIZES; do
    read -r wall cpu kb < <(timed_run "$WORK/audit.txt" "$AUDIT_BENCH" "$n")
    cat "$WORK/audit.txt"
    printf 'audit bench, %s records: %.1f s CPU in all, peak RSS %.1f MB\n' "$n" "$cpu" \
      "$(calc %.1f "$kb / 1024")"
  done
else
  note "no audit bench at $AUDIT_BENCH: audit CPU not measured"
fi
