#!/usr/bin/env bash
# Runs a command beside CPU-bound processes, as on a loaded machine:
#   scripts/with-cpu-hogs.sh [-n COUNT] COMMAND...      (COUNT busy loops, default 2)
# Each hog is a shell busy loop at normal priority; they are stopped however the command ends
# (exit, failure, Ctrl-C), and the command's exit status is this script's.
set -euo pipefail

count=2
if [[ "${1:-}" == "-n" ]]; then
  count=$2
  shift 2
fi
[[ $# -gt 0 ]] || { echo "usage: $0 [-n COUNT] COMMAND..." >&2; exit 64; }

hogs=()
# shellcheck disable=SC2317  # run by the EXIT trap
stop_hogs() {
  local pid
  for pid in "${hogs[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${hogs[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for ((i = 0; i < count; i++)); do
  # A subshell of its own: `kill PID` ends the loop, which spawns nothing.
  bash -c 'while :; do :; done' &
  hogs+=($!)
done
echo "with-cpu-hogs: $count busy loops (${hogs[*]}) beside: $*" >&2

status=0
"$@" || status=$?
exit "$status"
