#!/usr/bin/env bash
# Runs Braze's tests and benchmarks on a machine with a GPU.
#
# The GPU machine may lack build dependencies (dlpack, flatbuffers), so the usual flow is:
#
#   here (build machine):  tools/gpu-test.sh pack
#       builds the test binaries and benchmarks (in $BRAZE_BUILD_DIR, default ./build) and
#       copies them, stripped, with libbraze_core, the libraries they need that a CUDA machine
#       may not have (Google Benchmark) and the dlpack header, into $BRAZE_GPU_BUNDLE
#       (default ./build-gpu-bundle, about 50 MiB: small enough to carry to the GPU machine
#       with the source tree). Test binaries with no GPU test (their folder never skips) are
#       left out: CI runs them.
#   there (GPU machine):   tools/gpu-test.sh [run]
#       runs every test binary of the bundle and the benchmarks, then prints a summary table:
#       tests passed / failed / skipped per binary, each benchmark's bandwidth and its
#       fraction of the device-to-device copy measured in the same run, and the host-latency
#       benchmark's host time per call with Braze's overhead over launching the same kernels
#       directly (per call, and per kernel for a fusion of several). When python3 has
#       PyTorch, the benchmarks also run benchmarks/python/normalization_side_by_side.py
#       (Braze's normalization benchmark next to PyTorch eager and torch.compile), whose table
#       is appended to the summary.
#
# `run --build` (or `run` without a bundle) uses the build folder instead, building what is out
# of date first: with the bundle's dlpack header, or PyTorch's, when the machine has none.
#
# Options (after the mode):
#   --build                         build here and run from the build folder, not the bundle
#   --tests-only / --bench-only     run one half
#   --filter PATTERN                passed to every test binary as --gtest_filter
#   --jobs N                        test binaries run at once (default half the cores, <= 8)
#   --benchmarks a,b                only these benchmarks (braze_<name>_benchmark; normalization
#                                   is the side-by-side run), without the first-result timing
# Environment: BRAZE_BUILD_DIR, BRAZE_GPU_BUNDLE, BRAZE_DUMP (passed on), and
# BRAZE_SIDE_BY_SIDE_ARGS (more arguments for the side-by-side script, e.g. "--budget-s 200").
# Logs and JSON results go to results/ beside the binaries' folder; when OUT is set (the device
# tool's output folder), they are also packed into $OUT/gpu-test-results.tar.gz, with the table
# in $OUT/summary.txt.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BRAZE_BUILD_DIR:-$root/build}
bundle=${BRAZE_GPU_BUNDLE:-$root/build-gpu-bundle}

invocation="tools/gpu-test.sh${*:+ $*}"  # as the results record it
mode=run
if [[ $# -gt 0 && ( $1 == pack || $1 == run ) ]]; then
  mode=$1
  shift
fi
run_tests=1
run_bench=1
use_build=0
filter=
benchmarks=
jobs=$(( $(nproc) / 2 ))
((jobs >= 1)) || jobs=1
((jobs <= 8)) || jobs=8
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) use_build=1 ;;
    --tests-only) run_bench=0 ;;
    --bench-only) run_tests=0 ;;
    --filter) filter=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --benchmarks) benchmarks=,$2,; shift ;;
    *) echo "gpu-test.sh: unknown argument '$1'; see the header of $0" >&2; exit 2 ;;
  esac
  shift
done

log() { echo "gpu-test: $*" >&2; }

# ---- building

