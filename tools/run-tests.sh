#!/usr/bin/env bash
# Builds Braze and runs every test (the CPU tier; GPU tests skip themselves without a GPU): the
# C++ tests, then the Python tests (tests/python) against the `braze` package as pip installs it,
# in a virtual environment in the build folder (tools/python-env.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}

"$root/tools/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

source "$root/tools/python-env.sh"
start=$SECONDS
braze_python_env "$root" "$build" pytest numpy
(cd "$root" && "$BRAZE_PYTHON" -m pytest tests/python -q)
echo "braze: Python package and tests: $((SECONDS - start)) s"
