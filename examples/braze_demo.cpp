// Braze's main example: defines three fusions a transformer layer is made of (RMS norm,
// softmax, GELU with a bias), prints their IR, evaluates them with the CPU reference evaluator
// on random inputs, then schedules each (the pointwise GELU through the pointwise scheduler
// plugin, the two row reductions by hand until their plugins exist), generates and compiles
// its CUDA kernel, and —
// when a GPU is present — runs it and compares with the reference. Without a GPU the kernels
// are compiled for sm_90 and only the CPU results are shown.
//
//   braze_demo [--seed N] [--rows M] [--cols N]

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <string_view>

#include "braze/braze.h"
#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/argument_binding.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/sched/inlining.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/schedule_printer.h"
#include "braze/sched/transform_propagation.h"

namespace {

struct DemoOptions {
  uint64_t seed = 2026;
  int64_t rows = 4;
  int64_t cols = 1024;
};

DemoOptions parseOptions(int argc, char** argv) {
  DemoOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> int64_t {
      if (i + 1 >= argc) {
        std::cerr << "braze_demo: " << flag << " needs a value\n";
        std::exit(2);
      }
      return std::stoll(argv[++i]);
    };
    if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(value());
    } else if (flag == "--rows") {
      options.rows = value();
    } else if (flag == "--cols") {
      options.cols = value();
    } else {
      std::cerr << "braze_demo: unknown flag " << flag << "; use --seed N, --rows M, --cols N\n";
      std::exit(2);
    }
  }
  if (options.rows <= 0 || options.cols <= 0) {
    std::cerr << "braze_demo: --rows and --cols must be positive\n";
    std::exit(2);
  }
  return options;
}

braze::HostTensor randomTensor(std::mt19937_64& rng, braze::DataType dtype,
                               std::vector<int64_t> sizes) {
  std::normal_distribution<double> normal(0.0, 1.0);
  braze::HostTensor tensor = braze::HostTensor::empty(dtype, std::move(sizes));
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.setFlat(i, normal(rng));
  return tensor;
}

// y = x * rsqrt(mean(x^2) + eps) * weight, computed in float32 for bfloat16 data. The row
// length is part of the definition (a model's hidden size), so each thread keeps its share of
// a row in registers between the reduction and the normalization.
std::unique_ptr<braze::Fusion> defineRmsNorm(int64_t n) {
  using namespace braze;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::BFloat16, .sizes = {-1, n}});
  TensorView* weight = makeInputTensor(*fusion, {.dtype = DataType::BFloat16, .sizes = {n}});
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* mean_square = mean(mul(xf, xf), {-1}, /*keepdim=*/true);
  TensorView* normalized = mul(xf, rsqrt(add(mean_square, 1e-6)));
  TensorView* scale = cast(broadcast(weight, {true, false}), DataType::Float32);
  fusion->addOutput(cast(mul(normalized, scale), DataType::BFloat16));
  return fusion;
}

// Numerically stable softmax over rows of length n.
std::unique_ptr<braze::Fusion> defineSoftmax(int64_t n) {
  using namespace braze;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {-1, n}});
  TensorView* e = exp(sub(x, amax(x, {-1}, /*keepdim=*/true)));
  fusion->addOutput(div(e, sum(e, {-1}, /*keepdim=*/true)));
  return fusion;
}

// gelu(x + bias) with the tanh approximation, float16 in and out.
std::unique_ptr<braze::Fusion> defineGeluBias() {
  using namespace braze;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* bias = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1}});
  fusion->addOutput(gelu(add(x, broadcast(bias, {true, false})), GeluApproximation::Tanh));
  return fusion;
}

// Intermediates live in registers; fusion inputs and outputs stay in global memory.
void keepIntermediatesInRegisters(braze::Fusion& fusion) {
  for (braze::TensorView* tv : fusion.allTensors()) {
    if (!fusion.isInput(tv) && !fusion.isOutput(tv)) tv->setMemoryType(braze::MemoryType::Local);
  }
}

// One block per row, 128 threads striding over the row: the reductions become block
// reductions and every intermediate stays in registers.
void scheduleRowPerBlock(braze::Fusion& fusion) {
  using namespace braze;
  auto* y = fusion.outputs()[0]->as<TensorView>();
  y->split(1, 128);
  propagateTransforms(y);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(y);
  keepIntermediatesInRegisters(fusion);
  inlineMost(fusion);
}

void printValues(const braze::HostTensor& tensor, int64_t count) {
  std::cout << "  " << tensor.describe() << ", first values:";
  for (int64_t i = 0; i < std::min(count, tensor.numel()); ++i) {
    std::cout << ' ' << std::setprecision(5) << braze::toDouble(tensor.atFlat(i));
  }
  std::cout << '\n';
}

double maxAbsDifference(const braze::HostTensor& a, const braze::HostTensor& b) {
  double worst = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, std::abs(braze::toDouble(a.atFlat(i)) - braze::toDouble(b.atFlat(i))));
  }
  return worst;
}

// BRAZE_DUMP (fusion, scheduled, lowering, cuda_kernel, ptx, compile_log, launch_params) is
// read once here, at the program's edge, and passed down.
// Turns a fusion definition into a scheduled copy for these inputs.
using Scheduler = std::function<std::unique_ptr<braze::Fusion>(
    const std::function<std::unique_ptr<braze::Fusion>()>& define,
    const std::vector<braze::HostTensor>& inputs)>;

