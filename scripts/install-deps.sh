#!/usr/bin/env bash
# Installs what rlcheck needs to build, test and run, from Debian bookworm's packages.
# Idempotent: asks apt only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git ccache
  libhiredis-dev libevent-dev libcurl4-openssl-dev libhttp-parser-dev libcli11-dev libfmt-dev
  nlohmann-json3-dev
  doctest-dev libssl-dev openssl
  redis-server redis-tools libxml2-utils dpkg-dev man-db
  # The --html screenshot test: a headless browser, a font for its text, a PNG's colours.
  chromium fonts-dejavu-core imagemagick
  # The sanitizer build and the libFuzzer targets (scripts/fuzz.sh): clang 16 and its runtimes.
  clang-16 libclang-rt-16-dev
)
packages+=("$@")

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
echo "installing: ${missing[*]}" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
