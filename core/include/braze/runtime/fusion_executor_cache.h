#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "braze/runtime/fusion_kernel_runtime.h"
#include "braze/runtime/run_key.h"

namespace braze {

namespace runtime_detail {
struct ExtentEquality;
}  // namespace runtime_detail

/// How one run goes. The scheduler choices and the compile target select which runtime serves
/// it (runs with other choices get other runtimes); the stream and dumps do not.
struct RunOptions {
  /// Launches are enqueued on this stream (asynchronous); outputs are ready in its order, and
  /// their memory goes back to the pool in its order too: keep the stream until they are gone.
  CUstream stream = nullptr;
  /// The device of a fusion without tensor inputs (otherwise the inputs' device).
  int device = 0;
  /// A scheduler forced for the whole fusion, or per segment (RuntimeOptions).
  std::string scheduler;
  std::vector<std::string> segment_schedulers;
  std::optional<driver::GpuArch> arch;
  int compile_threads = 0;
  /// Streams in the pool each stream loop (ParallelType::Stream) runs its iterations on.
  int stream_pool = 4;
  /// Run as a CUDA graph (FusionKernelRuntime::runGraph): one launch for all segments once
  /// captured. The outputs are then the graph's own buffers, overwritten by the next graph run
  /// with the same sizes on the same stream.
  bool cuda_graph = false;
  /// Run host-tensor inputs through the reference evaluator, segment by segment (kernels still
  /// compiled), as on a machine without a GPU, even where one is present: the CPU check of a
  /// lowering, giving the same host program on every machine. Refused for device tensors.
  bool reference_evaluator = false;
  /// Filled with the device timestamps of the run's launches and copies (RunTrace), waiting
  /// for the run to finish; left empty where nothing ran on a GPU. Not with cuda_graph.
  RunTrace* trace = nullptr;
  /// Where to write the outputs of a device run, one per fusion output: each defined dense
  /// tensor of an output's dtype, sizes and strides is written in place (the output returned
  /// is that memory); undefined ones, and outputs that are inputs written in place, are
  /// allocated as usual. Not with cuda_graph. (FusionKernelRuntime::run's `into`.)
  std::span<const DeviceTensor> outputs_into = {};
  DumpOptions dump = {};
};

/// What a FusionExecutorCache has done so far.
struct ExecutorCacheCounters {
  int64_t runs = 0;
  int64_t hits = 0;  ///< runs served by a frozen plan for their exact signature
  /// New sizes served by an existing runtime: heuristics recomputed, params equal, kernels
  /// reused (a new plan, no compilation).
  int64_t heuristic_reuses = 0;
  int64_t misses = 0;  ///< runs that built a new runtime (segmentation, scheduling, NVRTC)
  int64_t kernels_compiled = 0;    ///< kernels of new runtimes: by NVRTC or from the kernel store
  int64_t kernels_from_store = 0;  ///< of those, found in the kernel store (no NVRTC)
  /// New runtimes whose segmentation, schedulers and params came from the decision store (no
  /// segmenting, no heuristics).
  int64_t runtimes_restored = 0;
  double compile_seconds = 0;  ///< summed over the threads that compiled
  int64_t evictions = 0;       ///< runtimes dropped for capacity
};

struct ExecutorCacheOptions {
  /// Runtimes kept (least recently used dropped first), over all input signatures.
  size_t runtime_capacity = 16;
  /// Frozen plans kept, one per exact argument signature (sizes included).
  size_t plan_capacity = 256;
  /// The schedulers to choose from; default the process's registry (defaultSchedulerRegistry).
  const SchedulerRegistry* registry = nullptr;
};

/// The process's scheduler registry (plugins found as RegistryOptions' defaults describe),
/// made on first use.
const SchedulerRegistry& defaultSchedulerRegistry();

/// One call from a fusion definition to its results: give it inputs, get outputs.
///
/// The first run with a new input signature (device, dtypes, ranks, stride order, contiguity,
/// broadcast dims, pointer alignment) segments the fusion where no single scheduler takes it,
/// asks the registry for each segment's scheduler and params, and compiles every kernel on a
/// pool of threads: a FusionKernelRuntime. New sizes of a known signature first try the
/// existing runtimes: when every segment's params come out equal, the kernels are reused. Each
/// exact signature (sizes and strides included) gets a frozen plan, so a repeated call is one
/// lookup and the launches.
///
/// Device tensors run on their GPU; host tensors are copied to the GPU and the results back,
/// or, on a machine without a GPU, run through the reference evaluator segment by segment.
/// Bad arguments are refused before anything is built, with a message naming the input; the
/// cache is then left as it was. `run` may be called from several threads at once.
class FusionExecutorCache {
 public:
  explicit FusionExecutorCache(std::unique_ptr<Fusion> fusion, ExecutorCacheOptions options = {});
  /// Keeps a copy of `fusion`.
  explicit FusionExecutorCache(const Fusion& fusion, ExecutorCacheOptions options = {});
  ~FusionExecutorCache();
  FusionExecutorCache(const FusionExecutorCache&) = delete;
  FusionExecutorCache& operator=(const FusionExecutorCache&) = delete;

