#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "braze/driver/device_memory.h"
#include "braze/driver/device_properties.h"
#include "braze/eval/host_tensor.h"
#include "braze/host/host_program.h"
#include "braze/host/stream_stages.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/decision_store.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/runtime/kernel_recipe.h"
#include "braze/segment/segmented_fusion.h"

namespace braze {

/// One argument of a fusion run: a device tensor, a host tensor or a scalar input's value.
using FusionArgument = std::variant<DeviceTensor, HostTensor, ScalarValue>;

/// How a runtime is built. Part of the executor cache's key: runs with other options get other
/// runtimes.
struct RuntimeOptions {
  /// A scheduler forced for the whole fusion ("pointwise", "braze::reduction@1"); empty:
  /// automatic (segments where no scheduler takes the whole fusion). A forced scheduler that
  /// declines is an error listing why, never a segmentation.
  std::string scheduler;
  /// Schedulers forced per segment, by segment position (empty entries: automatic).
  std::vector<std::string> segment_schedulers;
  /// The compile target; default the device's architecture, or sm_90 without a GPU.
  std::optional<driver::GpuArch> arch;
  /// Threads that compile segments; 0: one per hardware thread, at most one per segment.
  int compile_threads = 0;
  /// Streams in the pool each stream loop runs its iterations on (ParallelType::Stream).
  int stream_pool = 4;
  /// segments, host_ir and the per-kernel switches (scheduled, cuda_kernel, ...).
  DumpOptions dump = {};

  bool operator==(const RuntimeOptions& other) const;
};

/// What scheduling a run of a fusion may know beyond its definition: each argument's metadata
/// (one per fusion input), the byte alignment of each tensor's data (0 for scalars), the device,
/// and the fusion's extents bound from the arguments.
struct RunContext {
  std::vector<ArgumentInfo> arguments;
  std::vector<int64_t> data_alignments;
  int device = 0;
  driver::DeviceProperties properties;
  bool on_gpu = false;  ///< device arguments on a machine with a GPU
  /// Per argument: a host tensor the run's host program copies to the device itself
  /// (HostProgramOptions::host_inputs); empty: none.
  std::vector<bool> staged_inputs;
  /// Binds the original fusion's inputs; evaluates any extent of it.
  std::shared_ptr<ExpressionEvaluator> extents;

  /// Validates `arguments` against `fusion` (number, dtypes, ranks, sizes, layouts, one device)
  /// with errors naming the input, and binds its extents. Touches no GPU.
  static RunContext of(const Fusion& fusion, const std::vector<FusionArgument>& arguments);
};

/// What a scheduler may know about `segment` of `fusion` in a run of `context`: the run's
/// arguments for the segment's fusion inputs, dense tensors in their allocation order on
/// 16-byte boundaries for the tensors earlier segments write, and its scalar inputs' values.
SchedulerRuntimeInfo segmentRuntimeInfo(const Fusion& fusion, const Segment& segment,
                                        const RunContext& context);

/// The launch of one segment's kernel with every number fixed for one set of argument sizes:
/// the function, the launch configuration and the packed parameters, of which only the data
/// pointers change from run to run.
struct FrozenLaunch {
  int32_t segment = 0;  ///< the segment whose kernel this launches
  CUfunction function = nullptr;
  LaunchParams launch;
  std::vector<std::byte> parameters;      ///< packed as the kernel declares them
  std::vector<size_t> parameter_offsets;  ///< where each parameter starts in `parameters`
  /// A data pointer to write at `offset`: a fusion input (host::SlotKind::Input) or buffer.
  /// In a tensor map parameter, the map's global address is replaced instead.
  struct Pointer {
    size_t offset = 0;
    host::ValueRef source;
    bool tensor_map = false;
    /// Added to the source's address: where a stream loop's slice of it starts.
    int64_t byte_offset = 0;

