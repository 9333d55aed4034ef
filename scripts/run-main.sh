#!/usr/bin/env bash
# README command (1): install, build, and run the headline check on the default Redis
# (127.0.0.1:6379 if one answers, else a private redis-server rlcheck starts and stops).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DRLCHECK_TESTS=OFF
exec build/rlcheck redis --strategy lua -n 200 -p 50 "$@"