# Writes a minimal dlpack CMake package for the header $2 into folder $1.
write_dlpack_package() {
  local folder=$1 header=$2
  mkdir -p "$folder/include/dlpack" "$folder/cmake/dlpack"
  cp "$header" "$folder/include/dlpack/dlpack.h"
  cat >"$folder/cmake/dlpack/dlpackConfig.cmake" <<'EOF'
# Minimal dlpack package: one header, carried or found beside another framework.
if(NOT TARGET dlpack::dlpack)
  add_library(dlpack::dlpack INTERFACE IMPORTED)
  set_target_properties(dlpack::dlpack PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../include")
endif()
EOF
}

configure_and_build() {
  local extra=()
  # A machine without dlpack's package (the GPU machine) builds with the header carried in the
  # bundle, or else with the copy PyTorch ships.
  if ! [[ -f /usr/include/dlpack/dlpack.h || -f /usr/local/include/dlpack/dlpack.h ]]; then
    if [[ -f $bundle/cmake/dlpack/dlpackConfig.cmake ]]; then
      extra+=("-Ddlpack_DIR=$bundle/cmake/dlpack")
    else
      local header
      header=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "dlpack.h"))' 2>/dev/null || true)
      if [[ -n $header && -f $header ]]; then
        log "using PyTorch's dlpack header $header"
        write_dlpack_package "$build/dlpack-package" "$header"
        extra+=("-Ddlpack_DIR=$build/dlpack-package/cmake/dlpack")
      fi
    fi
  fi
  if [[ ! -f $build/build.ninja ]]; then
    log "configuring $build"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BRAZE_BUILD_TYPE:-RelWithDebInfo}" \
      -DBRAZE_BUILD_EXAMPLES=OFF "${extra[@]}" >/dev/null
  fi
  local targets
  # Every test binary, benchmark and tuning sweep the build defines.
  targets=$(ninja -C "$build" -t targets all 2>/dev/null |
    sed -n 's/^\(braze_[a-z_]*_\(tests\|benchmark\|sweep\)\): .*/\1/p' | sort -u)
  log "building: $(echo $targets)"
  # Keep going past a broken target: the other binaries are still worth running.
  # shellcheck disable=SC2086
  if ! ninja -C "$build" -k 0 -j "${BRAZE_BUILD_JOBS:-$(nproc)}" $targets >"$build/gpu-test-build.log" 2>&1; then
    log "some targets failed to build (see $build/gpu-test-build.log):"
    grep -E '^FAILED: ' "$build/gpu-test-build.log" | sed 's/^/gpu-test:   /' >&2 || true
    grep -E 'error' "$build/gpu-test-build.log" | head -10 >&2 || true
    build_failed=1
  fi
}
build_failed=0

# ---- pack (on the build machine)