    /// Writes `address` into `parameters` (the launch's packed parameters) where this says.
    /// A tensor map is re-addressed on the host (cuTensorMapReplaceAddress); an all-zero map,
    /// packed for a tensor without elements, is left as it is.
    void patch(std::vector<std::byte>& parameters, CUdeviceptr address) const;
  };
  std::vector<Pointer> pointers;
  /// Global intermediates of the kernel, allocated around the launch.
  struct Temporary {
    size_t offset = 0;
    size_t bytes = 0;
  };
  std::vector<Temporary> temporaries;
  /// Grid-reduction workspaces: offset into the plan's per-stream workspace block. Kernels
  /// reset their semaphores, so the block is zeroed once, when first used on a stream.
  struct Workspace {
    size_t parameter_offset = 0;
    size_t block_offset = 0;
  };
  std::vector<Workspace> workspaces;
};

/// Device timestamps of one run's launches and copies (RunOptions::trace), from CUDA events
/// recorded around each on its stream: which stream ran what, and when, for checking that a
/// stream loop's iterations overlap and for profiling. Tracing adds two event records per step.
struct RunTrace {
  struct Span {
    /// Communicate: a resharding step of a sharded fusion (MultiDeviceExecutor), whose Launch
    /// spans are then whole regions (every kernel of the region's run).
    /// Copy: a fusion input (or a slice) copied to the device; CopyToHost: a result (or a
    /// slice) copied back to the host.
    enum class Kind : uint8_t { Launch, Copy, Communicate, CopyToHost } kind = Kind::Launch;
    int32_t segment = -1;  ///< Launch, Communicate: its segment; copies: -1
    /// Copy: the fusion input copied; CopyToHost: the fusion output copied back; else -1.
    int32_t tensor = -1;
    int32_t stream = -1;  ///< -1 the caller's stream, k >= 0 pool stream k
    double start_us = 0;  ///< microseconds from the run's start on the caller's stream
    double end_us = 0;
  };
  std::vector<Span> spans;  ///< in the order the run enqueued them
  /// How long spans of kind `a` ran at the same time as spans of kind `b` on other streams:
  /// the intersections of their intervals, summed over pairs (each pair once).
  double overlapMicroseconds(Span::Kind a, Span::Kind b) const;
};

/// Everything a run with one exact argument signature does, precomputed: the host program's
/// instructions with buffer sizes in bytes and frozen launches. Built once per signature;
/// running it evaluates nothing.
class ExecutionPlan {
 public:
  struct Buffer {
    DataType dtype = DataType::Float32;
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;  ///< dense in the tensor's allocation order
    size_t bytes = 0;
    int32_t alias_input = -1;  ///< >= 0: this fusion input's memory, never allocated
    bool host = false;  ///< page-locked host memory (a result copied back), not device memory
  };
  /// The host program with its stream loops unrolled: allocations and frees on the caller's
  /// stream, launches on it or on a pool stream, and the events between them (Fork: pool stream
  /// `stream` waits for the caller's work so far; Join: the caller waits for pool streams
  /// 0 .. `stream` - 1).
  struct Step {
    enum class Kind : uint8_t {
      Allocate,
      Deallocate,
      Launch,
      Copy,
      Fork,
      Join
    } kind = Kind::Launch;
    int32_t buffer = 0;   ///< Allocate, Deallocate
    int32_t launch = 0;   ///< Launch: index into launches; Copy: index into copies
    int32_t stream = -1;  ///< Launch: -1 the caller's stream, k >= 0 pool stream k; Fork, Join
  };

  /// One contiguous block of bytes copied (host::Copy): between fusion inputs and buffers,
  /// each end at a byte offset (a slice, a ring slot).
  struct MemoryCopy {
    host::CopyDirection direction = host::CopyDirection::HostToDevice;
    host::ValueRef source;      ///< an Input or a Buffer
    int64_t source_offset = 0;  ///< bytes
    host::ValueRef target;      ///< a Buffer, or (DeviceToHost) a host Input written in place
    int64_t target_offset = 0;  ///< bytes
    size_t bytes = 0;
    /// For traces: the fusion input copied (HostToDevice) or output copied back (DeviceToHost).
    int32_t fusion_position = -1;
  };

  int device = 0;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<MemoryCopy> copies;
  int32_t pool_streams = 0;  ///< pool streams the steps use
  std::vector<FrozenLaunch> launches;
  std::vector<host::ValueRef> outputs;
  size_t workspace_bytes = 0;
  /// The outputs come back to the host (host buffers, or host inputs written in place): the
  /// plan runs with runToHost or runGraphToHost.
  bool host_results = false;

