// Scans through the reference evaluator: cumsum, cumprod, cummax and cummin along first, last,
// middle and negative dims of strided inputs, integer and bool dtype rules, nan propagation and
// expanded broadcasts; expected values come from running plain loops over the input.

#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::RandomTensors;
using test::tensorOf;
using test::valuesOf;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

using Sizes = std::vector<int64_t>;
using Step = std::function<double(double, double)>;

/// Row-major `values` of `sizes`, each line along `dim` replaced by its running `step`.
std::vector<double> runningAlong(std::vector<double> values, const Sizes& sizes, int64_t dim,
                                 const Step& step) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t length = sizes[static_cast<size_t>(dim)];
  const auto total = static_cast<int64_t>(values.size());
  for (int64_t base = 0; base < total; ++base) {
    if ((base / inner) % length != 0) continue;  // not the first element of its line
    for (int64_t k = 1; k < length; ++k) {
      const int64_t at = base + k * inner;
      values[at] = step(values[at - inner], values[at]);
    }
  }
  return values;
}

double maxStep(double acc, double v) {
  return std::isnan(acc) || std::isnan(v) ? kNan : std::max(acc, v);
}
double minStep(double acc, double v) {
  return std::isnan(acc) || std::isnan(v) ? kNan : std::min(acc, v);
}

TEST(EvaluateScan, EveryScanAlongEveryDim) {
  const Sizes sizes = {3, 4, 5};
  RandomTensors random(7);
  const HostTensor input = random.uniform(DataType::Float64, sizes);
  for (int64_t dim = -3; dim < 3; ++dim) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 3, DataType::Float64);
    fusion.addOutput(cumsum(x, dim));
    fusion.addOutput(cumprod(x, dim));
    fusion.addOutput(cummax(x, dim));
    fusion.addOutput(cummin(x, dim));
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
    const int64_t d = dim < 0 ? dim + 3 : dim;
    const std::vector<double> v = valuesOf(input);
    expectClose(out[0], {DataType::Float64, sizes, runningAlong(v, sizes, d, std::plus<>())});
    expectClose(out[1], {DataType::Float64, sizes, runningAlong(v, sizes, d, std::multiplies<>())});
    expectClose(out[2], {DataType::Float64, sizes, runningAlong(v, sizes, d, maxStep)});
    expectClose(out[3], {DataType::Float64, sizes, runningAlong(v, sizes, d, minStep)});
  }
}

TEST(EvaluateScan, StridedInputsScanTheirLogicalOrder) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  fusion.addOutput(cumsum(permute(x, {1, 0}), 1));
  const HostTensor input = tensorOf(DataType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  // permuted: [[1, 4], [2, 5], [3, 6]]
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {3, 2}, {1, 5, 2, 7, 3, 9}});
}

TEST(EvaluateScan, IntegersAndBoolsSumInInt64) {
  Fusion fusion;
  TensorView* i = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Bool);
  fusion.addOutput(cumsum(i, 0));
  fusion.addOutput(cumprod(i, 0));
  fusion.addOutput(cumsum(b, 0));
  fusion.addOutput(cummax(b, 0));
  fusion.addOutput(cummin(i, 0));
  // Past int32: the int64 results must hold them.
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {tensorOf(DataType::Int32, {4}, {2e9, 2, -3, 1}),
                                     tensorOf(DataType::Bool, {4}, {0, 1, 0, 1})});
  expectClose(out[0], {DataType::Int64, {4}, {2e9, 2e9 + 2, 2e9 - 1, 2e9}});
  expectClose(out[1], {DataType::Int64, {4}, {2e9, 4e9, -12e9, -12e9}});
  expectClose(out[2], {DataType::Int64, {4}, {0, 1, 1, 2}});
  expectClose(out[3], {DataType::Bool, {4}, {0, 1, 1, 1}});
  expectClose(out[4], {DataType::Int32, {4}, {2e9, 2, -3, -3}});
}

TEST(EvaluateScan, NanPropagatesFromItsPosition) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(cummax(x, 0));
  fusion.addOutput(cummin(x, 0));
  fusion.addOutput(cumsum(x, 0));
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {tensorOf(DataType::Float32, {4}, {1, kNan, 5, -2})});
  expectClose(out[0], {DataType::Float32, {4}, {1, kNan, kNan, kNan}});
  expectClose(out[1], {DataType::Float32, {4}, {1, kNan, kNan, kNan}});
  expectClose(out[2], {DataType::Float32, {4}, {1, kNan, kNan, kNan}});
}

TEST(EvaluateScan, ReducedPrecisionRoundsEachPrefixOnce) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float16);
  fusion.addOutput(cumsum(x, 0));
  // 2048 + 1 is not a float16; summed in float32, the two ones still count.
  const HostTensor input = tensorOf(DataType::Float16, {3}, {2048, 1, 1});
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float16, {3}, {2048, 2048, 2050}});
}

TEST(EvaluateScan, ExpandedBroadcastGrowsAlongTheDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  fusion.addOutput(cumsum(expand(x, {Operand(int64_t{-1}), Operand(int64_t{4})}), 1));
  const HostTensor input = tensorOf(DataType::Float32, {2, 1}, {1.5, -2});
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {2, 4}, {1.5, 3, 4.5, 6, -2, -4, -6, -8}});
}

TEST(EvaluateScan, IndicesAsPyTorchGivesThem) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  TensorView* i = makeSymbolicTensor(fusion, 1, DataType::Int32);
  for (const ScanWithIndices& scan : {cummaxWithIndices(x, 1), cumminWithIndices(x, -1),
                                      cummaxWithIndices(i, 0), cumminWithIndices(i, 0)}) {
    fusion.addOutput(scan.values);
    fusion.addOutput(scan.indices);
  }
  const std::vector<HostTensor> out = evaluateFusionTensors(
      fusion, {tensorOf(DataType::Float32, {2, 6}, {3, 1, 3, kNan, 5, kNan, 2, 2, 1, 4, 1, 0}),
               tensorOf(DataType::Int32, {4}, {5, 7, 7, 1})});
  // Equal extremes: the last one; from the first nan on: that nan.
  expectClose(out[0], {DataType::Float32, {2, 6}, {3, 3, 3, kNan, kNan, kNan, 2, 2, 2, 4, 4, 4}});
  expectClose(out[1], {DataType::Int64, {2, 6}, {0, 0, 2, 3, 3, 3, 0, 1, 1, 3, 3, 3}});
  expectClose(out[2], {DataType::Float32, {2, 6}, {3, 1, 1, kNan, kNan, kNan, 2, 2, 1, 1, 1, 0}});
  expectClose(out[3], {DataType::Int64, {2, 6}, {0, 1, 1, 3, 3, 3, 0, 1, 2, 2, 4, 5}});
  expectClose(out[4], {DataType::Int32, {4}, {5, 7, 7, 7}});
  expectClose(out[5], {DataType::Int64, {4}, {0, 1, 2, 2}});
  expectClose(out[6], {DataType::Int32, {4}, {5, 5, 5, 1}});
  expectClose(out[7], {DataType::Int64, {4}, {0, 0, 0, 3}});
}

TEST(EvaluateScan, EmptyDimsGiveEmptyResults) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  fusion.addOutput(cumsum(x, 1));
  fusion.addOutput(cummax(x, 0));
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {tensorOf(DataType::Float32, {3, 0}, {})});
  EXPECT_EQ(out[0].sizes(), (Sizes{3, 0}));
  EXPECT_EQ(out[1].sizes(), (Sizes{3, 0}));
}

}  // namespace
}  // namespace braze
