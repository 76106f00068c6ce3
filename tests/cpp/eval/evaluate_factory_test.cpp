// full, zeros, ones, iota and arange through the reference evaluator, with constant and
// scalar-input sizes and integer and float steps.

#include <cmath>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"
#include "support/reference_loops.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::RandomTensors;
using test::valuesOf;

TEST(EvaluateFactory, FullOfEveryDtype) {
  for (DataType dtype : {DataType::Float32, DataType::Float64, DataType::Float16,
                         DataType::BFloat16, DataType::Int32, DataType::Int64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    fusion.addOutput(full(fusion, {2, 3}, 2.75, dtype));
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {});
    ASSERT_EQ(out.size(), 1u);
    // Integers truncate 2.75 to 2.
    const double value = isIntegral(dtype) ? 2.0 : 2.75;
    expectClose(out[0], {dtype, {2, 3}, std::vector<double>(6, value)});
  }
}

TEST(EvaluateFactory, FullRoundsTheValueToTheDtype) {
  Fusion fusion;
  fusion.addOutput(full(fusion, {3}, 0.1, DataType::Float16));
  fusion.addOutput(full(fusion, {3}, 0.1, DataType::BFloat16));
  fusion.addOutput(full(fusion, {2}, true, DataType::Bool));
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {});
  expectClose(
      out[0],
      {DataType::Float16, {3}, std::vector<double>(3, test::roundTo(DataType::Float16, 0.1))},
      test::Tolerance{});
  expectClose(
      out[1],
      {DataType::BFloat16, {3}, std::vector<double>(3, test::roundTo(DataType::BFloat16, 0.1))},
      test::Tolerance{});
  expectClose(out[2], {DataType::Bool, {2}, {1, 1}});
}

TEST(EvaluateFactory, FullWithScalarInputSizeAndValue) {
  Fusion fusion;
  Scalar* rows = makeInputScalar(fusion, DataType::Int64);
  Scalar* value = makeInputScalar(fusion, DataType::Float64);
  fusion.addOutput(full(fusion, {rows, 4}, value, DataType::Float32));
  const std::vector<EvaluatorArgument> out =
      evaluateFusion(fusion, {ScalarValue(int64_t{3}), ScalarValue(-1.5)});
  expectClose(std::get<HostTensor>(out[0]),
              {DataType::Float32, {3, 4}, std::vector<double>(12, -1.5)});
}

TEST(EvaluateFactory, FullSizedLikeAnInputAndUsedInArithmetic) {
  // A user adds a constant tensor to an input: sizes come from the input's dims.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* offsets = full(fusion, {4, 3}, 0.25, DataType::Float32);
  fusion.addOutput(add(x, offsets));
  RandomTensors random(81);
  const HostTensor input = random.uniform(DataType::Float32, {4, 3});
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {4, 3}, test::mapValues(valuesOf(input), [](double v) {
                 return v + 0.25;
               })});
}

TEST(EvaluateFactory, ZerosAndOnes) {
  Fusion fusion;
  fusion.addOutput(zeros(fusion, {2, 2}, DataType::Float32));
  fusion.addOutput(ones(fusion, {3}, DataType::Int32));
  fusion.addOutput(ones(fusion, {2, 1, 2}, DataType::BFloat16));
  fusion.addOutput(zeros(fusion, {}, DataType::Float64));
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {});
  ASSERT_EQ(out.size(), 4u);
  expectClose(out[0], {DataType::Float32, {2, 2}, {0, 0, 0, 0}});
  expectClose(out[1], {DataType::Int32, {3}, {1, 1, 1}});
  expectClose(out[2], {DataType::BFloat16, {2, 1, 2}, {1, 1, 1, 1}});
  expectClose(out[3], {DataType::Float64, {}, {0}});
}

TEST(EvaluateFactory, IotaDefaultsAndSteps) {
  Fusion fusion;
  fusion.addOutput(iota(fusion, 5));
  fusion.addOutput(iota(fusion, 5, 2, 3));
  fusion.addOutput(iota(fusion, 4, 10, -4, DataType::Int32));
  fusion.addOutput(iota(fusion, 4, 0.5, 0.25, DataType::Float32));
  fusion.addOutput(iota(fusion, 1, 7));
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {});
  ASSERT_EQ(out.size(), 5u);
  expectClose(out[0], {DataType::Int64, {5}, {0, 1, 2, 3, 4}});
  expectClose(out[1], {DataType::Int64, {5}, {2, 5, 8, 11, 14}});
  expectClose(out[2], {DataType::Int32, {4}, {10, 6, 2, -2}});
  expectClose(out[3], {DataType::Float32, {4}, {0.5, 0.75, 1.0, 1.25}});
  expectClose(out[4], {DataType::Int64, {1}, {7}});
}

