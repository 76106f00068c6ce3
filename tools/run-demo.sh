#!/usr/bin/env bash
# The main job: build Braze and run the example fusions (RMS norm, softmax, GELU with bias):
# print their IR and evaluate them on random inputs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}

"$root/tools/build.sh" braze_demo
"$build/examples/braze_demo" "$@"