Scheduler byHand(void (*schedule)(braze::Fusion&)) {
  return [schedule](const auto& define, const auto& /*inputs*/) {
    std::unique_ptr<braze::Fusion> fusion = define();
    schedule(*fusion);
    std::cout << "scheduled by hand\n";
    return fusion;
  };
}

// Asks the scheduler registry (plugins in BRAZE_PLUGIN_PATH, the user's and the install
// prefix's plugin folders, the build tree) for the scheduler `name`, with the inputs' sizes,
// strides and alignment.
Scheduler byPlugin(const braze::SchedulerRegistry& registry, std::string name) {
  return [&registry, name](const auto& define, const auto& inputs) {
    using namespace braze;
    SchedulerRuntimeInfo info;
    info.device =
        driver::isDriverAvailable() ? driver::deviceProperties() : driver::h100Properties();
    for (const HostTensor& input : inputs) {
      info.arguments.emplace_back(argumentInfoOf(input));
      info.data_alignments.push_back(16);  // fresh device allocations are 256-byte aligned
    }
    ScheduledFusion scheduled = registry.schedule(*define(), info, name);
    std::cout << "scheduled by the plugin " << scheduled.scheduler->id << "@"
              << scheduled.scheduler->version << ": " << scheduled.summary << '\n';
    return std::move(scheduled.fusion);
  };
}

void runDemo(const std::string& title,
             const std::function<std::unique_ptr<braze::Fusion>()>& define,
             const Scheduler& scheduler, const std::vector<braze::HostTensor>& inputs,
             const braze::DumpOptions& dump) {
  using namespace braze;
  const std::unique_ptr<Fusion> fusion = define();
  std::cout << "== " << title << " ==\n" << printMath(*fusion);
  if (dump.fusion) dump.out() << "=== fusion " << title << "\n" << printMath(*fusion);
  std::cout << "evaluated on the CPU reference evaluator:\n";
  const std::vector<HostTensor> expected = evaluateFusionTensors(*fusion, inputs);
  for (const HostTensor& output : expected) printValues(output, 6);

  std::unique_ptr<Fusion> scheduled = scheduler(define, inputs);
  if (dump.scheduled)
    dump.out() << "=== schedule of " << title << "\n" << printSchedule(*scheduled);
  LowerOptions lower_options;
  lower_options.dump_lowering = dump.lowering;
  lower_options.dump_stream = dump.stream;
  GeneratedKernel kernel = generateCuda(*scheduled, lower_options);
  if (dump.cuda_kernel) dump.out() << "=== CUDA of " << title << "\n" << kernel.source << "\n";
  std::string no_gpu;
  const bool has_gpu = driver::isDriverAvailable(&no_gpu);
  CompileOptions options;
  options.dump = dump;
  if (!has_gpu) options.arch = driver::GpuArch{9, 0, false};
  CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name, options);
  std::cout << "generated " << kernel.kernel_name << ", compiled for "
            << compiled.arch().toString();
  if (compiled.resources().reported) {
    std::cout << " (" << compiled.resources().registers << " registers)";
  }
  std::cout << '\n';
  if (!has_gpu) {
    std::cout << "no GPU here, so only the CPU results are shown (" << no_gpu << ")\n\n";
    return;
  }
  ExecutorOptions executor_options;
  executor_options.dump = dump;
  KernelExecutor executor(*scheduled, std::move(kernel), std::move(compiled), executor_options);
  std::vector<ExecutorArgument> device_inputs;
  for (const HostTensor& input : inputs) device_inputs.push_back(DeviceTensor::fromHost(input));
  const std::vector<DeviceTensor> outputs = executor.run(device_inputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor actual = outputs[i].toHost();
    std::cout << "ran on the GPU (" << driver::deviceProperties().name << "):\n";
    printValues(actual, 6);
    std::cout << "  max |GPU - CPU reference| = " << maxAbsDifference(actual, expected[i]) << '\n';
  }
  std::cout << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  const DemoOptions options = parseOptions(argc, argv);
  std::mt19937_64 rng(options.seed);
  const int64_t m = options.rows;
  const int64_t n = options.cols;
  try {
    using braze::DataType;
    const braze::DumpOptions dump = braze::DumpOptions::fromEnvironment();
    const braze::SchedulerRegistry registry;
    runDemo(
        "RMS norm", [n] { return defineRmsNorm(n); }, byHand(scheduleRowPerBlock),
        {randomTensor(rng, DataType::BFloat16, {m, n}), randomTensor(rng, DataType::BFloat16, {n})},
        dump);
    runDemo(
        "softmax", [n] { return defineSoftmax(n); }, byHand(scheduleRowPerBlock),
        {randomTensor(rng, DataType::Float32, {m, n})}, dump);
    runDemo(
        "GELU with bias", defineGeluBias, byPlugin(registry, "pointwise"),
        {randomTensor(rng, DataType::Float16, {m, n}), randomTensor(rng, DataType::Float16, {n})},
        dump);
  } catch (const braze::Error& error) {
    std::cerr << "braze_demo: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
