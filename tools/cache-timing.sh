#!/usr/bin/env bash
# Times the persistent cache on a machine with a GPU, from a `tools/gpu-test.sh pack` bundle:
# whole processes from a fresh cache folder (cold) and again on the folder they filled (warm),
# three times each, then the cache that pack built ahead of time without a GPU.
#
#   tools/cache-timing.sh [BUNDLE]     (default ./build-gpu-bundle)
#
# Every run gets a fresh CUDA_CACHE_PATH: NVRTC 12.9 and later keep their own cache there, which
# would serve the "cold" runs. Prints one line per process and phase: wall milliseconds and the
# process's own counts (NVRTC calls, scheduler calls, kernels from the store and from recipes).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=$(cd "${1:-$root/build-gpu-bundle}" && pwd)
bin=$bundle/bin
export LD_LIBRARY_PATH=$bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export BRAZE_PLUGIN_PATH=$bundle/plugins BRAZE_PLUGIN_SCANNER=$bin/braze-plugin-scanner
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU"

milliseconds() { echo $((($(date +%s%N) - $1) / 1000000)); }

for i in 1 2 3; do
  dir=$(mktemp -d)
  export CUDA_CACHE_PATH=$dir/nvrtc
  for phase in cold warm; do
    start=$(date +%s%N)
    "$bin/braze_normalization_benchmark" --cache_dir="$dir/suite" --compile_only >/dev/null 2>&1
    echo "suite $phase $(milliseconds "$start") ms"
  done
  for phase in cold warm; do
    start=$(date +%s%N)
    line=$("$bin/braze_serde_cache_worker" "$dir/worker" --label "$phase" --no-check 2>&1 |
      grep nvrtc_calls || true)
    echo "worker $phase $(milliseconds "$start") ms $line"
  done
  for phase in cold warm; do
    start=$(date +%s%N)
    line=$(BRAZE_CACHE_DIR=$dir/demo "$bin/braze_demo" 2>&1 | grep -E '^NVRTC compiles' || true)
    echo "demo $phase $(milliseconds "$start") ms $line"
  done
  rm -rf "$dir"
done
if [[ -d $bundle/aot/cache ]]; then
  for i in 1 2 3; do
    dir=$(mktemp -d)
    cp -r "$bundle/aot/cache" "$dir/cache"
    start=$(date +%s%N)
    line=$(CUDA_CACHE_PATH=$dir/nvrtc "$bin/braze_serde_cache_worker" "$dir/cache" --label aot 2>&1 |
      grep nvrtc_calls || true)
    echo "ahead-of-time $(milliseconds "$start") ms $line"
    rm -rf "$dir"
  done
fi
