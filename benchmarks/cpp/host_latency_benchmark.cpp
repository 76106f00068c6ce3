// Host time of a FusionExecutorCache::run on a cache hit, against launching the same compiled
// kernels directly with cuLaunchKernelEx (packed parameters prepared once), in one run:
//
//   raw_launch/1_kernel         cuLaunchKernelEx of the 1-kernel fusion's cubin
//   cache_hit/1_kernel          FusionExecutorCache::run of y = x * 2 + 1 (float32 [8, 128])
//   kernel_executor/1_kernel    KernelExecutor::run of the same kernel (its own plan reuse)
//   raw_launch/8_segments       the eight kernels of the 8-segment fusion, launched directly
//   cache_hit/8_segments        FusionExecutorCache::run of a fusion of eight segments (four
//                               column means, each subtracted from the rows before the next:
//                               a reduction kernel and a pointwise kernel per mean)
//   raw_launch/11_segments      the same for eleven kernels (five means, a copy)
//   cache_hit/11_segments
//   graph_launch/*              cuGraphLaunch of a graph of those kernels, built here
//   cache_hit_graph/*           FusionExecutorCache::run with RunOptions::cuda_graph
//
// Tensors are tiny, so the GPU finishes each kernel faster than the host enqueues the next:
// the time per iteration is the host's. Every 64 iterations the stream is synchronized (also
// in the raw loops), so the queue never fills. The difference cache_hit - raw_launch is
// Braze's overhead per call: validation-free lookup, output and intermediate allocation from
// the stream-ordered pool, parameter patching and the returned tensors.

#include <benchmark/benchmark.h>

#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/eval/strided_layout.h"
#include "braze/runtime/fusion_executor_cache.h"

namespace braze {
namespace {

constexpr int kSyncEvery = 64;

std::unique_ptr<Fusion> oneKernelFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  fusion->addOutput(add(mul(x, 2.0), 1.0));
  return fusion;
}

// Four column means, each subtracted from the rows before the next is taken: each mean needs
// every row of the tensor before it, so the fusion runs as eight kernels (each mean, then the
// subtraction that the next mean and the next subtraction both read).
std::unique_ptr<Fusion> eightSegmentFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  for (int i = 0; i < 4; ++i) x = sub(x, mean(x, {0}, /*keepdim=*/true));
  fusion->addOutput(mul(x, 0.5));
  return fusion;
}

// Eleven kernels: five column means, each subtracted from the rows before the next (ten),
// and the result copied through segment_set as a second output (the eleventh): the size of
// nvFuser's own host-latency case.
std::unique_ptr<Fusion> elevenSegmentFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  for (int i = 0; i < 5; ++i) x = sub(x, mean(x, {0}, /*keepdim=*/true));
  fusion->addOutput(x);
  fusion->addOutput(neg(segment_set(x)));
  return fusion;
}

struct Prepared {
  std::unique_ptr<FusionExecutorCache> cache;
  std::vector<FusionArgument> inputs;
  // The runtime's kernels, loaded separately, with parameters packed for the first run's
  // buffers: what a hand-written launcher of the same cubins would do.
  std::vector<CUfunction> functions;
  std::vector<LaunchParams> launches;
  std::vector<KernelArguments> arguments;
  std::vector<DeviceTensor> keep_alive;
};

bool gpuOrSkip(benchmark::State& state) {
  std::string reason;
  if (driver::isDriverAvailable(&reason)) return true;
  state.SkipWithError(("no GPU: " + reason).c_str());
  return false;
}

