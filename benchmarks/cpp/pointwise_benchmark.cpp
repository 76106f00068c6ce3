// Memory-bound pointwise kernels against the GPU's own copy bandwidth, in one run:
//
//   memcpy_dtod   cuMemcpyDtoDAsync of 256 MiB: the ceiling (bytes read + bytes written)
//   copy/*        out = a, 256 MiB float32 in and out
//   add/*         out = a + b, 256 MiB per tensor
//
//   add/pointwise         out = a + b, float32 [16384, 4096] (256 MiB each)
//   gelu_bias/pointwise   out = gelu(x + bias) (tanh), bfloat16 x [32768, 4096], bias [4096]
//   cast_chain/pointwise  out = bf16(f32(f16(bf16(x))) * 0.5), float32 x [16384, 4096]
//
// "hand" kernels are written here (16-byte loads and stores, four per thread) and launched
// through KernelExecutor; "braze" kernels are generated (generateCuda) from hand-scheduled
// fusions (16-byte accesses, one per thread, 256 threads per block); "pointwise" fusions are
// scheduled by name by the braze::pointwise plugin through the registry (scheduled_case.h),
// on uniform random inputs. Each reports
// bytes/s (bytes_per_second) and, as `of_copy`, the fraction of the copy's bandwidth measured
// in the same run (bandwidth_timing.h).
//
// Timing: CUDA events around bench::kLaunchesPerSample back-to-back launches on one stream,
// after an untimed launch that keeps the GPU busy while the host enqueues the first timed one;
// the first iteration pays for module loading outside the timed region.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bandwidth_timing.h"
#include "braze/codegen/codegen.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/sched/inlining.h"
#include "pointwise_cases.h"
#include "scheduled_case.h"

