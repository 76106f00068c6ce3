#pragma once

// A fusion as a user runs it: scheduled by name through the scheduler registry for random
// device inputs, compiled, and ready to launch again and again with outputs allocated once.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bandwidth_timing.h"
#include "braze/codegen/codegen.h"
#include "braze/driver/device_properties.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
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

/// The registry of this program: plugins from BRAZE_PLUGIN_PATH, the install and the build tree.
inline const SchedulerRegistry& benchmarkRegistry() {
  static const SchedulerRegistry registry;
  return registry;
}

/// The largest power of two (up to 256) dividing the pointer.
inline int64_t alignmentOf(CUdeviceptr pointer) {
  int64_t alignment = 256;
  while (alignment > 1 && pointer % static_cast<CUdeviceptr>(alignment) != 0) alignment /= 2;
  return alignment;
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
  result.summary =
      scheduled.scheduler->id + "@" + scheduled.scheduler->version + ": " + scheduled.summary;
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
  uint32_t seed = 1;
  for (const InputSpec& spec : specs) {
    DeviceTensor tensor = DeviceTensor::empty(spec.dtype, spec.sizes);
    fillUniform(tensor, spec.low, spec.high, seed++, stream);
    info.arguments.emplace_back(tensor.argumentInfo());
    info.data_alignments.push_back(alignmentOf(tensor.data()));
    c.bytes += tensor.numel() * sizeInBytes(tensor.dtype());
    c.inputs.emplace_back(std::move(tensor));
  }
  CompiledFusion compiled = scheduleAndCompile(fusion, info, scheduler, options, dump);
  c.summary = std::move(compiled.summary);
  c.compile_seconds = compiled.seconds;
  c.scheduled = std::move(compiled.scheduled);
  c.executor =
      std::make_unique<KernelExecutor>(*c.scheduled, std::move(compiled.kernel),
                                       std::move(compiled.compiled), ExecutorOptions{.dump = dump});
  c.outputs = poisonedOutputs(*c.executor, c.inputs, stream);
  for (const DeviceTensor& output : c.outputs) {
    c.bytes += output.numel() * sizeInBytes(output.dtype());
  }
  return c;
}

/// Times `c` (two untimed launches, then one sample per iteration) and reports its bandwidth,
/// median time, host time per launch (`host_us`: near `median_us`, the launches waited for
/// the host) and compile time, with the scheduler's summary as label.
inline void timeCase(benchmark::State& state, ScheduledCase& c, CUstream stream) {
  c.launch(stream);
  c.launch(stream);
  BRAZE_CU(streamSynchronize, stream);
  EventTimer timer(stream);
  std::vector<double> samples;
  std::vector<double> host_samples;
  for (auto _ : state) {
    samples.push_back(timer.time([&] { c.launch(stream); }));
    host_samples.push_back(timer.hostSecondsPerLaunch());
    state.SetIterationTime(samples.back());
  }
  const double seconds = median(samples);
  reportBandwidth(state, stream, c.bytes, seconds);
  state.counters["median_us"] = seconds * 1e6;
  state.counters["host_us"] = median(host_samples) * 1e6;
  state.counters["bytes"] = static_cast<double>(c.bytes);
  state.counters["compile_s"] = c.compile_seconds;
  state.SetLabel(c.summary);
}

}  // namespace braze::bench