Prepared prepare(std::unique_ptr<Fusion> fusion) {
  Prepared p;
  p.cache = std::make_unique<FusionExecutorCache>(std::move(fusion));
  HostTensor host = HostTensor::empty(DataType::Float32, {8, 128});
  for (int64_t i = 0; i < host.numel(); ++i) host.setFlat(i, 0.25 * static_cast<double>(i % 7));
  p.inputs.emplace_back(DeviceTensor::fromHost(host));
  p.cache->run(p.inputs);  // compiles and freezes the plan
  const std::shared_ptr<const FusionKernelRuntime> runtime = p.cache->lastRuntime();
  // Each segment's inputs and outputs as device tensors, following the host program.
  const std::shared_ptr<const ExecutionPlan> frozen =
      runtime->plan(p.inputs, RunContext::of(p.cache->fusion(), p.inputs));
  std::vector<DeviceTensor> buffers(frozen->buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b) {
    buffers[b] = DeviceTensor::empty(frozen->buffers[b].dtype, frozen->buffers[b].sizes);
    p.keep_alive.push_back(buffers[b]);
  }
  for (const host::Instruction& instruction : runtime->program().instructions) {
    const auto* launch = std::get_if<host::LaunchKernel>(&instruction);
    if (launch == nullptr) continue;
    KernelExecutor& executor = *runtime->kernels()[static_cast<size_t>(launch->segment)].executor;
    std::vector<ExecutorArgument> inputs;
    for (const host::ValueRef& ref : launch->inputs) {
      if (ref.kind == host::SlotKind::Input) {
        inputs.emplace_back(std::get<DeviceTensor>(p.inputs[static_cast<size_t>(ref.index)]));
      } else {
        inputs.emplace_back(buffers[static_cast<size_t>(ref.index)]);
      }
    }
    std::vector<DeviceTensor> outputs;
    for (int32_t buffer : launch->outputs) outputs.push_back(buffers[static_cast<size_t>(buffer)]);
    const LaunchPlan plan = executor.plan(inputs);
    std::vector<CUdeviceptr> allocations(executor.generatedKernel().parameters.size(), 0);
    for (size_t i = 0; i < allocations.size(); ++i) {
      const LaunchPlan::Parameter& parameter = plan.parameters[i];
      const int64_t bytes = std::max<int64_t>(parameter.workspace_bytes, 0) +
                            (parameter.sizes.empty() ? 0 : 4 * numelOf(parameter.sizes));
      if (bytes == 0) continue;
      DeviceTensor scratch = DeviceTensor::empty(DataType::Float32, {bytes / 4 + 64});
      scratch.fillBytes(0);
      allocations[i] = scratch.data();
      p.keep_alive.push_back(scratch);
    }
    p.arguments.push_back(executor.packArguments(plan, inputs, outputs, allocations));
    p.launches.push_back(plan.launch);
    p.functions.push_back(executor.prepareLaunch(plan));
  }
  BRAZE_CU(ctxSynchronize);
  return p;
}

// The fusion prepared, or nothing after marking `state` skipped: no GPU, or the fusion fails to
// build (no scheduler for some segment, say; the message is the error), so that the other
// benchmarks still run.
std::optional<Prepared> prepareOrSkip(benchmark::State& state,
                                      std::unique_ptr<Fusion> (*define)()) {
  if (!gpuOrSkip(state)) return std::nullopt;
  try {
    return prepare(define());
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
    return std::nullopt;
  }
}

void rawLaunches(benchmark::State& state, std::unique_ptr<Fusion> (*define)()) {
  std::optional<Prepared> prepared = prepareOrSkip(state, define);
  if (!prepared) return;
  Prepared& p = *prepared;
  const driver::DriverApi& api = driver::driverApi();
  int64_t i = 0;
  for (auto _ : state) {
    for (size_t k = 0; k < p.functions.size(); ++k) {
      DriverLaunchConfig launch_config(p.launches[k], nullptr);
      api.launchKernelEx(&launch_config.config, p.functions[k], p.arguments[k].pointers(), nullptr);
    }
    if (++i % kSyncEvery == 0) api.ctxSynchronize();
  }
  api.ctxSynchronize();
  state.counters["kernels"] = static_cast<double>(p.functions.size());
}

void cacheHits(benchmark::State& state, std::unique_ptr<Fusion> (*define)()) {
  std::optional<Prepared> prepared = prepareOrSkip(state, define);
  if (!prepared) return;
  Prepared& p = *prepared;
  const driver::DriverApi& api = driver::driverApi();
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.cache->run(p.inputs));
    if (++i % kSyncEvery == 0) api.ctxSynchronize();
  }
  api.ctxSynchronize();
  state.counters["kernels"] = static_cast<double>(p.functions.size());
  state.counters["hits"] = static_cast<double>(p.cache->counters().hits);
}