  ExecutionPlan();
  ~ExecutionPlan();
  ExecutionPlan(const ExecutionPlan&) = delete;
  ExecutionPlan& operator=(const ExecutionPlan&) = delete;

  /// The fusion's outputs after a run whose buffer i is `memory[i]`: views of the buffers, or
  /// the input an output is.
  std::vector<DeviceTensor> outputTensors(
      const std::vector<FusionArgument>& arguments,
      std::span<const std::shared_ptr<driver::DeviceMemory>> memory) const;
  /// The same for a plan whose outputs come back to the host: host buffers (buffer i's
  /// page-locked memory is `host_memory[i]`) or host inputs written in place.
  std::vector<HostTensor> hostOutputTensors(
      const std::vector<FusionArgument>& arguments,
      std::span<const std::shared_ptr<void>> host_memory) const;

  /// The zeroed workspace block for `stream` (allocated and zeroed on first use).
  CUdeviceptr workspaceFor(CUstream stream) const;

  /// The plan as a CUDA graph for `stream` (graph_replay.cpp), made on first use.
  struct GraphInstance;
  GraphInstance& graphFor(CUstream stream) const;

 private:
  mutable std::mutex mutex_;  // guards workspaces_ and graphs_
  mutable std::vector<std::pair<CUstream, std::shared_ptr<driver::DeviceMemory>>> workspaces_;
  mutable std::vector<std::unique_ptr<GraphInstance>> graphs_;
};

/// One segmentation of a fusion with each segment's scheduler, params and compiled kernel:
/// what serves a family of argument signatures (same dtypes, ranks, layouts; sizes that lead to
/// the same params). Its plan is a host program (braze/host/host_program.h).
class FusionKernelRuntime {
 public:
  struct SegmentKernel {
    SchedulerChoice choice;
    /// The fusion the executor runs: the scheduled segment, or for a kernel restored from its
    /// recipe an unscheduled copy of the segment carrying the recipe's launch formulas.
    std::unique_ptr<Fusion> scheduled;
    std::unique_ptr<KernelExecutor> executor;
    /// The kernel's contract as decisions keep it; absent when it cannot be kept.
    std::optional<KernelRecipe> recipe;
    /// True when the kernel ran from its recipe and the kernel store: no scheduling, lowering
    /// or NVRTC.
    bool from_recipe = false;
    double compile_seconds = 0;  ///< lowering, code generation and NVRTC
  };

  /// Segments `fusion` for `context` (or takes options.scheduler's word for the whole fusion),
  /// chooses and applies each segment's scheduler, generates and compiles every kernel on a
  /// pool of threads. Throws braze::Error when some part of the fusion has no scheduler (with
  /// every scheduler's reason) or a kernel fails to compile.
  FusionKernelRuntime(const Fusion& fusion, const SchedulerRegistry& registry,
                      const RunContext& context, RuntimeOptions options);
  ~FusionKernelRuntime();

  /// True when every segment's scheduler still accepts its segment for `context` and computes
  /// the same params bytes: the compiled kernels then serve these sizes unchanged.
  bool servesWithoutRecompiling(const RunContext& context) const;

