#!/usr/bin/env bash
# Writes the rlcheck(1) man page to stdout from the binary's own help, so the page lists every
# command and option the binary has. Usage: make-man.sh path/to/rlcheck
set -euo pipefail
rlcheck=$1

# Help text as a preformatted block; backslashes and leading dots escaped for troff.
block() {
  printf '.nf\n'
  sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"
  printf '.fi\n'
}

version=$("$rlcheck" --version | head -n 1 | awk '{print $2}')
cat <<TROFF
.TH RLCHECK 1 "" "rlcheck $version" "User Commands"
.SH NAME
rlcheck \- load-test and verify rate limiters
.SH SYNOPSIS
.B rlcheck
.I command
[\fIoptions\fR]
.SH DESCRIPTION
rlcheck fires N requests, P at a time, at a rate limiter built on Redis (a built-in strategy or
your own Lua script) or at an HTTP endpoint, tallies allowed, denied and errored results over
repeated runs, checks the retry hints, and exits nonzero when the limiter broke its contract.
.SH COMMANDS
TROFF
"$rlcheck" --help | block
for command in redis http compare probe serve run hook-config explain; do
  printf '.SS rlcheck %s\n' "$command"
  "$rlcheck" "$command" --help | block
done
printf '.SH CHECKS\n'
printf 'Each check is pass, fail or skip in every report; a failing line ends with the command that\n'
printf 'explains it. \\fBrlcheck explain\\fR \\fICHECK_ID\\fR prints its page: what it proves, the evidence\n'
printf 'behind a fail, common causes and fixes, and the flags that change it.\n'
"$rlcheck" explain | block
cat <<'TROFF'
.SH EXIT STATUS
.TP
.B 0
every check passed
.TP
.B 1
a check failed
.TP
.B 2
with \-\-hook: a check failed or the test could not run (the reason is on stderr)
.TP
.B 3
could not test: target unreachable, errors above \-\-max\-errors
.TP
.B 64
usage error: one line naming the flag
.TP
.B 130
interrupted: partial results are still reported
.SH ENVIRONMENT
.TP
.B REDIS_URL
the Redis to use when \-\-redis is not given
.TP
.B NO_COLOR
no colour with \-\-color auto
.SH FILES
.TP
.I /usr/share/rlcheck/lua/
the Lua limiters, as compiled into the binary
.TP
.I /usr/share/rlcheck/scenarios/
the scenarios of the seed experiments, for rlcheck run
TROFF
