#!/usr/bin/env bash
# The multi-GPU test tier: starts one process per GPU, as torchrun would (RANK, WORLD_SIZE,
# LOCAL_RANK, MASTER_ADDR, MASTER_PORT), each running braze_host_tests' MultiRankTest: every
# shared sharded case (tests/cpp/support/sharded_cases.h, the stream-pipelined ones included, and
# with four ranks a 2x2 mesh) on a mesh of all ranks over NCCL, each rank checking its parts of
# the outputs against the unsharded reference; then the last rank exits between two collectives
# and every other rank must raise within the communicator's timeout (30 s) instead of hanging.
#
#   tools/multigpu-test.sh NGPUS [--filter PATTERN] [--tests-only | --bench-only]
#                          [--bench-args "ARGS"] [--limit SECONDS]
#
# Ranks still running after --limit seconds (default 300) are killed, after gdb (where
# installed) writes their threads' stacks into their logs; the benchmarks get the same limit.
#
# Then, unless --tests-only, with NGPUS > 1 and a python3 that has PyTorch, the torchrun example
# (examples/python/tensor_parallel_mlp.py, on Braze's own communicator and with --borrow on the
# process group's), and the benchmarks:
# benchmarks/python/multidevice_benchmark.py under torchrun with one process per GPU (collectives,
# allgather + GEMM, GEMM + reduce-scatter, the MLP block forward and backward, each against
# PyTorch), through the Braze wheel of the bundle ($BRAZE_GPU_BUNDLE/python-wheel) installed
# into a folder of its own, or an installed `braze` when there is no wheel. Its log and JSON go
# beside the test logs (and to $OUT/multigpu), and its table is printed after the tests'.
#
# The binary comes from the build folder ($BRAZE_BUILD_DIR, default ./build), or where there is
# none or $BRAZE_GPU_BUNDLE is set, from the GPU bundle (tools/gpu-test.sh pack; default
# ./build-gpu-bundle). NCCL is found as Braze finds it (braze/driver/nccl_library.h); where PyTorch's
# nvidia-nccl wheel is installed, its site-packages folder is passed on. Each rank's log goes to
# multigpu-logs/rank<R>.log beside the binary (and $OUT/multigpu when the device tool's OUT is set); the last
# lines are a table of ranks and results. Exit status: 0 when every rank passed.
#
# With NGPUS = 1 it is a dry run of the launcher: the one process sees a world of one and the
# test skips itself.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -lt 1 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: tools/multigpu-test.sh NGPUS [--filter PATTERN]" >&2
  exit 2
fi
ranks=$1
shift
filter='MultiRankTest.*'
run_bench=1
run_tests=1
bench_args=
limit_s=300
while [[ $# -gt 0 ]]; do
  case $1 in
    --filter) filter=$2; shift 2 ;;
    --tests-only) run_bench=0; shift ;;
    --bench-only) run_tests=0; shift ;;
    --bench-args) bench_args=$2; shift 2 ;;
    --limit) limit_s=$2; shift 2 ;;
    *) echo "tools/multigpu-test.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

bundle=${BRAZE_GPU_BUNDLE:-$root/build-gpu-bundle}
build=${BRAZE_BUILD_DIR:-$root/build}
if [[ -x $build/tests/cpp/braze_host_tests && -z ${BRAZE_GPU_BUNDLE:-} ]]; then
  binary=$build/tests/cpp/braze_host_tests
elif [[ -x $bundle/bin/braze_host_tests ]]; then
  binary=$bundle/bin/braze_host_tests
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  [[ -d $bundle/plugins ]] && export BRAZE_PLUGIN_PATH=$bundle/plugins
  [[ -x $bundle/bin/braze-plugin-scanner ]] && export BRAZE_PLUGIN_SCANNER=$bundle/bin/braze-plugin-scanner
else
  echo "tools/multigpu-test.sh: no braze_host_tests in $build/tests/cpp or $bundle/bin;" \
    "run tools/build.sh or tools/gpu-test.sh pack first" >&2
  exit 1
