#pragma once

// A host program run on a GPU by walking it, instruction by instruction: every tensor a device
// tensor, each launch and communication by a hook (a region's FusionExecutorCache, an NCCL
// step), stream loops on the pool streams, one iteration a stream, so that the communication
// of one slice overlaps the compute of another. The multi-device executor runs its programs
// with it; single-device plans are frozen instead (execution_plan.cpp), because their launches
// are kernels, not whole executors.

#include <functional>
#include <optional>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/host/communicator.h"
#include "braze/host/host_program.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "runtime/program_placement.h"

namespace braze::runtime_detail {

class DeviceProgramRun {
 public:
  /// Runs segment `launch.segment` on `inputs`, enqueued on `stream`: its outputs, in order.
  /// `into[j]` is where output j goes when its slot is a view (a slice a loop writes, a ring
  /// slot), else undefined: a result in that memory is not copied again.
  using Launch = std::function<std::vector<DeviceTensor>(
      const host::LaunchKernel& launch, const std::vector<FusionArgument>& inputs,
      const std::vector<DeviceTensor>& into, CUstream stream)>;
  /// Runs resharding segment `communicate.segment` on this device's part, enqueued on
  /// `stream`: its result.
  /// `part` is null on a device that receives a tensor it does not hold (send / receive
  /// between meshes; `into` is then its memory); nullopt: this device keeps no result.
  /// `overlap`: BesideCompute for a step of a stream loop.
  using Communicate = std::function<std::optional<DeviceTensor>(
      const host::Communicate& communicate, const DeviceTensor* part, const DeviceTensor* into,
      CUstream stream, host::Overlap overlap)>;

  /// `arguments` are the program's inputs (device tensors and scalars); `extents` evaluates
  /// the program's extents; work is enqueued on `stream` and the pool streams of `device`.
  /// With `trace`, each launch and communication is timed by events on its stream; run()
  /// waits for the last and fills the trace.
  DeviceProgramRun(const host::HostProgram& program, const std::vector<FusionArgument>& arguments,
                   ExpressionEvaluator& extents, int device, CUstream stream, Launch launch,
                   Communicate communicate, RunTrace* trace = nullptr,
                   ProgramPlacement placement = {});
  ~DeviceProgramRun();
  DeviceProgramRun(const DeviceProgramRun&) = delete;
  DeviceProgramRun& operator=(const DeviceProgramRun&) = delete;

  /// The program's outputs, ready in `stream`'s order.
  std::vector<DeviceTensor> run();

 private:
  struct Iteration {
    int64_t index = 0;
    int64_t start = 0;
    int64_t length = 0;
  };

  int64_t extent(const host::ValueRef& ref) const;
  int64_t sliceLength(int32_t loop) const;
  DeviceTensor& materialized(int32_t buffer);
  FusionArgument valueOf(const host::ValueRef& ref);
  DeviceTensor tensorOf(const host::ValueRef& ref, const char* what);
  void writeInto(int32_t buffer, DeviceTensor value, const std::string& what);
  /// Where a result for slot `buffer` goes: the slot's view, or undefined (a new tensor).
  DeviceTensor destinationOf(int32_t buffer) const;
  /// Whether this device holds slot `ref`'s tensor (ProgramPlacement).
  bool held(const host::ValueRef& ref) const;
  void execute(const host::Instruction& instruction);
  void runLoop(const host::ForLoop& loop);
  void communicate(const host::Communicate& communicate);
  CUstream poolStream(int32_t index);
  void fork(int32_t pool_index);
  void join(int32_t used);
  /// Records an event on the current stream (trace only): before and after a traced step.
  void mark(RunTrace::Span::Kind kind, int32_t segment);
  void endMark();
  void finishTrace();

  const host::HostProgram& program_;
  const std::vector<FusionArgument>& arguments_;
  ExpressionEvaluator& extents_;
  int device_;
  CUstream caller_;
  CUstream current_;
  int32_t current_pool_ = -1;  // the pool stream current_ is, or -1 for the caller's
  Launch launch_;
  Communicate communicate_;
  std::vector<std::optional<DeviceTensor>> tensors_;
  std::vector<const host::Allocate*> pending_;
  ProgramPlacement placement_;
  std::vector<const host::Allocate*> allocations_;  // per buffer (and slices of it)
  std::vector<Iteration> iterations_;               // per loop: the iteration enqueued now
  std::vector<bool> forked_;             // per pool stream: waited for the caller in this loop
  int32_t pool_used_ = 0;                // pool streams used by the run
  int32_t comm_used_ = 0;                // high-priority streams used by steps in loops
  int64_t steps_enqueued_ = 0;           // communications so far
  CUstream last_step_stream_ = nullptr;  // where the last one went
  // Every tensor the run made: kept until the pool streams have waited for the caller's last
  // work, since each is freed in the order of the stream it was made on, which another stream
  // may still be reading.
  std::vector<DeviceTensor> made_;
  RunTrace* trace_ = nullptr;
  CUevent trace_start_ = nullptr;
  std::vector<std::pair<CUevent, CUevent>> trace_marks_;
};

}  // namespace braze::runtime_detail
