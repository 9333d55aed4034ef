#!/usr/bin/env bash
# Configures and builds rlcheck into BUILD_DIR (default build/; BUILD_TARGET: one target only).
# Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
# ccache, when installed, keeps the objects of earlier builds: a rebuild of unchanged sources,
# in this clone or another one (paths are taken relative to the clone), is a cache hit.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${launcher[@]}" "$@" >/dev/null
target=()
[[ -z "${BUILD_TARGET:-}" ]] || target=(--target "$BUILD_TARGET")
cmake --build "$build_dir" -j"$(nproc)" "${target[@]}"
