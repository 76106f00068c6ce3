#pragma once

// A fusion run the way users call Braze: FusionExecutorCache::run on random device inputs, on
// the benchmark's stream, with the scheduler chosen and the fusion segmented automatically.
// The first run segments, schedules and compiles; every later run is a cache hit whose outputs
// (and intermediates between segments) are fresh allocations from Braze's stream-ordered pool:
// part of what users pay, so every timed call makes them and drops them again.

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "bandwidth_timing.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "scheduled_case.h"

namespace braze::bench {

struct RuntimeCase {
  std::unique_ptr<FusionExecutorCache> cache;
  std::vector<FusionArgument> inputs;
  RunOptions options;  ///< the benchmark's stream
  /// The first run's outputs, finished: check them, then clear them (they hold pool memory).
  std::vector<DeviceTensor> first_outputs;
  int64_t bytes = 0;  ///< every input read once plus every output written once

  /// One call as users make it. The outputs are dropped at once: freed in stream order, with
  /// nothing waited for.
  void launch() { cache->run(inputs, options); }
};

/// Leaves `bytes` of 0xFF (NaN in every floating dtype) in Braze's pool for `stream`: the
/// allocations of the next run on `stream` reuse that memory, so an element a kernel never
/// writes reads as NaN.
inline void poisonPool(size_t bytes, CUstream stream) {
  std::shared_ptr<driver::DeviceMemory> block =
      driver::DeviceMemory::allocateOnStream(0, bytes, stream);
  BRAZE_CU(memsetD8Async, block->pointer(), 0xFF, bytes, stream);
}

/// Fills the inputs and runs `fusion` once through a new FusionExecutorCache on `stream`, on a
/// poisoned pool, and waits: the run that segments, schedules and compiles. Throws what the run
/// throws (no scheduler for some part, a kernel that fails to compile).
inline RuntimeCase runtimeCase(const Fusion& fusion, const std::vector<InputSpec>& specs,
                               CUstream stream, const DumpOptions& dump = {}) {
  RuntimeCase c;
  const std::vector<DeviceTensor> inputs = randomInputs(specs, stream);
  c.inputs.assign(inputs.begin(), inputs.end());
  c.options.stream = stream;
  c.options.dump = dump;
  c.cache = std::make_unique<FusionExecutorCache>(fusion);
  // As much as the test of the cache on a GPU poisons: outputs and intermediates fit.
  poisonPool(static_cast<size_t>(4 * bytesOf(inputs)) + (size_t{1} << 20), stream);
  c.first_outputs = deviceTensorsOf(c.cache->run(c.inputs, c.options));
  BRAZE_CU(streamSynchronize, stream);
  c.bytes = bytesOf(inputs) + bytesOf(c.first_outputs);
  return c;
}

/// Kernels a run of `runtime` launches.
inline int64_t kernelLaunches(const FusionKernelRuntime& runtime) {
  int64_t launches = 0;
  for (const host::Instruction& instruction : runtime.program().instructions)
    launches += std::holds_alternative<host::LaunchKernel>(instruction) ? 1 : 0;
  return launches;
}

/// Each segment's "id@version: params", joined with "; " after "<n> segments: " when there
/// are several.
inline std::string runtimeSummary(const FusionKernelRuntime& runtime) {
  const std::vector<FusionKernelRuntime::SegmentKernel>& kernels = runtime.kernels();
  std::string text = kernels.size() == 1 ? "" : std::to_string(kernels.size()) + " segments: ";
  for (size_t s = 0; s < kernels.size(); ++s) {
    if (s > 0) text += "; ";
    text += schedulerSummary(*kernels[s].choice.scheduler, kernels[s].choice.summary);
  }
  return text;
}

/// Times `c` as timeLaunches does and reports, besides its counters, `compile_s` (the
/// runtime's compileSeconds), `segments` and `kernels` (launched per run), with the segments'
/// schedulers and params as label.
inline void timeRuntimeCase(benchmark::State& state, RuntimeCase& c, CUstream stream) {
  timeLaunches(state, stream, c.bytes, [&] { c.launch(); });
  const std::shared_ptr<const FusionKernelRuntime> runtime = c.cache->lastRuntime();
  state.counters["compile_s"] = runtime->compileSeconds();
  state.counters["segments"] = static_cast<double>(runtime->kernels().size());
  state.counters["kernels"] = static_cast<double>(kernelLaunches(*runtime));
  state.SetLabel(runtimeSummary(*runtime));
}

}  // namespace braze::bench
