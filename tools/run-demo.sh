#!/usr/bin/env bash
# The main job: build Braze and run the example fusions (RMS norm, softmax, GELU with bias, and
# a softmax of column-centred scores that runs as two kernels): print their IR, evaluate them on
# random inputs, and run each through FusionExecutorCache::run (kernels kept in the persistent
# kernel cache, BRAZE_CACHE_DIR). Then the Python example (examples/python/hello.py) with the
# `braze` package pip installs into the build folder's virtual environment (tools/python-env.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}

"$root/tools/build.sh" braze_demo
"$build/examples/braze_demo" "$@"

source "$root/tools/python-env.sh"
braze_python_env "$root" "$build" numpy
"$BRAZE_PYTHON" "$root/examples/python/hello.py"
