#!/usr/bin/env bash
# Builds Braze and runs every test (the CPU tier; GPU tests skip themselves without a GPU).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}

"$root/tools/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
