// Braze's main example: defines four fusions a transformer layer is made of (RMS norm, softmax,
// GELU with a bias, and a softmax of column-centred scores that no single scheduler takes),
// prints their IR, evaluates them with the CPU reference evaluator on random inputs, then runs
// each through one call, FusionExecutorCache::run: Braze segments the fusion where it must,
// picks a scheduler plugin for each segment, compiles the kernels and runs them. It prints each
// fusion's segments with the scheduler and params chosen, and the largest difference from the
// reference. Without a GPU the kernels are compiled for sm_90 and the segments run on the CPU
// reference evaluator. Compiled kernels persist in the kernel cache (BRAZE_CACHE_DIR, default
// ~/.cache/braze; "off" turns it off): a second run calls NVRTC for none of them.
//
//   braze_demo [--seed N] [--rows M] [--cols N]

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <string_view>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/nvrtc_compiler.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"

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

// softmax(x - mean(x, dim 0)) over rows: the column mean reduces over the rows and the softmax
// over each row, so no one kernel computes both; Braze runs it as two segments.
std::unique_ptr<braze::Fusion> defineCenteredSoftmax() {
  using namespace braze;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* centered = sub(x, mean(x, {0}, /*keepdim=*/true));
  TensorView* e = exp(sub(centered, amax(centered, {-1}, /*keepdim=*/true)));
  fusion->addOutput(div(e, sum(e, {-1}, /*keepdim=*/true)));
  return fusion;
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

void runDemo(const std::string& title, std::unique_ptr<braze::Fusion> fusion,
             const std::vector<braze::HostTensor>& inputs, const braze::DumpOptions& dump) {
  using namespace braze;
  std::cout << "== " << title << " ==\n" << printMath(*fusion);
  if (dump.fusion) dump.out() << "=== fusion " << title << "\n" << printMath(*fusion);
  std::cout << "evaluated on the CPU reference evaluator:\n";
  const std::vector<HostTensor> expected = evaluateFusionTensors(*fusion, inputs);
  for (const HostTensor& output : expected) printValues(output, 6);

  std::string no_gpu;
  const bool has_gpu = driver::isDriverAvailable(&no_gpu);
  FusionExecutorCache cache(std::move(fusion));
  RunOptions options;
  options.dump = dump;
  std::vector<FusionArgument> arguments;
  for (const HostTensor& input : inputs) {
    if (has_gpu) {
      arguments.emplace_back(DeviceTensor::fromHost(input));
    } else {
      arguments.emplace_back(input);
    }
  }
  const std::vector<FusionArgument> outputs = cache.run(arguments, options);
  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  const size_t segments = runtime->segmentation().segments.size();
  const ExecutorCacheCounters counters = cache.counters();
  std::cout << "FusionExecutorCache::run: " << segments
            << (segments == 1 ? " segment" : " segments") << ", compiled for "
            << runtime->kernels().front().executor->compiledKernel().arch().toString() << " in "
            << std::fixed << std::setprecision(0) << runtime->compileSeconds() * 1e3 << " ms ("
            << counters.kernels_from_store << " of " << counters.kernels_compiled
            << " kernels from the kernel cache"
            << (counters.runtimes_restored ? "; segmentation and params restored" : "") << ")\n"
            << std::defaultfloat;
  for (size_t s = 0; s < segments; ++s) {
    const FusionKernelRuntime::SegmentKernel& kernel = runtime->kernels()[s];
    const CompiledKernel& compiled = kernel.executor->compiledKernel();
    std::cout << "  segment " << s << ": " << kernel.choice.scheduler->id << "@"
              << kernel.choice.scheduler->version << " " << kernel.choice.summary << "\n"
              << "    kernel " << compiled.kernelName();
    if (compiled.resources().reported)
      std::cout << " (" << compiled.resources().registers << " registers)";
    std::cout << '\n';
  }
  if (!has_gpu) {
    std::cout << "no GPU here (" << no_gpu
              << "), so each segment ran on the CPU reference evaluator:\n";
  } else {
    std::cout << "ran on the GPU (" << driver::deviceProperties().name << "):\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor actual =
        has_gpu ? std::get<DeviceTensor>(outputs[i]).toHost() : std::get<HostTensor>(outputs[i]);
    printValues(actual, 6);
    std::cout << "  max |result - CPU reference| = " << maxAbsDifference(actual, expected[i])
              << '\n';
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
    braze::serde::useDefaultPersistentCache();
    runDemo(
        "RMS norm", defineRmsNorm(n),
        {randomTensor(rng, DataType::BFloat16, {m, n}), randomTensor(rng, DataType::BFloat16, {n})},
        dump);
    runDemo("softmax", defineSoftmax(n), {randomTensor(rng, DataType::Float32, {m, n})}, dump);
    runDemo(
        "GELU with bias", defineGeluBias(),
        {randomTensor(rng, DataType::Float16, {m, n}), randomTensor(rng, DataType::Float16, {n})},
        dump);
    runDemo("softmax of column-centred scores", defineCenteredSoftmax(),
            {randomTensor(rng, DataType::Float32, {m, n})}, dump);
  } catch (const braze::Error& error) {
    std::cerr << "braze_demo: " << error.what() << '\n';
    return 1;
  }
  std::cout << "NVRTC compiles in this process: " << braze::driver::nvrtcCompileCount() << '\n';
  if (const auto directory = braze::serde::defaultCacheDirectory())
    std::cout << "kernel cache: " << directory->string() << " (braze cache ls lists it)\n";
  return 0;
}
