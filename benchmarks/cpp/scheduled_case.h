#pragma once

// A fusion scheduled by name through the scheduler registry for random device inputs, compiled,
// and ready to launch with its KernelExecutor again and again with outputs allocated once: the
// direct path, below FusionExecutorCache (runtime_case.h runs fusions the way users call Braze).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "bandwidth_timing.h"
#include "braze/codegen/codegen.h"
#include "braze/driver/device_properties.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/sched/schedule_printer.h"
#include "random_fill.h"

namespace braze::bench {

/// One input of a case: its sizes, dtype and the range of its uniform random values.
struct InputSpec {
  std::vector<int64_t> sizes;
  DataType dtype;
  float low;
  float high;
};

/// The registry of this program: plugins from BRAZE_PLUGIN_PATH, the install and the build tree
/// (the one FusionExecutorCache chooses from, so both paths load each plugin once).
inline const SchedulerRegistry& benchmarkRegistry() {
  return defaultSchedulerRegistry();
}

/// Device tensors of `specs` filled with uniform random values (seeds 1, 2, ... in order) on
/// `stream`.
inline std::vector<DeviceTensor> randomInputs(const std::vector<InputSpec>& specs,
                                              CUstream stream) {
  std::vector<DeviceTensor> inputs;
  uint32_t seed = 1;
  for (const InputSpec& spec : specs) {
    inputs.push_back(DeviceTensor::empty(spec.dtype, spec.sizes));
    fillUniform(inputs.back(), spec.low, spec.high, seed++, stream);
  }
  return inputs;
}

/// Bytes of every tensor of `tensors`, once.
inline int64_t bytesOf(const std::vector<DeviceTensor>& tensors) {
  int64_t bytes = 0;
  for (const DeviceTensor& tensor : tensors) bytes += tensor.numel() * sizeInBytes(tensor.dtype());
  return bytes;
}

/// The tensors of `arguments` (ExecutorArgument or FusionArgument, all device tensors).
template <typename Argument>
std::vector<DeviceTensor> deviceTensorsOf(const std::vector<Argument>& arguments) {
  std::vector<DeviceTensor> tensors;
  for (const Argument& argument : arguments) tensors.push_back(std::get<DeviceTensor>(argument));
  return tensors;
}

/// The largest power of two (up to 256) dividing the pointer.
inline int64_t alignmentOf(CUdeviceptr pointer) {
  int64_t alignment = 256;
  while (alignment > 1 && pointer % static_cast<CUdeviceptr>(alignment) != 0) alignment /= 2;
  return alignment;
}

/// "id@version: params": a scheduler and the summary of the params it chose.
inline std::string schedulerSummary(const SchedulerEntry& scheduler, const std::string& params) {
  return scheduler.id + "@" + scheduler.version + ": " + params;
}

/// A fusion scheduled through the registry, its kernel generated and compiled.
struct CompiledFusion {
  std::unique_ptr<Fusion> scheduled;
  std::string summary;  ///< "id@version: params"
  GeneratedKernel kernel;
  CompiledKernel compiled;
  double seconds = 0.0;  ///< scheduling, code generation and NVRTC
};

/// Schedules `fusion` with `scheduler` for the arguments `info` describes (throws the
/// registry's message, with the scheduler's reason, when it declines), generates and compiles
/// its kernel; `dump` prints the schedule, kernel IR, CUDA, PTX and compile log it asks for.
inline CompiledFusion scheduleAndCompile(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                                         const std::string& scheduler, CompileOptions options = {},
                                         const DumpOptions& dump = {}) {
  options.dump = dump;
  const auto start = std::chrono::steady_clock::now();
  ScheduledFusion scheduled = benchmarkRegistry().schedule(fusion, info, scheduler);
  CompiledFusion result;
  result.summary = schedulerSummary(*scheduled.scheduler, scheduled.summary);
  result.scheduled = std::move(scheduled.fusion);
  if (dump.scheduled) {
    dump.out() << "=== schedule (" << result.summary << ")\n" << printSchedule(*result.scheduled);
  }
  LowerOptions lower_options;
  lower_options.dump_lowering = dump.lowering;
  lower_options.dump_stream = dump.stream;
  result.kernel = generateCuda(*result.scheduled, lower_options);
  if (dump.cuda_kernel) dump.out() << "=== CUDA\n" << result.kernel.source << "\n";
  result.compiled =
      CompiledKernel::compile(result.kernel.source, result.kernel.kernel_name, options);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

struct ScheduledCase {
  std::unique_ptr<Fusion> scheduled;
  std::unique_ptr<KernelExecutor> executor;
  std::string summary;  ///< "id@version: params"
  std::vector<ExecutorArgument> inputs;
  std::vector<DeviceTensor> outputs;
  int64_t bytes = 0;             ///< every input read once plus every output written once
  double compile_seconds = 0.0;  ///< scheduling, code generation and NVRTC

  void launch(CUstream stream) { executor->run(inputs, stream, outputs); }
};

/// The outputs of `executor` for `inputs`, allocated once (contiguous, every byte 0xFF so that
/// an element the kernel never writes reads as NaN), in the fusion's output order.
inline std::vector<DeviceTensor> poisonedOutputs(const KernelExecutor& executor,
                                                 const std::vector<ExecutorArgument>& inputs,
                                                 CUstream stream) {
  const LaunchPlan plan = executor.plan(inputs);
  const GeneratedKernel& generated = executor.generatedKernel();
  std::vector<DeviceTensor> outputs(executor.fusion().outputs().size());
  for (size_t i = 0; i < generated.parameters.size(); ++i) {
    const KernelParameter& p = generated.parameters[i];
    if (p.kind != KernelParameter::Kind::OutputTensor) continue;
    DeviceTensor& output = outputs[static_cast<size_t>(p.fusion_position)];
    output = DeviceTensor::empty(p.dtype, plan.parameters[i].sizes, plan.device);
    output.fillBytes(0xFF, stream);
  }
  return outputs;
}

/// Fills the inputs, schedules `fusion` with `scheduler` (throws the registry's message, with
/// the scheduler's reason, when it declines), compiles it for this GPU and allocates the
/// outputs (every byte 0xFF before the first run).
inline ScheduledCase scheduleCase(const Fusion& fusion, const std::vector<InputSpec>& specs,
                                  const std::string& scheduler, CUstream stream,
                                  const DumpOptions& dump = {}, CompileOptions options = {}) {
  ScheduledCase c;
  SchedulerRuntimeInfo info;
  info.device = driver::deviceProperties(0);
  const std::vector<DeviceTensor> inputs = randomInputs(specs, stream);
  for (const DeviceTensor& tensor : inputs) {
    info.arguments.emplace_back(tensor.argumentInfo());
    info.data_alignments.push_back(alignmentOf(tensor.data()));
    c.inputs.emplace_back(tensor);
  }
  c.bytes = bytesOf(inputs);
  CompiledFusion compiled = scheduleAndCompile(fusion, info, scheduler, options, dump);
  c.summary = std::move(compiled.summary);
  c.compile_seconds = compiled.seconds;
  c.scheduled = std::move(compiled.scheduled);
  c.executor =
      std::make_unique<KernelExecutor>(*c.scheduled, std::move(compiled.kernel),
                                       std::move(compiled.compiled), ExecutorOptions{.dump = dump});
  c.outputs = poisonedOutputs(*c.executor, c.inputs, stream);
  c.bytes += bytesOf(c.outputs);
  return c;
}

/// Times `c` (two untimed launches, then one sample per iteration) and reports its bandwidth,
/// median time, host time per launch (`host_us`: near `median_us`, the launches waited for
/// the host) and compile time, with the scheduler's summary as label.
inline void timeCase(benchmark::State& state, ScheduledCase& c, CUstream stream) {
  timeLaunches(state, stream, c.bytes, [&] { c.launch(stream); });
  state.counters["compile_s"] = c.compile_seconds;
  state.SetLabel(c.summary);
}

}  // namespace braze::bench
