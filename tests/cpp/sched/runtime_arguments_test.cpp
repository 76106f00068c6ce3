// argumentProblem and evaluateExtents: arguments that cannot belong to the fusion are refused
// with a reason; the others give the extents of the requested dims.

#include "braze/sched/runtime_arguments.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/error.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"

namespace braze {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TensorArgumentInfo tensorOf(std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  TensorArgumentInfo tensor;
  tensor.sizes = std::move(sizes);
  tensor.strides = std::move(strides);
  tensor.description = "test tensor";
  return tensor;
}

// out[i, j] = x[i, j] * s
struct ScaledFusion {
  Fusion fusion;
  TensorView* out;
  ScaledFusion() {
    TensorView* x = makeSymbolicTensor(fusion, 2);
    Scalar* s = makeInputScalar(fusion, DataType::Float32);
    out = mul(x, s);
    fusion.addOutput(out);
  }
};

TEST(RuntimeArguments, ArgumentProblemNamesCountKindAndRank) {
  ScaledFusion f;
  EXPECT_EQ(argumentProblem(f.fusion, {}), "expected arguments for 2 inputs, found 0");
  EXPECT_THAT(argumentProblem(f.fusion, {ScalarValue(1.0), ScalarValue(1.0)}).value(),
              HasSubstr("input 0 (T0) is a tensor but its argument is a scalar"));
  EXPECT_THAT(argumentProblem(f.fusion, {tensorOf({2, 3}, {3, 1}), tensorOf({1}, {1})}).value(),
              HasSubstr("is a scalar but its argument is a tensor"));
  EXPECT_THAT(argumentProblem(f.fusion, {tensorOf({2, 3}, {1}), ScalarValue(1.0)}).value(),
              HasSubstr("has rank 2 but its argument has 2 sizes and 1 strides"));
  EXPECT_EQ(argumentProblem(f.fusion, {tensorOf({2, 3}, {3, 1}), ScalarValue(1.0)}), std::nullopt);
}

TEST(RuntimeArguments, EvaluateExtentsBindsAndValidates) {
  ScaledFusion f;
  ExpressionEvaluator evaluator;
  const std::vector<std::optional<int64_t>> extents =
      evaluateExtents(f.fusion, {tensorOf({5, 7}, {7, 1}), ScalarValue(2.0)},
                      f.out->logicalNoReductions(), "test scheduler", evaluator);
  EXPECT_EQ(extents, (std::vector<std::optional<int64_t>>{5, 7}));
  // The bound sizes stay in the evaluator.
  EXPECT_EQ(toInt64(evaluator.evaluate(f.out->logical()[1]->extent()).value()), 7);

  Fusion fixed;
  TensorView* x = makeInputTensor(fixed, {.sizes = {4, 8}});
  fixed.addOutput(neg(x));
  ExpressionEvaluator other;
  EXPECT_THAT(
      [&] {
        evaluateExtents(fixed, {tensorOf({4, 9}, {9, 1})}, x->logical(), "test", other);
      },
      ThrowsMessage<Error>(HasSubstr("fixes it to 8")));
}

TEST(RuntimeArguments, ExpandedBroadcastCountsItsExpandedSize) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {1, -1}});
  TensorView* e = expand(x, {int64_t{6}, int64_t{-1}});
  fusion.addOutput(e);
  ExpressionEvaluator evaluator;
  const auto extents =
      evaluateExtents(fusion, {tensorOf({1, 3}, {3, 1})}, e->logical(), "test", evaluator);
  EXPECT_EQ(extents, (std::vector<std::optional<int64_t>>{6, 3}));
}

}  // namespace
}  // namespace braze