namespace braze {
// Defined in libbraze_core (core/src/codegen/runtime_headers.h, generated at build time).
namespace codegen {
const std::vector<std::pair<std::string_view, std::string_view>>& runtimeHeaders();
}  // namespace codegen

namespace {

constexpr int64_t kTensorBytes = int64_t{256} << 20;
// Samples per benchmark run (each of bench::kLaunchesPerSample launches): a fixed count keeps
// the run short; repetitions give the spread.
constexpr int kSamples = 20;
constexpr int64_t kElements = kTensorBytes / 4;  // float32

// BRAZE_DUMP, read once: this program is the edge.
const DumpOptions& dumpOptions() {
  static const DumpOptions dump = DumpOptions::fromEnvironment();
  return dump;
}

// Nonzero contents (timing on zeros can flatter a kernel): every float is 0x3C3C3C3C-like.
DeviceTensor filledTensor(uint8_t pattern) {
  DeviceTensor tensor = DeviceTensor::empty(DataType::Float32, {kElements});
  tensor.fillBytes(pattern);
  return tensor;
}

void timeMemcpy(benchmark::State& state, CUstream stream) {
  const DeviceTensor source = filledTensor(0x3C);
  const DeviceTensor target = filledTensor(0x00);
  bench::EventTimer timer(stream);
  double total = 0.0;
  for (auto _ : state) {
    const double seconds = timer.time([&] {
      BRAZE_CU(memcpyDtoDAsync, target.data(), source.data(), static_cast<size_t>(kTensorBytes),
               stream);
    });
    state.SetIterationTime(seconds);
    total += seconds;
  }
  // Read + write, as for the kernels.
  bench::reportBandwidth(state, stream, 2 * kTensorBytes,
                         total / static_cast<double>(state.iterations()));
}

void memcpyDtoD(benchmark::State& state) {
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  bench::guarded(state, [&] { timeMemcpy(state, stream); });
}

// ---- hand-written kernels, launched through KernelExecutor

// The runtime header that declares kernel parameters (braze::Tensor).
std::string runtimeHeaderText() {
  for (const auto& [name, header] : codegen::runtimeHeaders()) {
    if (name == "tensor.cuh") return std::string(header) + "\n";
  }
  return "#error the runtime header tensor.cuh is not embedded\n";
}

// 16-byte accesses, four per thread, each a block-stride apart so a warp's accesses stay
// coalesced; the launch check guarantees every thread has its four.
constexpr const char* kHandKernels = R"(
extern "C" __global__ void __launch_bounds__(256)
hand_copy(braze::Tensor<float, 1, int> a, braze::Tensor<float, 1, int> out) {
  const float4* in4 = reinterpret_cast<const float4*>(a.data);
  float4* out4 = reinterpret_cast<float4*>(out.data);
  const int base = blockIdx.x * 1024 + threadIdx.x;
  float4 v[4];
  #pragma unroll
  for (int k = 0; k < 4; ++k) v[k] = in4[base + k * 256];
  #pragma unroll
  for (int k = 0; k < 4; ++k) out4[base + k * 256] = v[k];
}
extern "C" __global__ void __launch_bounds__(256)
hand_add(braze::Tensor<float, 1, int> a, braze::Tensor<float, 1, int> b,
         braze::Tensor<float, 1, int> out) {
  const float4* a4 = reinterpret_cast<const float4*>(a.data);
  const float4* b4 = reinterpret_cast<const float4*>(b.data);
  float4* out4 = reinterpret_cast<float4*>(out.data);
  const int base = blockIdx.x * 1024 + threadIdx.x;
  float4 x[4];
  float4 y[4];
  #pragma unroll
  for (int k = 0; k < 4; ++k) {
    x[k] = a4[base + k * 256];
    y[k] = b4[base + k * 256];
  }
  #pragma unroll
  for (int k = 0; k < 4; ++k) {
    out4[base + k * 256] = make_float4(x[k].x + y[k].x, x[k].y + y[k].y, x[k].z + y[k].z,
                                       x[k].w + y[k].w);
  }
}
)";

/// A contiguous 1-d fusion with its hand-written kernel: `inputs` float32 tensors, one output.
struct HandKernel {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  GeneratedKernel kernel;
};

HandKernel handKernel(int inputs) {
  using Kind = KernelParameter::Kind;
  HandKernel result;
  Fusion& fusion = *result.fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1);
  TensorView* out = nullptr;
  GeneratedKernel& kernel = result.kernel;
  kernel.parameters.push_back({.kind = Kind::InputTensor,
                               .val = a,
                               .dtype = DataType::Float32,
                               .rank = 1,
                               .fusion_position = 0});
  if (inputs == 1) {
    out = cast(a, DataType::Float32);
    kernel.kernel_name = "hand_copy";
  } else {
    TensorView* b = makeSymbolicTensor(fusion, 1);
    out = add(a, b);
    kernel.kernel_name = "hand_add";
    kernel.parameters.push_back({.kind = Kind::InputTensor,
                                 .val = b,
                                 .dtype = DataType::Float32,
                                 .rank = 1,
                                 .fusion_position = 1});
  }
  fusion.addOutput(out);
  kernel.parameters.push_back({.kind = Kind::OutputTensor,
                               .val = out,
                               .dtype = DataType::Float32,
                               .rank = 1,
                               .fusion_position = 0});
  kernel.source = runtimeHeaderText() + kHandKernels;
  Scalar* n = a->axis(0)->extent();
  kernel.launch.grid[0] = ceil_div(n, 4096);
  kernel.launch.block[0] = fusion.constantIndex(256);
  kernel.launch_checks.emplace_back(
      eq(remainder(n, 4096), 0), "the size must be a multiple of 4096 (256 threads x 4 x float4)");
  for (size_t i = 0; i < kernel.parameters.size(); ++i) kernel.alignments.push_back({i, 16});
  return result;
}

void runExecutor(benchmark::State& state, KernelExecutor& executor, int inputs) {
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  std::vector<ExecutorArgument> arguments;
  std::vector<DeviceTensor> keep;
  for (int i = 0; i < inputs; ++i) {
    keep.push_back(filledTensor(static_cast<uint8_t>(0x3C + i)));
    arguments.emplace_back(keep.back());
  }
  std::vector<DeviceTensor> outputs = {filledTensor(0xFF)};
  bench::EventTimer timer(stream);
  double total = 0.0;
  for (auto _ : state) {
    const double seconds = timer.time([&] { executor.run(arguments, stream, outputs); });
    state.SetIterationTime(seconds);
    total += seconds;
  }
  bench::reportBandwidth(state, stream, (inputs + 1) * kTensorBytes,
                         total / static_cast<double>(state.iterations()));
}

void handPointwise(benchmark::State& state, int inputs) {
  if (bench::benchmarkStream(state) == nullptr) return;
  bench::guarded(state, [&] {
    HandKernel hand = handKernel(inputs);
    CompileOptions options;
    options.dump = dumpOptions();
    KernelExecutor executor(
        *hand.fusion, hand.kernel,
        CompiledKernel::compile(hand.kernel.source, hand.kernel.kernel_name, options),
        ExecutorOptions{.dump = dumpOptions()});
    runExecutor(state, executor, inputs);
  });
}

void handCopy(benchmark::State& state) {
  handPointwise(state, 1);
}
void handAdd(benchmark::State& state) {
  handPointwise(state, 2);
}

// ---- kernels generated from hand-scheduled fusions