  /// The fusion's outputs for `inputs` (one per fusion input: tensors all on the device or all
  /// on the host, scalars as values): device tensors for device inputs, else host tensors.
  std::vector<FusionArgument> run(const std::vector<FusionArgument>& inputs,
                                  const RunOptions& options = {});

  /// Builds, or finds, the runtime that serves `inputs` (segmentation, schedulers' params,
  /// compiled kernels, kept in the persistent cache when one is set) without running anything:
  /// tensor values are not read and no GPU is used. With `options.arch` naming another
  /// architecture than the GPU's, or on a machine without one, it schedules for the device that
  /// architecture names (sm_90: H100, sm_100: B200): how `braze compile` fills a cache ahead
  /// of time.
  std::shared_ptr<const FusionKernelRuntime> prepare(const std::vector<FusionArgument>& inputs,
                                                     const RunOptions& options = {});

  /// The definition it runs: a copy of the one it was made from, with redundant expands
  /// bypassed, Welfords whose input is read anyway as sums and reductions of broadcast dims as
  /// squeezes (braze/ir/redundant_expands.h, welford_as_sums.h, broadcast_reductions.h).
  const Fusion& fusion() const { return *fusion_; }
  ExecutorCacheCounters counters() const;
  size_t numRuntimes() const;
  /// The runtime that served the last run (null before the first).
  std::shared_ptr<const FusionKernelRuntime> lastRuntime() const;

 private:
  struct RuntimeEntry;
  struct PlanEntry;

  /// The validated context of `inputs` (RunContext::of, the fusion's extent equalities), on
  /// options.device without device tensors, with the properties of options.arch's device when
  /// the GPU is not of that architecture or there is none.
  RunContext contextFor(const std::vector<FusionArgument>& inputs, const RunOptions& options) const;
  /// The definition a run of `context` executes: the fusion, or a copy of it whose contraction
  /// operands are copied first into rows tensor-core kernels read, when no scheduler takes them
  /// as the run lays them out (`context` is then rebound to the copy).
  const Fusion& definitionFor(RunContext& context, const RuntimeOptions& options);
  /// The runtime for `context` (rebound to the definition it executes, see definitionFor).
  std::shared_ptr<FusionKernelRuntime> runtimeFor(RunContext& context,
                                                  const RuntimeOptions& options,
                                                  const RunKey& signature);
  /// Keeps `plan` for `key` (the oldest plan goes past plan_capacity).
  void remember(const RunKey& key, const std::shared_ptr<FusionKernelRuntime>& runtime,
                std::shared_ptr<const ExecutionPlan> plan);
  void rememberLast(const std::shared_ptr<FusionKernelRuntime>& runtime);

  std::unique_ptr<Fusion> fusion_;
  std::vector<runtime_detail::ExtentEquality> extent_equalities_;
  ExecutorCacheOptions options_;
  const SchedulerRegistry& registry_;

  mutable std::shared_mutex mutex_;  // guards runtimes_, plans_, last_
  std::vector<std::unique_ptr<RuntimeEntry>> runtimes_;
  std::unordered_map<RunKey, std::shared_ptr<PlanEntry>, RunKey::Hash> plans_;
  std::shared_ptr<FusionKernelRuntime> last_;
  std::atomic<const FusionKernelRuntime*> last_raw_{nullptr};  // last_, read without the lock
  std::mutex build_mutex_;  // one runtime or plan is built at a time per cache
  /// Copies of fusion_ with staged contraction operands, by which operands (build_mutex_).
  std::vector<std::pair<std::string, std::unique_ptr<Fusion>>> staged_;
  std::atomic<uint64_t> clock_{0};

  std::atomic<int64_t> runs_{0};
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> heuristic_reuses_{0};
  std::atomic<int64_t> misses_{0};
  std::atomic<int64_t> kernels_compiled_{0};
  std::atomic<int64_t> kernels_from_store_{0};
  std::atomic<int64_t> runtimes_restored_{0};
  std::atomic<int64_t> evictions_{0};
  std::atomic<int64_t> compile_microseconds_{0};
};

}  // namespace braze
