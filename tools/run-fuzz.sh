#!/usr/bin/env bash
# Fuzzes the persistent caches' readers (tests/fuzz/kernel_entry_fuzzer.cpp: kernel entries,
# runtime entries with their kernel recipes, saved fusion definitions) with libFuzzer under
# AddressSanitizer and UndefinedBehaviorSanitizer for a bounded time, starting from real cache
# entries. CI runs it after the sanitizer job.
#
#   tools/run-fuzz.sh [SECONDS]     (default 60)
#
# Needs clang and its libFuzzer runtime (installed here when missing) and the build tree of
# tools/build.sh (libbraze_core, flatc's generated header, the cache worker that writes the seed
# entries). The fuzzer is built in $BRAZE_BUILD_DIR/fuzz; its corpus and any crash land there.
# Prints libFuzzer's summary: how many inputs it tried, and the coverage reached.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}
seconds=${1:-60}

if ! command -v clang++ >/dev/null || [[ ! -f $(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null) ]]; then
  echo "braze: installing clang and its libFuzzer runtime"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    clang libclang-rt-14-dev >/dev/null
fi

"$root/tools/build.sh" braze_serde braze_serde_cache_worker
fuzz=$build/fuzz
mkdir -p "$fuzz/corpus"
# Each source compiles on its own core (-g1: line tables, all the sanitizers' reports print).
flags=(-std=c++20 -O1 -g1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -I"$root/core/include" -I"$root/serde/include" -I"$root/serde/src" -I"$build/serde/generated"
  -I"$root/tests/cpp" -I/usr/local/cuda/include -DBRAZE_VERSION_STRING='"fuzz"')
sources=("$root"/serde/src/*.cpp "$root/tests/fuzz/kernel_entry_fuzzer.cpp"
  "$root"/tests/cpp/support/{normalization_fusions,random_tensor,multi_index,tensor_values}.cpp)
rm -rf "$fuzz/objects"
mkdir -p "$fuzz/objects"
pids=()
for source in "${sources[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n; done
  clang++ "${flags[@]}" -c "$source" -o "$fuzz/objects/$(basename "$source" .cpp).o" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
clang++ "${flags[@]}" "$fuzz"/objects/*.o -L"$build/core" -lbraze_core -Wl,-rpath,"$build/core" \
  -lgtest -lpthread -o "$fuzz/kernel_entry_fuzzer"
if [[ -z $(ls -A "$fuzz/corpus") ]]; then
  seeds=$(mktemp -d)
  BRAZE_PLUGIN_PATH=${BRAZE_PLUGIN_PATH:-} "$build/tests/cpp/braze_serde_cache_worker" "$seeds" \
    --label seeds >/dev/null
  "$build/tests/cpp/braze_serde_cache_worker" --write-definitions "$seeds/definitions" >/dev/null
  cp "$seeds"/kernels/*.bzk "$seeds"/runtimes/*.bzr "$seeds"/definitions/*.bzf "$fuzz/corpus/"
  rm -rf "$seeds"
  : >"$fuzz/corpus/empty"
fi

cd "$fuzz"
"$fuzz/kernel_entry_fuzzer" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=4096 \
  -print_final_stats=1 corpus 2>"$fuzz/fuzz.log" || {
  tail -60 "$fuzz/fuzz.log"
  echo "kernel_entry_fuzzer: FAILED (log: $fuzz/fuzz.log; the input is in $fuzz)"
  exit 1
}
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov:" "$fuzz/fuzz.log" | tail -3
echo "kernel_entry_fuzzer: no crash in ${seconds} s"
