#!/usr/bin/env bash
# The sanitizer job, which CI runs after tools/run-tests.sh: builds a Debug tree with
# AddressSanitizer (leak checking included) and UndefinedBehaviorSanitizer into ./build-asan
# (or $BRAZE_ASAN_BUILD_DIR) and runs the test binaries that cover the runtime: the IR, the
# evaluator, the runtime (argument binding, launch plans, extent checks) and the plugin host
# (loading, the registry, crash isolation through the sanitized scanner), and the persistent
# kernel cache (hostile files, worker processes sharing one folder).
#
# Extra arguments replace that list of test binaries (tests/cpp/braze_<layer>_tests), e.g.
# `tools/run-sanitizer-tests.sh braze_lower_tests`; every binary passes under the sanitizers.
#
# Time on the 2-core CI machine, from nothing built and no ccache
# (`time CCACHE_DISABLE=1 tools/run-sanitizer-tests.sh`), while other builds shared it (load
# average about 4): 7 min 10 s wall (9 min 38 s user, 54 s system CPU), of which running the
# tests was about 1 min (the plugin tests 53 s: each probe starts the sanitized scanner). The
# main job cold took 26 min 28 s under heavier sharing (load about 7; 21 min 13 s CPU, about
# 11 min of wall on two idle cores), so CI stays within 30 minutes on an idle machine. Every
# test binary (all ~2150 tests, through ctest) passes under the sanitizers, but building and
# running them all takes twice as long: hence this subset.
# Each binary runs as one process rather than one per test through ctest: a sanitized process
# takes a quarter second to start, which for the ~970 tests here was 4 minutes instead of 1.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_ASAN_BUILD_DIR:-$root/build-asan}
binaries=("$@")
if ((${#binaries[@]} == 0)); then
  binaries=(braze_ir_tests braze_eval_tests braze_runtime_tests braze_plugin_tests
    braze_serde_tests)
fi

"$root/tools/install-deps.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DBRAZE_SANITIZE=address,undefined -DBRAZE_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" -- "${binaries[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logs=$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"

# Runs one test binary with its output in $logs/NAME.log, shown when it fails. LeakSanitizer's
# stop-the-world tracer now and then crashes at exit under load ("Tracer caught signal 11")
# before looking for leaks: a binary whose tests all passed and which failed only so runs once
# more.
run() {
  local name=$1 status=0
  "$build/tests/cpp/$name" >"$logs/$name.log" 2>&1 || status=$?
  if ((status != 0)) && grep -q '^Tracer caught signal' "$logs/$name.log" &&
    ! grep -q '^\[  FAILED  \]' "$logs/$name.log"; then
    echo "$name: the leak checker's tracer crashed at exit; running it again"
    status=0
    "$build/tests/cpp/$name" >"$logs/$name.log" 2>&1 || status=$?
  fi
  if ((status == 0)); then
    echo "passed $name: $(grep -E '^\[  PASSED  \]' "$logs/$name.log")"
  else
    cat "$logs/$name.log"
    echo "FAILED $name (exit status $status; log: $logs/$name.log)"
    return 1
  fi
}
export -f run
export build logs
printf '%s\n' "${binaries[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run "$1"' _ {}
echo "sanitizer tests: all ${#binaries[@]} binaries passed"
