#!/usr/bin/env bash
# Configures and builds Braze into ./build (or $BRAZE_BUILD_DIR). Extra arguments are ninja
# targets; none builds everything.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}

"$root/tools/install-deps.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BRAZE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
fi
cmake --build "$build" -- "$@"
