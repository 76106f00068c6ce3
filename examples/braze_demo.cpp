// Braze's main example: defines three fusions a transformer layer is made of (RMS norm,
// softmax, GELU with a bias), prints their IR, and runs them with the CPU reference evaluator
// on random inputs.
//
//   braze_demo [--seed N] [--rows M] [--cols N]

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <string_view>

#include "braze/braze.h"

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

// y = x * rsqrt(mean(x^2) + eps) * weight, computed in float32 for bfloat16 data.
std::unique_ptr<braze::Fusion> defineRmsNorm() {
  using namespace braze;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::BFloat16, .sizes = {-1, -1}});
  TensorView* weight = makeInputTensor(*fusion, {.dtype = DataType::BFloat16, .sizes = {-1}});
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* mean_square = mean(mul(xf, xf), {-1}, /*keepdim=*/true);
  TensorView* normalized = mul(xf, rsqrt(add(mean_square, 1e-6)));
  fusion->addOutput(cast(mul(normalized, cast(weight, DataType::Float32)), DataType::BFloat16));
  return fusion;
}

// Numerically stable softmax over the last dim.
std::unique_ptr<braze::Fusion> defineSoftmax() {
  using namespace braze;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::Float32);
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
  fusion->addOutput(gelu(add(x, bias), GeluApproximation::Tanh));
  return fusion;
}

void printValues(const braze::HostTensor& tensor, int64_t count) {
  std::cout << "  " << tensor.describe() << ", first values:";
  for (int64_t i = 0; i < std::min(count, tensor.numel()); ++i) {
    std::cout << ' ' << std::setprecision(5) << braze::toDouble(tensor.atFlat(i));
  }
  std::cout << '\n';
}

void runDemo(const std::string& title, const braze::Fusion& fusion,
             const std::vector<braze::HostTensor>& inputs) {
  std::cout << "== " << title << " ==\n" << braze::printMath(fusion);
  std::cout << "evaluated on the CPU reference evaluator:\n";
  for (const braze::HostTensor& output : braze::evaluateFusionTensors(fusion, inputs)) {
    printValues(output, 6);
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
    runDemo("RMS norm", *defineRmsNorm(),
            {randomTensor(rng, DataType::BFloat16, {m, n}),
             randomTensor(rng, DataType::BFloat16, {n})});
    runDemo("softmax", *defineSoftmax(), {randomTensor(rng, DataType::Float32, {m, n})});
    runDemo(
        "GELU with bias", *defineGeluBias(),
        {randomTensor(rng, DataType::Float16, {m, n}), randomTensor(rng, DataType::Float16, {n})});
  } catch (const braze::Error& error) {
    std::cerr << "braze_demo: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