void graphLaunches(benchmark::State& state, std::unique_ptr<Fusion> (*define)()) {
  if (!gpuOrSkip(state)) return;
  Prepared p = prepare(define());
  const driver::DriverApi& api = driver::driverApi();
  CUgraph graph = nullptr;
  BRAZE_CU(graphCreate, &graph, 0);
  CUgraphNode previous = nullptr;
  for (size_t k = 0; k < p.functions.size(); ++k) {
    CUDA_KERNEL_NODE_PARAMS params{};
    params.func = p.functions[k];
    params.gridDimX = static_cast<unsigned>(p.launches[k].grid[0]);
    params.gridDimY = static_cast<unsigned>(p.launches[k].grid[1]);
    params.gridDimZ = static_cast<unsigned>(p.launches[k].grid[2]);
    params.blockDimX = static_cast<unsigned>(p.launches[k].block[0]);
    params.blockDimY = static_cast<unsigned>(p.launches[k].block[1]);
    params.blockDimZ = static_cast<unsigned>(p.launches[k].block[2]);
    params.sharedMemBytes = static_cast<unsigned>(p.launches[k].dynamic_shared_memory_bytes);
    params.kernelParams = p.arguments[k].pointers();
    CUgraphNode node = nullptr;
    BRAZE_CU(graphAddKernelNode, &node, graph, previous ? &previous : nullptr, previous ? 1 : 0,
             &params);
    previous = node;
  }
  CUgraphExec exec = nullptr;
  BRAZE_CU(graphInstantiate, &exec, graph, 0);
  int64_t i = 0;
  for (auto _ : state) {
    api.graphLaunch(exec, nullptr);
    if (++i % kSyncEvery == 0) api.ctxSynchronize();
  }
  api.ctxSynchronize();
  api.graphExecDestroy(exec);
  api.graphDestroy(graph);
  state.counters["kernels"] = static_cast<double>(p.functions.size());
}

void cacheHitsAsGraphs(benchmark::State& state, std::unique_ptr<Fusion> (*define)()) {
  if (!gpuOrSkip(state)) return;
  Prepared p = prepare(define());
  RunOptions options;
  options.cuda_graph = true;
  const driver::DriverApi& api = driver::driverApi();
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.cache->run(p.inputs, options));
    if (++i % kSyncEvery == 0) api.ctxSynchronize();
  }
  api.ctxSynchronize();
  state.counters["kernels"] = static_cast<double>(p.functions.size());
}

void kernelExecutorRuns(benchmark::State& state) {
  std::optional<Prepared> prepared = prepareOrSkip(state, oneKernelFusion);
  if (!prepared) return;
  Prepared& p = *prepared;
  KernelExecutor& executor = *p.cache->lastRuntime()->kernels()[0].executor;
  const std::vector<ExecutorArgument> inputs = {std::get<DeviceTensor>(p.inputs[0])};
  const driver::DriverApi& api = driver::driverApi();
  int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(executor.run(inputs));
    if (++i % kSyncEvery == 0) api.ctxSynchronize();
  }
  api.ctxSynchronize();
}

BENCHMARK_CAPTURE(rawLaunches, 1_kernel, oneKernelFusion)->Name("raw_launch/1_kernel");
BENCHMARK_CAPTURE(cacheHits, 1_kernel, oneKernelFusion)->Name("cache_hit/1_kernel");
BENCHMARK(kernelExecutorRuns)->Name("kernel_executor/1_kernel");
BENCHMARK_CAPTURE(rawLaunches, 8_segments, eightSegmentFusion)->Name("raw_launch/8_segments");
BENCHMARK_CAPTURE(cacheHits, 8_segments, eightSegmentFusion)->Name("cache_hit/8_segments");
BENCHMARK_CAPTURE(graphLaunches, 1_kernel, oneKernelFusion)->Name("graph_launch/1_kernel");
BENCHMARK_CAPTURE(cacheHitsAsGraphs, 1_kernel, oneKernelFusion)->Name("cache_hit_graph/1_kernel");
BENCHMARK_CAPTURE(graphLaunches, 8_segments, eightSegmentFusion)->Name("graph_launch/8_segments");
BENCHMARK_CAPTURE(cacheHitsAsGraphs, 8_segments, eightSegmentFusion)
    ->Name("cache_hit_graph/8_segments");
BENCHMARK_CAPTURE(rawLaunches, 11_segments, elevenSegmentFusion)->Name("raw_launch/11_segments");
BENCHMARK_CAPTURE(cacheHits, 11_segments, elevenSegmentFusion)->Name("cache_hit/11_segments");
BENCHMARK_CAPTURE(graphLaunches, 11_segments, elevenSegmentFusion)
    ->Name("graph_launch/11_segments");
BENCHMARK_CAPTURE(cacheHitsAsGraphs, 11_segments, elevenSegmentFusion)
    ->Name("cache_hit_graph/11_segments");

}  // namespace
}  // namespace braze

BENCHMARK_MAIN();