pack() {
  configure_and_build
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/lib"
  local binary
  # Sweeps (braze_*_sweep) travel too but are run by hand: they time many variants per case.
  for binary in "$build"/tests/cpp/braze_*_tests "$build"/benchmarks/braze_*_benchmark \
    "$build"/benchmarks/braze_*_sweep; do
    [[ -x $binary && -f $binary ]] || continue
    # The plugin host's tests use fixture plugins that exist only in the build tree (CI runs them).
    [[ $(basename "$binary") == braze_plugin_tests ]] && continue
    # Binaries without a GPU test stay here (CI runs them): every GPU test skips itself without
    # a device (GTEST_SKIP), so a test folder that never skips has none. That keeps the bundle
    # small enough to carry with the source tree.
    local name=$(basename "$binary") folder
    if [[ $name == braze_*_tests ]]; then
      folder=$root/tests/cpp/${name#braze_}
      folder=${folder%_tests}
      if [[ -d $folder ]] && ! grep -rqs GTEST_SKIP "$folder"; then
        log "leaving out $name (no GPU test)"
        continue
      fi
    fi
    strip --strip-debug -o "$bundle/bin/$(basename "$binary")" "$binary"
  done
  # Processes the tests start (the kernel cache's worker), found beside the test binary, and
  # the main job (timed cold and warm).
  for binary in "$build"/tests/cpp/braze_*_worker "$build"/examples/braze_demo; do
    [[ -x $binary && -f $binary ]] || continue
    strip --strip-debug -o "$bundle/bin/$(basename "$binary")" "$binary"
  done
  # Scheduler plugins with their manifests, unstripped (the manifest holds the library's
  # sha256); also in lib/ for the tests that link a scheduler directly.
  mkdir -p "$bundle/plugins"
  local plugin
  for plugin in "$build"/plugins/*/lib*.so; do
    [[ -f $plugin ]] || continue
    cp "$plugin" "${plugin%.so}.braze-plugin.json" "$bundle/plugins/"
    cp "$plugin" "$bundle/lib/"
  done
  # The registry probes plugins with the scanner before loading them (no scanner: refused).
  if [[ -x $build/tools/braze/braze-plugin-scanner ]]; then
    strip --strip-debug -o "$bundle/bin/braze-plugin-scanner" "$build/tools/braze/braze-plugin-scanner"
  fi
  # The side-by-side benchmark against PyTorch (run with --bench-only when PyTorch is there).
  mkdir -p "$bundle/python"
  cp "$root"/benchmarks/python/*.py "$bundle/python/" 2>/dev/null || true
  local core
  core=$(readlink -f "$build/core/libbraze_core.so")
  strip --strip-debug -o "$bundle/lib/$(basename "$core")" "$core"
  ln -sf "$(basename "$core")" "$bundle/lib/libbraze_core.so.0"
  local serde
  if [[ -f $build/serde/libbraze_serde.so ]]; then
    serde=$(readlink -f "$build/serde/libbraze_serde.so")
    strip --strip-debug -o "$bundle/lib/$(basename "$serde")" "$serde"
    ln -sf "$(basename "$serde")" "$bundle/lib/libbraze_serde.so.0"
  fi
  # Libraries the binaries need that are neither system nor CUDA libraries (Google Benchmark's
  # Debian build has its own soname).
  local library
  for binary in "$bundle"/bin/*; do
    LD_LIBRARY_PATH=$bundle/lib ldd "$binary" | awk '/=> \// {print $3}' |
      grep -E 'libbenchmark' || true
  done | sort -u | while read -r library; do
    cp -L "$library" "$bundle/lib/"
  done
  # The dlpack header and a minimal package, for building on a machine without them.
  if [[ -f /usr/include/dlpack/dlpack.h ]]; then
    write_dlpack_package "$bundle" /usr/include/dlpack/dlpack.h
  fi
  # The braze command (the serde tests run `braze compile`), and a cache built ahead of time
  # here, without a GPU: the cache worker's fusions saved as definitions and compiled for
  # sm_90, which the GPU machine then runs (aheadOfTime below).
  if [[ -x $build/tools/braze/braze ]]; then
    strip --strip-debug -o "$bundle/bin/braze" "$build/tools/braze/braze"
    if [[ -x $build/tests/cpp/braze_serde_cache_worker ]]; then
      local definition
      "$build/tests/cpp/braze_serde_cache_worker" --write-definitions "$bundle/aot/definitions" >/dev/null
      for definition in "$bundle"/aot/definitions/*.bzf; do
        "$build/tools/braze/braze" compile "$definition" --arch sm_90 --dir "$bundle/aot/cache" \
          --signatures "${definition%.bzf}.sig" >"$bundle/aot/compile.log" 2>&1 ||
          log "braze compile $definition failed (see $bundle/aot/compile.log)"
      done
    fi
  fi
  # The Python package for the GPU machine's Python (3.12, with PyTorch): a wheel built here
  # (BRAZE_GPU_PYTHON, default pyenv's 3.12), installed there into a folder of its own.
  local gpu_python=${BRAZE_GPU_PYTHON:-$(ls /root/.pyenv/versions/3.12*/bin/python3 2>/dev/null | head -1)}
  if [[ -n $gpu_python && -x $gpu_python ]]; then
    mkdir -p "$bundle/python-wheel"
    CCACHE_NOHASHDIR=1 "$gpu_python" -m pip wheel --quiet --no-deps "$root" -w "$bundle/python-wheel" \
      --config-settings=build-dir="$build/python-wheel" >"$build/python-wheel.log" 2>&1 ||
      log "building the Python wheel failed (see $build/python-wheel.log)"
  fi
  # Tests find their data through the source path compiled in.
  echo "$root" >"$bundle/SOURCE_ROOT"
  log "bundle ready: $bundle ($(du -sh "$bundle" | cut -f1)); carry it and run tools/gpu-test.sh there"
}

# ---- run (on the GPU machine)