// Inputs are read into register caches and the output written from one, so that every load
// and store is 16 bytes wide. Each tensor computed in the kernel is split the same way:
// [n] -> [n/1024 : BIDx, 256 : TIDx, 4 : Vectorize].
void schedulePointwise(Fusion& fusion, const std::vector<TensorView*>& inputs, TensorView* out) {
  TensorView* out_cache = out->cacheBefore();
  out_cache->setMemoryType(MemoryType::Local);
  std::vector<TensorView*> scheduled = {out, out_cache};
  for (TensorView* input : inputs) {
    TensorView* cache = input->cacheAfter();
    cache->setMemoryType(MemoryType::Local);
    scheduled.push_back(cache);
  }
  for (TensorView* tv : scheduled) {
    tv->split(0, 4);
    tv->split(0, 256);
    tv->parallelize(0, ParallelType::BIDx);
    tv->parallelize(1, ParallelType::TIDx);
    tv->parallelize(2, ParallelType::Vectorize);
  }
  inlineMost(fusion);
}

struct GeneratedPointwise {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  std::unique_ptr<KernelExecutor> executor;
};

GeneratedPointwise generatedPointwise(int inputs) {
  GeneratedPointwise result;
  Fusion& fusion = *result.fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1);
  TensorView* out = nullptr;
  std::vector<TensorView*> fusion_inputs = {a};
  if (inputs == 1) {
    out = cast(a, DataType::Float32);
  } else {
    TensorView* b = makeSymbolicTensor(fusion, 1);
    fusion_inputs.push_back(b);
    out = add(a, b);
  }
  fusion.addOutput(out);
  schedulePointwise(fusion, fusion_inputs, out);
  LowerOptions lower_options;
  lower_options.dump_lowering = dumpOptions().lowering;
  GeneratedKernel kernel = generateCuda(fusion, lower_options);
  if (dumpOptions().cuda_kernel) dumpOptions().out() << kernel.source << "\n";
  CompileOptions options;
  options.dump = dumpOptions();
  CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name, options);
  result.executor = std::make_unique<KernelExecutor>(fusion, std::move(kernel), std::move(compiled),
                                                     ExecutorOptions{.dump = dumpOptions()});
  return result;
}

void generatedPointwiseBenchmark(benchmark::State& state, int inputs) {
  if (bench::benchmarkStream(state) == nullptr) return;
  bench::guarded(state, [&] {
    GeneratedPointwise generated = generatedPointwise(inputs);
    runExecutor(state, *generated.executor, inputs);
  });
}

void generatedCopy(benchmark::State& state) {
  generatedPointwiseBenchmark(state, 1);
}
void generatedAdd(benchmark::State& state) {
  generatedPointwiseBenchmark(state, 2);
}

// ---- fusions scheduled by the pointwise plugin

constexpr int64_t kRows = 16384;
constexpr int64_t kColumns = 4096;  // kRows x kColumns float32: 256 MiB

void pluginScheduled(benchmark::State& state, std::unique_ptr<Fusion> (*define)(),
                     const std::vector<bench::InputSpec>& inputs) {
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  bench::guarded(state, [&] {
    bench::ScheduledCase c = bench::scheduleCase(*define(), inputs, "braze::pointwise", stream);
    bench::timeCase(state, c, stream);
  });
}

void pluginAdd(benchmark::State& state) {
  pluginScheduled(state, bench::defineAdd,
                  {{{kRows, kColumns}, DataType::Float32, -1.0f, 1.0f},
                   {{kRows, kColumns}, DataType::Float32, -1.0f, 1.0f}});
}
void pluginGeluBias(benchmark::State& state) {
  pluginScheduled(state, bench::defineGeluBias,
                  {{{2 * kRows, kColumns}, DataType::BFloat16, -3.0f, 3.0f},
                   {{kColumns}, DataType::BFloat16, -0.5f, 0.5f}});
}
void pluginCastChain(benchmark::State& state) {
  pluginScheduled(state, bench::defineCastChain,
                  {{{kRows, kColumns}, DataType::Float32, -4.0f, 4.0f}});
}

// The copy first: the others report their bandwidth as a fraction of it.
BENCHMARK(memcpyDtoD)
    ->Name("memcpy_dtod/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(handCopy)
    ->Name("copy/hand/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(handAdd)
    ->Name("add/hand/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(generatedCopy)
    ->Name("copy/braze/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(generatedAdd)
    ->Name("add/braze/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(pluginAdd)
    ->Name("add/pointwise/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(pluginGeluBias)
    ->Name("gelu_bias/pointwise/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(pluginCastChain)
    ->Name("cast_chain/pointwise/256MiB")
    ->UseManualTime()
    ->Iterations(kSamples)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace braze

BENCHMARK_MAIN();