  /// The frozen plan for `arguments` (device tensors and scalars of `context`). Needs a GPU.
  std::shared_ptr<const ExecutionPlan> plan(const std::vector<FusionArgument>& arguments,
                                            const RunContext& context) const;
  /// Runs `plan` on `stream`: the fusion's outputs, in order. With `trace`, records events
  /// around every launch and copy and fills it (waiting for the run to finish).
  ///
  /// With `into`, output j is written into `into[j]` where that is a defined dense tensor of
  /// the output's dtype, sizes and strides that the plan would otherwise allocate (not an input
  /// written in place): the returned tensor j is then `into[j]`'s memory. Other outputs are
  /// allocated as usual; a caller wanting them elsewhere copies them.
  std::vector<DeviceTensor> run(const ExecutionPlan& plan,
                                const std::vector<FusionArgument>& arguments, CUstream stream,
                                RunTrace* trace = nullptr,
                                std::span<const DeviceTensor> into = {}) const;
  /// Runs a plan whose results come back to host buffers (a run of host inputs with stream
  /// loops, ExecutionPlan::host_results) on `stream`, and waits for it: the outputs, in
  /// page-locked host memory.
  std::vector<HostTensor> runToHost(const ExecutionPlan& plan,
                                    const std::vector<FusionArgument>& arguments, CUstream stream,
                                    RunTrace* trace = nullptr) const;
  /// Runs `plan` on `stream` as a CUDA graph: captured on the first call for this plan and
  /// stream, with intermediates and outputs in the graph's own memory, then launched with one
  /// call, after updating only the kernels whose input pointers changed. The outputs are the
  /// graph's buffers: the next graph run of this plan on this stream overwrites them (copy them
  /// to keep them longer).
  std::vector<DeviceTensor> runGraph(const ExecutionPlan& plan,
                                     const std::vector<FusionArgument>& arguments,
                                     CUstream stream) const;
  /// runGraph for a plan whose results come back to host buffers, waiting for it: host inputs
  /// are copied by the graph's copy nodes (updated where an input moved), results land in the
  /// graph's own page-locked buffers (overwritten by the next graph run). Host inputs must be
  /// page-locked; a call with a pageable one runs directly, with a logged reason.
  std::vector<HostTensor> runGraphToHost(const ExecutionPlan& plan,
                                         const std::vector<FusionArgument>& arguments,
                                         CUstream stream) const;
  /// Runs the host program on the CPU, each segment with the reference evaluator: how a
  /// machine without a GPU runs a fusion, and a check of the segmentation itself.
  std::vector<HostTensor> runOnHost(const std::vector<FusionArgument>& arguments,
                                    const RunContext& context) const;

  const Fusion& fusion() const { return fusion_; }
  const SegmentedFusion& segmentation() const { return segmented_; }
  const host::HostProgram& program() const { return program_; }
  const std::vector<SegmentKernel>& kernels() const { return kernels_; }
  const RuntimeOptions& options() const { return options_; }
  /// Seconds spent compiling (all segments, summed over threads).
  double compileSeconds() const;
  /// True when the segmentation and every segment's scheduler and params came from the
  /// decision store (braze/runtime/decision_store.h): no segmenting, no heuristics.
  bool restoredDecisions() const { return restored_; }
  /// The decisions of this runtime, as a decision store keeps them.
  RuntimeDecisions decisions() const;
  /// One line per segment: its scheduler, params summary and the original tensors it reads
  /// and writes.
  std::string describe() const;
  /// describe(), and under each segment the schedulers tried before the chosen one, each with
  /// the stage where it declined or failed and its reason: why a scheduler did not take it.
  std::string explain() const;

 private:
  /// What the schedulers see of `segment`: segmentRuntimeInfo, with the slices one iteration
  /// reads and writes when the segment runs in a stream loop.
  SchedulerRuntimeInfo segmentInfo(const Segment& segment, const RunContext& context) const;
  SchedulerChoice chooseFor(size_t segment, const RunContext& context) const;
  /// BRAZE_DUMP=segments_dot: the segmentation as a Graphviz file in the dump folder.
  void writeSegmentsDot(const RunContext& context) const;
  /// Schedules, lowers and compiles segment `segment` with its chosen scheduler.
  void compileSegment(size_t segment, const RunContext& context, const driver::GpuArch& arch,
                      DataType index_type);
  /// Takes the segmentation, choices and kernel recipes from stored `decisions`; the reason
  /// when they no longer apply (an Expr out of range, a scheduler missing, or rebuilt and
  /// ruling against its old params), with nothing changed.
  std::optional<std::string> restore(const RuntimeDecisions& decisions, const RunContext& context);
  /// Segment `segment`'s kernel from its recipe and the kernel store, with no scheduler call,
  /// lowering or NVRTC; false (and `why`) when the recipe does not serve, with nothing changed.
  bool restoreKernel(size_t segment, const driver::GpuArch& arch, DataType index_type,
                     std::string& why);

  const Fusion& fusion_;
  const SchedulerRegistry& registry_;
  RuntimeOptions options_;
  SegmentedFusion segmented_;
  /// Which Exprs run in stream loops; null for a fusion without stream axes.
  std::unique_ptr<host::StreamStages> stages_;
  host::HostProgram program_;
  std::vector<SegmentKernel> kernels_;
  bool restored_ = false;
  bool keep_recipes_ = false;  ///< a decision store keeps this runtime's decisions
  int device_ = 0;
};

}  // namespace braze