run() {
  local bin lib bench_dir
  if ((!use_build)) && [[ -d $bundle/bin ]]; then
    bin=$bundle/bin
    bench_dir=$bundle/bin
    lib=$bundle/lib
    export BRAZE_PLUGIN_PATH=$bundle/plugins${BRAZE_PLUGIN_PATH:+:$BRAZE_PLUGIN_PATH}
    if [[ -z ${BRAZE_PLUGIN_SCANNER:-} && -x $bundle/bin/braze-plugin-scanner ]]; then
      export BRAZE_PLUGIN_SCANNER=$bundle/bin/braze-plugin-scanner
    fi
    local source_root
    source_root=$(cat "$bundle/SOURCE_ROOT" 2>/dev/null || echo "$root")
    # Test data is found through the path the binaries were built in; point it here.
    if [[ $source_root != "$root" && ! -e $source_root ]]; then
      mkdir -p "$(dirname "$source_root")" && ln -s "$root" "$source_root" ||
        log "note: cannot link $source_root to $root; tests reading tests/data may fail"
    fi
  else
    configure_and_build
    bin=$build/tests/cpp
    bench_dir=$build/benchmarks
    lib=$build/core
  fi
  local cuda_lib
  cuda_lib=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../lib64
  export LD_LIBRARY_PATH=$lib:$cuda_lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # NVRTC may live elsewhere (a pip wheel of the CUDA toolkit, say).
  if ! LD_LIBRARY_PATH=$LD_LIBRARY_PATH ldd "$lib/libbraze_core.so.0" 2>/dev/null | grep -q 'libnvrtc.*=> /'; then
    local nvrtc soname
    soname=$(ldd "$lib/libbraze_core.so.0" 2>/dev/null | awk '/libnvrtc/ {print $1; exit}')
    nvrtc=$(find /usr/local /opt /usr/lib -name "${soname:-libnvrtc.so.13}" -print -quit 2>/dev/null || true)
    if [[ -n $nvrtc ]]; then
      export LD_LIBRARY_PATH=$(dirname "$nvrtc"):$LD_LIBRARY_PATH
      log "using NVRTC from $(dirname "$nvrtc")"
    else
      log "warning: libnvrtc not found; the binaries will not start"
    fi
  fi
  # NCCL for the sharded-fusion tests: the toolkit's, or PyTorch's wheel.
  source "$root/tools/nccl-env.sh"
  braze_nccl_env

  local results=$bin/../results
  rm -rf "$results"
  mkdir -p "$results"
  log "results and logs in $results${OUT:+ (packed into \$OUT at the end)}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    sed 's/^/gpu-test: device: /' >&2 || log "nvidia-smi not available"

  local failed=0
  local summary=$results/summary.txt
  : >"$summary"
  if ((run_tests)); then
    # The binaries run side by side (--jobs, default half the cores, at most 8): most of their
    # tests are the CPU tier, which would take longer than the GPU part run one after another.
    # Each GPU test allocates and checks its own tensors, so sharing the device is safe.
    local binary name rc running=0
    for binary in "$bin"/braze_*_tests; do
      [[ -x $binary ]] || continue
      name=$(basename "$binary")
      log "starting $name"
      (
        code=0
        "$binary" --gtest_output="json:$results/$name.json" ${filter:+--gtest_filter="$filter"} \
          >"$results/$name.log" 2>&1 || code=$?
        echo "$code" >"$results/$name.rc"
      ) &
      running=$((running + 1))
      if ((running >= jobs)); then
        wait -n || true
        running=$((running - 1))
      fi
    done
    wait
    for binary in "$bin"/braze_*_tests; do
      [[ -x $binary ]] || continue
      name=$(basename "$binary")
      rc=$(cat "$results/$name.rc" 2>/dev/null || echo 255)
      # The failing tests, with their messages, right here; the whole log stays in results.
      if ((rc != 0)); then
        failed=1
        log "$name failed ($rc)"
        grep -E -A12 '^\[  FAILED  \]|Failure$|^.*: Failure' "$results/$name.log" | head -80 >&2 || true
        tail -5 "$results/$name.log" >&2
      fi
      echo "test $name $rc" >>"$summary"
    done
    # compute-sanitizer, every tool at once: memcheck (an offset or length wrong reads or writes
    # outside its tensor), racecheck and synccheck (shared memory, mbarriers, cluster and grid
    # barriers). On the stream loops, and on the normalization plans that the heuristics rarely
    # make (forced edges, rows in registers, the grid barrier of column sums). Racecheck reports
    # hazards between the tma_ws kernels' bulk copies into a stage and the previous round's
    # reads of it, which the stage's "empty" mbarrier orders (benchmarks/RESULTS.md: a proxy
    # fence before the release did not change them): their count is shown, not gated on.
    local racecheck_report_only=braze_tma_ws_normalization_tests
    if command -v compute-sanitizer >/dev/null; then
      local -a sanitized=(
        "braze_host_tests:StreamLoopsGpuTest.*:-*Overlap*"
        "braze_tma_ws_normalization_tests:*ForcedPlansAtTheEdges:*RowsInRegisters"
        "braze_inner_outer_tests:InnerOuterBackwardExecutionTest.*:InnerOuterMultiWaveExecutionTest.*"
      )
      local tool entry binary_name
      for tool in memcheck racecheck synccheck; do
        for entry in "${sanitized[@]}"; do
          binary_name=${entry%%:*}
          [[ -x $bin/$binary_name ]] || continue
          (
            rc=0
            compute-sanitizer --tool "$tool" --error-exitcode 1 "$bin/$binary_name" \
              --gtest_filter="${entry#*:}" \
              >"$results/compute-sanitizer-$tool-$binary_name.log" 2>&1 || rc=$?
            echo "$rc" >"$results/compute-sanitizer-$tool-$binary_name.rc"
          ) &
        done
      done
      log "running ${#sanitized[@]} test binaries under compute-sanitizer memcheck, racecheck, synccheck"
      wait
      for tool in memcheck racecheck synccheck; do
        local tool_rc=0
        for entry in "${sanitized[@]}"; do
          binary_name=${entry%%:*}
          [[ -x $bin/$binary_name ]] || continue
          local log_file=$results/compute-sanitizer-$tool-$binary_name.log
          rc=$(cat "$results/compute-sanitizer-$tool-$binary_name.rc" 2>/dev/null || echo 255)
          if [[ $tool == racecheck && $binary_name == "$racecheck_report_only" ]] &&
            grep -q '^\[  PASSED  \] [1-9]' "$log_file"; then
            local hazards
            hazards=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazard' "$log_file" | grep -oE '[0-9]+' || echo 0)
            echo "note compute-sanitizer-racecheck-tma_ws $hazards hazards of bulk copies against" \
              "reads (not gated)" >>"$summary"
            continue
          fi
          # A filter that ran nothing checked nothing.
          if ((rc == 0)) && ! grep -q '^\[  PASSED  \] [1-9]' "$log_file"; then rc=254; fi
          if ((rc != 0)); then
            tool_rc=$rc
            failed=1
            log "compute-sanitizer $tool on $binary_name failed ($rc)"
            tail -20 "$log_file" >&2
          fi
        done
        echo "check compute-sanitizer-$tool $tool_rc" >>"$summary"
      done
    fi
  fi
  # The side-by-side script runs the normalization benchmark itself, next to PyTorch.
  local side_by_side=
  if ((run_bench)) && [[ -z $benchmarks || $benchmarks == *,normalization,* ]]; then
    side_by_side=$(sideBySideScript)
  fi
  if ((run_bench)); then
    local bench name extra
    for bench in "$bench_dir"/braze_*_benchmark; do
      [[ -x $bench ]] || continue
      name=$(basename "$bench")
      [[ -n $side_by_side && $name == braze_normalization_benchmark ]] && continue
      if [[ -n $benchmarks ]]; then
        local short=${name#braze_}
        [[ $benchmarks == *,${short%_benchmark},* ]] || continue
      fi
      extra=()
      # Host time per call of tiny kernels: iterations for half a second per repetition (this
      # Google Benchmark takes min_time as a plain number of seconds, no "s").
      [[ $name == braze_host_latency_benchmark ]] && extra=(--benchmark_min_time=0.5)
      log "running $name"
      "$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
        ${extra[@]+"${extra[@]}"} \
        --benchmark_out="$results/$name.json" --benchmark_out_format=json \
        >"$results/$name.log" 2>&1 || { failed=1; tail -20 "$results/$name.log" >&2; }
      echo "bench $name" >>"$summary"
    done
  fi
  if [[ -n $side_by_side ]]; then
    log "running $side_by_side"
    # shellcheck disable=SC2086
    python3 "$side_by_side" --binary "$bench_dir/braze_normalization_benchmark" \
      --results-dir "$results/side-by-side" \
      --command "$invocation" ${BRAZE_SIDE_BY_SIDE_ARGS:-} \
      >"$results/side-by-side.log" 2>&1 || { failed=1; tail -20 "$results/side-by-side.log" >&2; }
  fi
  if ((run_tests || run_bench)); then
    pythonTier "$results" >"$results/python.txt" 2>&1 || failed=1
  fi
  if ((run_bench)) && [[ -z $benchmarks ]]; then
    log "timing the first result, cold and warm"
    firstResult "$bin" >"$results/first-result.txt" 2>&1 || failed=1
    aheadOfTime "$bin" >>"$results/first-result.txt" 2>&1 || failed=1
  fi
  printSummary "$results" "$summary" | tee "$results/summary-table.txt"
  [[ -f $results/first-result.txt ]] && tee -a "$results/summary-table.txt" <"$results/first-result.txt"
  [[ -s $results/python.txt ]] && tee -a "$results/summary-table.txt" <"$results/python.txt"
  # The side-by-side table (printed by the script after its progress lines).
  if [[ -f $results/side-by-side.log ]]; then
    sed -n '/^=== normalizations/,$p' "$results/side-by-side.log" | tee -a "$results/summary-table.txt"
  fi
  if ((build_failed)); then echo "(some targets failed to build: see above)"; fi
  # The device tool brings back only a few files from $OUT: one archive and the table.
  if [[ -n ${OUT:-} ]]; then
    tar czf "$OUT/gpu-test-results.tar.gz" -C "$results" .
    cp "$results/summary-table.txt" "$OUT/summary.txt"
  fi
  return $failed
}

# Time to first result of a whole process, with an empty kernel cache (cold: every kernel
# through NVRTC) and again on the cache it filled (warm): the main job (braze_demo, four fusions)
# and the cache worker (the seven normalizations and a two-segment layer norm backward, results
# copied back to the host, not checked here: the GPU tier checks them). Median of 3 fresh caches.
firstResult() {
  local bin=$1 program name dir i t0 t1 line
  echo "=== time to first result: whole process, cold (empty kernel cache) vs warm, median of 3"
  printf '%-28s %10s %10s %8s  %s\n' program "cold ms" "warm ms" "cold/warm" "warm process"
  local demo=$bin/braze_demo
  [[ -x $demo ]] || demo=$build/examples/braze_demo
  for program in "$demo" "$bin/braze_serde_cache_worker"; do
    [[ -x $program ]] || continue
    name=$(basename "$program")
    local cold=() warm=()
    for i in 1 2 3; do
      dir=$(mktemp -d)
      # NVRTC (12.9 and later) keeps its own cache of compiled programs in the CUDA compute
      # cache (CUDA_CACHE_PATH, default ~/.nv/ComputeCache): a fresh one, or "cold" would
      # be served by it.
      export CUDA_CACHE_PATH=$dir/nvrtc
      for phase in cold warm; do
        t0=$(date +%s%N)
        if [[ $name == braze_demo ]]; then
          line=$(BRAZE_CACHE_DIR=$dir "$program" 2>&1 | grep -E '^NVRTC compiles' || true)
        else
          line=$("$program" "$dir" --label "$phase" --no-check 2>&1 | grep -E 'nvrtc_calls' || true)
        fi
        t1=$(date +%s%N)
        if [[ $phase == cold ]]; then cold+=($(((t1 - t0) / 1000000))); else warm+=($(((t1 - t0) / 1000000))); fi
      done
      rm -rf "$dir"
      unset CUDA_CACHE_PATH
    done
    local c w
    c=$(printf '%s\n' "${cold[@]}" | sort -n | sed -n 2p)
    w=$(printf '%s\n' "${warm[@]}" | sort -n | sed -n 2p)
    printf '%-28s %10s %10s %8s  %s\n' "$name" "$c" "$w" "$(awk -v c="$c" -v w="$w" 'BEGIN {printf "%.1fx", c / w}')" "$line"
  done
}

# The Python package from the bundle's wheel, installed into a folder of its own for a python3
# that has PyTorch: pytest tests/python (the GPU tier included), then the host time per call
# from Python (benchmarks/python/python_overhead.py).
pythonTier() {
  local results=$1 wheel site
  wheel=$(ls "$bundle"/python-wheel/braze-*.whl 2>/dev/null | head -1)
  [[ -n $wheel ]] && python3 -c 'import torch, pytest' 2>/dev/null || return 0
  site=$results/python-site
  python3 -m pip install --quiet --no-deps --no-index --target "$site" "$wheel" || return 1
  echo "=== Python: $(basename "$wheel") on $(python3 --version)"
  # The package carries its own core, plugins and scanner: none of the bundle's may leak in.
  local library_path=${LD_LIBRARY_PATH//$bundle\/lib/}
  local -a python=(env -u BRAZE_PLUGIN_PATH -u BRAZE_PLUGIN_SCANNER
    LD_LIBRARY_PATH="$library_path" PYTHONPATH="$site" python3)
  local rc=0
  (cd "$root" && set -o pipefail && "${python[@]}" -m pytest tests/python -q 2>&1 | tail -3) || rc=1
  if ((run_bench)); then
    # nvFuser's fd.execute beside Braze's when its wheel was carried (../shared/peers).
    # nvfuser-env.sh sets a variable named site of its own: Braze's is kept apart.
    local braze_site=$site
    (cd "$root" && set -o pipefail &&
      peer_path= peer_lib=
      if [[ -f .peer-wheels/nvfuser-env.sh ]]; then
        # shellcheck disable=SC1091
        if source .peer-wheels/nvfuser-env.sh .peer-wheels >/dev/null 2>&1; then
          peer_path=$PYTHONPATH
          peer_lib=${LD_LIBRARY_PATH%%:*}  # the NVRTC folder it put first
        else
          echo "(nvFuser could not be set up; its row is left out)"
        fi
      fi
      env -u BRAZE_PLUGIN_PATH -u BRAZE_PLUGIN_SCANNER \
        LD_LIBRARY_PATH="${peer_lib:+$peer_lib:}$library_path" \
        PYTHONPATH="$braze_site${peer_path:+:$peer_path}" \
        python3 benchmarks/python/python_overhead.py 2>&1 | tail -8 &&
      # nvFuser's own normalization definitions, unchanged, through Braze (and nvFuser).
      if [[ -d .peer-wheels/nvfuser_benchmarks ]]; then
        env -u BRAZE_PLUGIN_PATH -u BRAZE_PLUGIN_SCANNER \
          LD_LIBRARY_PATH="${peer_lib:+$peer_lib:}$library_path" \
          PYTHONPATH="$braze_site${peer_path:+:$peer_path}" \
          python3 benchmarks/python/nvfuser_definitions.py .peer-wheels/nvfuser_benchmarks \
          --json "$results/nvfuser_definitions.json" 2>"$results/nvfuser_definitions.log" |
          sed -n '/^===/,$p'
      fi) || rc=1
  fi
  return $rc
}

# The bundle's cache built ahead of time without a GPU (pack), run by the cache worker in a
# fresh process on a copy: every kernel must come from it with no NVRTC call, no scheduler call
# and results that match the reference evaluator.
aheadOfTime() {
  local bin=$1 dir line t0 t1
  [[ -d $bundle/aot/cache && -x $bin/braze_serde_cache_worker ]] || return 0
  dir=$(mktemp -d)
  cp -r "$bundle/aot/cache" "$dir/cache"
  t0=$(date +%s%N)
  line=$(CUDA_CACHE_PATH=$dir/nvrtc "$bin/braze_serde_cache_worker" "$dir/cache" --label aot 2>&1 |
    grep -E 'nvrtc_calls' || true)
  t1=$(date +%s%N)
  rm -rf "$dir"
  echo "=== cache built by braze compile --arch sm_90 on the build machine (no GPU), run here"
  echo "$line ($(((t1 - t0) / 1000000)) ms)"
  [[ $line == *" nvrtc_calls=0 scheduler_calls=0 "* && $line == *" mismatches=0"* ]]
}

# The side-by-side script (the bundle's copy, else the tree's) when python3 has PyTorch.
sideBySideScript() {
  local script
  for script in "$bundle/python/normalization_side_by_side.py" \
    "$root/benchmarks/python/normalization_side_by_side.py"; do
    if [[ -f $script ]] && python3 -c 'import torch' 2>/dev/null; then
      echo "$script"
      return
    fi
  done
}

printSummary() {
  python3 - "$1" "$2" <<'EOF'
import json, os, sys
results, summary = sys.argv[1], sys.argv[2]
rows, bench_rows = [], []
for line in open(summary):
    kind, name, *rest = line.split()
    path = os.path.join(results, name + ".json")
    if kind == "check":
        rc = int(rest[0])
        rows.append((name, "-", "-", "-", "clean" if rc == 0 else f"errors (exit {rc}): see {name}-*.log"))
        continue
    if kind == "note":
        rows.append((name, "-", "-", "-", " ".join(rest)))
        continue
    if kind == "test":
        rc = int(rest[0])
        try:
            data = json.load(open(path))
        except (OSError, ValueError):
            rows.append((name, "-", "-", "-", f"no results (exit {rc}: crashed?)"))
            continue
        passed = failed = skipped = 0
        failing = []
        for suite in data.get("testsuites", []):
            for test in suite.get("testsuite", []):
                if test.get("failures"):
                    failed += 1
                    failing.append(suite["name"] + "." + test["name"])
                elif test.get("result") == "SKIPPED":
                    skipped += 1
                else:
                    passed += 1
        note = "" if rc == 0 else f"exit {rc}"
        if failing:
            note = (note + " " if note else "") + ", ".join(failing[:3]) + (" ..." if len(failing) > 3 else "")
        rows.append((name, passed, failed, skipped, note))
    else:
        try:
            data = json.load(open(path))
        except (OSError, ValueError):
            bench_rows.append((name, "-", "-", "-", "no results"))
            continue
        seen_errors = set()
        # Median time per iteration in microseconds, by name (Google Benchmark's own unit
        # varies: the host-latency benchmark reports nanoseconds).
        unit_us = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
        medians = {b.get("run_name", b["name"]): b["real_time"] * unit_us[b.get("time_unit", "ns")]
                   for b in data.get("benchmarks", [])
                   if b.get("aggregate_name", "median") == "median" and "real_time" in b
                   and not b.get("error_occurred")}
        for b in data.get("benchmarks", []):
            if b.get("error_occurred"):
                # A failing benchmark reports once per repetition.
                if b.get("run_name", b["name"]) in seen_errors:
                    continue
                seen_errors.add(b.get("run_name", b["name"]))
                bench_rows.append((b.get("run_name", b["name"]), "-", "-", "-",
                                   b.get("error_message", "error")[:60]))
                continue
            if b.get("aggregate_name", "median") != "median":
                continue
            gbs = b.get("GB/s")
            of_copy = b.get("of_copy")
            run_name = b.get("run_name", b["name"])
            time_us = medians.get(run_name)
            # Host latency: "<kind>/<fusion>" against the same kernels launched directly
            # ("raw_launch/<fusion>", or "graph_launch/<fusion>" for the graph rows): Braze's
            # overhead per call, and per kernel when there are several.
            note = ""
            kind, _, fusion = run_name.partition("/")
            base = "graph_launch" if kind == "cache_hit_graph" else "raw_launch"
            raw = medians.get(base + "/" + fusion)
            if kind not in ("raw_launch", "graph_launch") and raw is not None and time_us is not None:
                note = f"+{time_us - raw:.2f} us/call vs {base}/{fusion}"
                kernels = b.get("kernels") or 1
                if kernels > 1:
                    note += f" (+{(time_us - raw) / kernels:.2f} us/kernel, {kernels:.0f} kernels)"
            bench_rows.append((run_name,
                               "-" if time_us is None else
                               f"{time_us:.2f}" if time_us < 100 else f"{time_us:.1f}",
                               f"{gbs:.0f}" if gbs is not None else "-",
                               f"{100 * of_copy:.1f}%" if of_copy is not None else "-", note))
print()
print("=== summary")
if rows:
    print(f"{'test binary':<28} {'passed':>7} {'failed':>7} {'skipped':>8}  note")
    for name, p, f, s, note in rows:
        print(f"{name:<28} {p:>7} {f:>7} {s:>8}  {note}")
if bench_rows:
    print()
    print(f"{'benchmark (median of 5)':<36} {'us':>9} {'GB/s':>7} {'of copy':>8}  note")
    for name, t, g, c, note in bench_rows:
        print(f"{name:<36} {t:>9} {g:>7} {c:>8}  {note}")
EOF
}

case $mode in
  pack) pack ;;
  run) run ;;
esac
