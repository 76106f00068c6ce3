#!/usr/bin/env bash
# Configures and builds Braze into ./build (or $BRAZE_BUILD_DIR). Extra arguments are ninja
# targets; none builds everything.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}

"$root/tools/install-deps.sh"

# With -g, ccache keys each object by its build folder too; without that, the Python package's
# build (tools/python-env.sh, its own folder, the same compile lines) reuses this build's objects.
export CCACHE_NOHASHDIR=1

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BRAZE_BUILD_TYPE:-RelWithDebInfo}" \
    -DBRAZE_DEBUG_INFO="${BRAZE_DEBUG_INFO:-ON}" -DBRAZE_OPTIMIZE_TESTS="${BRAZE_OPTIMIZE_TESTS:-ON}" \
    >/dev/null
fi
cmake --build "$build" -- "$@"
