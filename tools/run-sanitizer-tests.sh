#!/usr/bin/env bash
# The sanitizer job, which CI runs after tools/run-tests.sh: builds a Debug tree with
# AddressSanitizer (leak checking included) and UndefinedBehaviorSanitizer into ./build-asan
# (or $BRAZE_ASAN_BUILD_DIR) and runs the test binaries that cover the runtime: the IR, the
# evaluator, the runtime (argument binding, launch plans, extent checks), host programs (stream
# loops built, verified and run slice by slice), the plugin host
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
  binaries=(braze_ir_tests braze_eval_tests braze_runtime_tests braze_host_tests
    braze_plugin_tests braze_serde_tests)
fi

"$root/tools/install-deps.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  # Full -g: with -g1 (line tables only) LeakSanitizer's tracer crashed at exit in the cache
  # worker processes the serde tests start, every run, on the 2-core build machine.
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
# before it looks for leaks; on the CI machine it did so twice in a row for one binary. A binary
# whose tests all passed and which failed only so runs up to twice more; if the tracer crashes
# every time, the binary passes with a warning that its leak check could not run (its tests
# passed under ASan and UBSan, which stop a process at their first error). A leak report or a
# failed test still fails.
tracer_crashed_only() {
  grep -q '^Tracer caught signal' "$1" && grep -q '^\[  PASSED  \]' "$1" &&
    ! grep -q '^\[  FAILED  \]' "$1" && ! grep -q 'LeakSanitizer: detected memory leaks' "$1"
}
run() {
  local name=$1 status=0 attempt
  for attempt in 1 2 3; do
    status=0
    "$build/tests/cpp/$name" >"$logs/$name.log" 2>&1 || status=$?
    ((status != 0)) && tracer_crashed_only "$logs/$name.log" || break
    echo "$name: the leak checker's tracer crashed at exit (run $attempt of 3)"
  done
  if ((status == 0)); then
    echo "passed $name: $(grep -E '^\[  PASSED  \]' "$logs/$name.log")"
  elif tracer_crashed_only "$logs/$name.log"; then
    echo "passed $name: $(grep -E '^\[  PASSED  \]' "$logs/$name.log")" \
      "(WARNING: no leak check: LeakSanitizer's tracer crashed at exit in all 3 runs)"
  else
    cat "$logs/$name.log"
    echo "FAILED $name (exit status $status; log: $logs/$name.log)"
    return 1
  fi
}
export -f run tracer_crashed_only
export build logs
printf '%s\n' "${binaries[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run "$1"' _ {}
echo "sanitizer tests: all ${#binaries[@]} binaries passed"