fi
source "$root/tools/nccl-env.sh"
braze_nccl_env

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 29511)
logs=$(dirname "$binary")/multigpu-logs
rm -rf "$logs"
mkdir -p "$logs"
failed=0
if ((run_tests)); then
  echo "multigpu-test: $ranks ranks of $binary --gtest_filter=$filter, store at 127.0.0.1:$port"
  pids=()
  for ((rank = 0; rank < ranks; ++rank)); do
    RANK=$rank WORLD_SIZE=$ranks LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$binary" --gtest_filter="$filter" >"$logs/rank$rank.log" 2>&1 &
    pids+=($!)
  done
  # A hung rank must not hold the run (and its logs) past the limit: after $limit_s seconds the
  # ranks still running get their threads' stacks written into their logs (when gdb is there)
  # and are killed, with exit status 124.
  deadline=$((SECONDS + limit_s))
  while ((SECONDS < deadline)); do
    running=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && running=1; done
    ((running)) || break
    sleep 1
  done
  for ((rank = 0; rank < ranks; ++rank)); do
    kill -0 "${pids[$rank]}" 2>/dev/null || continue
    echo "multigpu-test: rank $rank still running after ${limit_s} s: killed" | tee -a "$logs/rank$rank.log"
    if command -v gdb >/dev/null; then
      timeout 60 gdb -p "${pids[$rank]}" -batch -ex 'thread apply all bt 30' >>"$logs/rank$rank.log" 2>&1 || true
    fi
    kill -9 "${pids[$rank]}" 2>/dev/null || true
  done
  failed=0
  statuses=()
  for ((rank = 0; rank < ranks; ++rank)); do
    status=0
    wait "${pids[$rank]}" || status=$?
    ((status == 137)) && status=124
    statuses+=("$status")
    ((status == 0)) || failed=1
    # A binary without the tests (an old bundle) runs none: that is no pass.
    if ((status == 0)) && grep -q '^\[==========\] 0 tests' "$logs/rank$rank.log"; then
      echo "rank $rank ran no test matching $filter: is the binary older than the tests?" >&2
      failed=1
    fi
  done
  if [[ -n ${OUT:-} ]]; then
    mkdir -p "$OUT/multigpu"
    cp "$logs"/*.log "$OUT/multigpu/"
  fi
  for ((rank = 0; rank < ranks; ++rank)); do
    if ((statuses[rank] != 0)); then
      echo "--- rank $rank (exit ${statuses[$rank]}), last lines:"
      tail -n 30 "$logs/rank$rank.log"
    fi
  done
  echo
  printf '%-6s %-6s %s\n' rank exit result
  for ((rank = 0; rank < ranks; ++rank)); do
    result=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?[,.]' "$logs/rank$rank.log" | tr '\n' ' ' || true)
    printf '%-6s %-6s %s\n' "$rank" "${statuses[$rank]}" "${result:-no gtest summary}"
  done
fi

# ---- benchmarks, one process per GPU under torchrun
if ((run_bench && ranks > 1)) && python3 -c 'import torch' 2>/dev/null; then
  site=
  wheel=$(ls "$bundle"/python-wheel/braze-*.whl 2>/dev/null | head -1 || true)
  if [[ -n $wheel ]]; then
    site=$logs/python-site
    rm -rf "$site"
    python3 -m pip install --quiet --no-deps --no-index --target "$site" "$wheel"
  elif ! python3 -c 'import braze' 2>/dev/null; then
    echo "multigpu-test: no Braze wheel in $bundle/python-wheel and no installed braze;" \
      "benchmarks skipped" >&2
    exit $failed
  fi
  # The torchrun example, on Braze's own communicator and on the process group's (borrowed).
  for borrow in "" --borrow; do
    echo
    echo "multigpu-test: examples/python/tensor_parallel_mlp.py --tokens 1024 $borrow on $ranks GPUs"
    # shellcheck disable=SC2086
    if ! (cd "$root" && timeout -k 10 300 env -u BRAZE_PLUGIN_PATH -u BRAZE_PLUGIN_SCANNER \
      LD_LIBRARY_PATH="${LD_LIBRARY_PATH//$bundle\/lib/}" \
      PYTHONPATH="${site}${PYTHONPATH:+:$PYTHONPATH}" \
      torchrun --nproc-per-node "$ranks" examples/python/tensor_parallel_mlp.py --tokens 1024 \
      $borrow) >"$logs/example$borrow.log" 2>&1; then
      tail -n 30 "$logs/example$borrow.log"
      echo "multigpu-test: the example failed${borrow:+ with $borrow}; see $logs/example$borrow.log" >&2
      failed=1
    else
      grep -E '^rank [0-9]+ of' "$logs/example$borrow.log" || true
    fi
  done
  echo
  echo "multigpu-test: benchmarks on $ranks GPUs (log: $logs/benchmark.log)"
  bench_status=0
  # The wheel carries its own core and plugins: the bundle's may not leak in.
  # shellcheck disable=SC2086
  (cd "$root" && timeout -k 10 "$limit_s" env -u BRAZE_PLUGIN_PATH -u BRAZE_PLUGIN_SCANNER \
    LD_LIBRARY_PATH="${LD_LIBRARY_PATH//$bundle\/lib/}" \
    PYTHONPATH="${site}${PYTHONPATH:+:$PYTHONPATH}" \
    torchrun --nproc-per-node "$ranks" benchmarks/python/multidevice_benchmark.py \
    --json "$logs/benchmark.json" $bench_args) >"$logs/benchmark.log" 2>&1 || bench_status=$?
  [[ -n ${OUT:-} ]] && cp "$logs"/benchmark.* "$OUT/multigpu/" 2>/dev/null
  grep -v -E '^[WE][0-9]{4} |FutureWarning|enable_symm_mem_for_group' "$logs/benchmark.log" | tail -n 60
  if ((bench_status != 0)); then
    echo "multigpu-test: the benchmarks failed (exit $bench_status); see $logs/benchmark.log" >&2
    failed=1
  fi
fi
exit $failed