TEST(EvaluateFactory, IotaWithScalarInputLength) {
  Fusion fusion;
  Scalar* length = makeInputScalar(fusion, DataType::Int64);
  Scalar* start = makeInputScalar(fusion, DataType::Float64);
  fusion.addOutput(iota(fusion, length, start, 0.5, DataType::Float64));
  const std::vector<EvaluatorArgument> out =
      evaluateFusion(fusion, {ScalarValue(int64_t{6}), ScalarValue(-1.0)});
  expectClose(std::get<HostTensor>(out[0]),
              {DataType::Float64, {6}, {-1.0, -0.5, 0.0, 0.5, 1.0, 1.5}});
}

/// torch.arange's values: start + i * step for i < ceil((end - start) / step).
std::vector<double> arangeValues(double start, double end, double step) {
  const auto length = static_cast<int64_t>(std::ceil((end - start) / step));
  std::vector<double> values;
  for (int64_t i = 0; i < length; ++i) values.push_back(start + static_cast<double>(i) * step);
  return values;
}

TEST(EvaluateFactory, ArangeIntegerRanges) {
  Fusion fusion;
  fusion.addOutput(arange(fusion, 0, 5));
  fusion.addOutput(arange(fusion, 2, 11, 3));
  fusion.addOutput(arange(fusion, 5, 0, -1));
  fusion.addOutput(arange(fusion, -3, 4, 2, DataType::Int32));
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {});
  ASSERT_EQ(out.size(), 4u);
  expectClose(out[0], {DataType::Int64, {5}, {0, 1, 2, 3, 4}});
  expectClose(out[1], {DataType::Int64, {3}, {2, 5, 8}});
  expectClose(out[2], {DataType::Int64, {5}, {5, 4, 3, 2, 1}});
  expectClose(out[3], {DataType::Int32, {4}, {-3, -1, 1, 3}});
}

TEST(EvaluateFactory, ArangeWithFloatSteps) {
  struct Range {
    double start, end, step;
  };
  for (Range r : {Range{0.0, 1.0, 0.1}, Range{0.0, 1.0, 0.3}, Range{-1.0, 1.0, 0.25},
                  Range{2.0, -1.0, -0.7}, Range{0.5, 0.6, 1.0}}) {
    SCOPED_TRACE(std::to_string(r.start) + ":" + std::to_string(r.end) + ":" +
                 std::to_string(r.step));
    Fusion fusion;
    fusion.addOutput(arange(fusion, r.start, r.end, r.step, DataType::Float32));
    fusion.addOutput(arange(fusion, r.start, r.end, r.step, DataType::Float64));
    const std::vector<double> expected = arangeValues(r.start, r.end, r.step);
    const auto length = static_cast<int64_t>(expected.size());
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {});
    expectClose(out[0], {DataType::Float32, {length}, expected});
    expectClose(out[1], {DataType::Float64, {length}, expected});
  }
}

TEST(EvaluateFactory, ArangeWithScalarInputEnd) {
  Fusion fusion;
  Scalar* end = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(arange(fusion, 1, end, 2));
  const std::vector<EvaluatorArgument> out = evaluateFusion(fusion, {ScalarValue(int64_t{8})});
  expectClose(std::get<HostTensor>(out[0]), {DataType::Int64, {4}, {1, 3, 5, 7}});
}

TEST(EvaluateFactory, IotaIndexesATensor) {
  // iota as a user writes it: positions along a dim, compared with an input.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {6}});
  fusion.addOutput(eq(x, iota(fusion, 6)));
  const HostTensor input = test::tensorOf(DataType::Int64, {6}, {0, 2, 2, 3, 0, 5});
  expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Bool, {6}, {1, 0, 1, 1, 0, 1}});
}

}  // namespace
}  // namespace braze
