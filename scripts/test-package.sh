#!/usr/bin/env bash
# Builds the .deb from BUILD_DIR (default build/), installs it with apt (its dependencies are
# Debian packages), checks what a user gets: the binary, a Redis check on the default Redis,
# the scenarios, the examples, the guides, a check's page offline, the man page and the
# completion; then removes it again. Needs root.
# A machine where an rlcheck package is already installed is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

if dpkg-query -W -f='${Status}' rlcheck 2>/dev/null | grep -q "install ok installed"; then
  echo "package: rlcheck is already installed here; not touching it"
  exit 0
fi
(cd "$build" && rm -f rlcheck_*.deb && cpack -G DEB >/dev/null)
deb=$(ls "$build"/rlcheck_*.deb)
trap 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq rlcheck >/dev/null 2>&1 || true' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "./$deb" >/dev/null

passed=0
failed=0
check() {  # check DESCRIPTION COMMAND...
  local description=$1
  shift
  if "$@" >/dev/null 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "package: FAILED: $description" >&2
  fi
}
check "rlcheck is installed in /usr/bin" test -x /usr/bin/rlcheck
# libcurl is loaded at run time (src/http/curl_library.hpp), so dpkg-shlibdeps cannot see it.
check "the package depends on libcurl4" bash -c "dpkg-deb -f '$deb' Depends | grep -q 'libcurl4'"
check "--version names the libraries" bash -c '/usr/bin/rlcheck --version | grep -q "hiredis .*libcurl .*libevent"'
check "a Redis check passes" /usr/bin/rlcheck redis --strategy lua -n 200 -p 50 -q
check "the shipped scenarios pass with nothing running" /usr/bin/rlcheck run /usr/share/rlcheck/scenarios -q
check "the Lua limiters are installed" test -f /usr/share/rlcheck/lua/sliding_window.lua
check "the examples are installed" test -f /usr/share/rlcheck/examples/limiter.lua
check "the guides are installed" test -f /usr/share/doc/rlcheck/docs/checks.md
check "a check's page, offline" bash -c '/usr/bin/rlcheck explain key-ttl | grep -q "What it proves"'
check "the installed example's broken version fails" bash -c \
  '/usr/bin/rlcheck redis --script /usr/share/rlcheck/examples/limiter_v1.lua -r 1 -q; [[ $? -eq 1 ]]'

for topic in "rlcheck redis" "rlcheck http" "rlcheck compare" "rlcheck serve" "rlcheck run" \
  "rlcheck hook-config" "rlcheck probe" "rlcheck explain" "retry-after-accuracy" "--requests" \
  "--identity-header" "--junit" "--summary-md" "EXIT STATUS"; do
  check "man rlcheck shows $topic" bash -c "man rlcheck 2>/dev/null | grep -qF -- '$topic'"
done
check "bash completion completes subcommands" bash -c \
  'source /usr/share/bash-completion/completions/rlcheck; COMP_WORDS=(rlcheck se); COMP_CWORD=1; _rlcheck; [[ ${COMPREPLY[*]} == serve ]]'
check "bash completion completes check ids" bash -c \
  'source /usr/share/bash-completion/completions/rlcheck; COMP_WORDS=(rlcheck explain key-); COMP_CWORD=2; _rlcheck; [[ ${COMPREPLY[*]} == key-ttl ]]'
echo "package: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
