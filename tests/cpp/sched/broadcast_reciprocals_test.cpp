// multiplyByBroadcastReciprocals: a / broadcast(s) becomes a * broadcast(1 / s) for floats, and
// a / n by a scalar a * (1 / n); the tensor keeps its identity (outputs and readers unchanged),
// and values stay within an ulp.

#include "braze/sched/broadcast_reciprocals.h"

#include <gtest/gtest.h>

#include <cmath>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "sched/fusion_fixtures.h"
#include "support/random_tensor.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

TEST(MultiplyByBroadcastReciprocals, SoftmaxDividesOncePerRow) {
  const test::SoftmaxFusion s = test::makeSoftmax();
  const std::unique_ptr<Fusion> original = s.fusion->clone();
  EXPECT_EQ(multiplyByBroadcastReciprocals(*s.fusion), 1);

  // The output is the same tensor, now a product of exp and a broadcast reciprocal of the sum.
  ASSERT_EQ(s.fusion->outputs().size(), 1u);
  EXPECT_EQ(s.fusion->outputs()[0], s.y);
  const Expr* product = s.y->definition();
  ASSERT_NE(product, nullptr);
  EXPECT_EQ(product->op(), OpKind::Mul);
  EXPECT_EQ(product->input(0), s.exp);
  const Expr* inverse_broadcast = product->input(1)->definition();
  ASSERT_EQ(inverse_broadcast->op(), OpKind::Broadcast);
  const Expr* inverse = inverse_broadcast->input(0)->definition();
  EXPECT_EQ(inverse->op(), OpKind::Reciprocal);
  EXPECT_EQ(inverse->input(0), s.sum);
  // The old broadcast of the sum lost its only reader, so nothing reaches it any more.
  EXPECT_TRUE(s.sum_b->uses().empty());
  EXPECT_EQ(s.sum_b->definition(), nullptr);
  for (const Expr* expr : s.fusion->exprs()) EXPECT_NE(expr->op(), OpKind::Div);
  EXPECT_EQ(s.sum->uses().size(), 1u);

  // Same values within an ulp or two, on random rows; the rewritten fusion also clones.
  test::RandomTensors random(7);
  const HostTensor x = random.uniform(DataType::Float32, {9, 301});
  const std::vector<double> want =
      test::valuesOf(std::get<HostTensor>(evaluateFusion(*original, {x})[0]));
  const std::unique_ptr<Fusion> copy = s.fusion->clone();
  const std::vector<double> got =
      test::valuesOf(std::get<HostTensor>(evaluateFusion(*copy, {x})[0]));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2.5e-7 * std::abs(want[i])) << "element " << i;
  }
}

TEST(MultiplyByBroadcastReciprocals, KeepsABroadcastOtherOpsStillRead) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::Float32);
  TensorView* s_b = broadcast(sum(x, {1}), {false, true});
  fusion->addOutput(div(x, s_b));
  fusion->addOutput(add(x, s_b));
  EXPECT_EQ(multiplyByBroadcastReciprocals(*fusion), 1);
  ASSERT_NE(s_b->definition(), nullptr);
  EXPECT_EQ(s_b->definition()->op(), OpKind::Broadcast);
  EXPECT_EQ(s_b->uses().size(), 1u);
}

// A mean's division by the row length (a size of the input, an integer scalar) becomes a
// product with the float reciprocal of the length, which the kernel computes once.
TEST(MultiplyByBroadcastReciprocals, DivisionsByAScalarMultiplyByItsReciprocal) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::Float32);
  Scalar* n = x->axis(1)->extent();
  TensorView* mean = div(sum(x, {1}), n);
  fusion->addOutput(mean);
  const std::unique_ptr<Fusion> original = fusion->clone();
  EXPECT_EQ(multiplyByBroadcastReciprocals(*fusion), 1);
  const Expr* product = mean->definition();
  ASSERT_EQ(product->op(), OpKind::Mul);
  const Expr* inverse = product->input(1)->definition();
  ASSERT_NE(inverse, nullptr);
  EXPECT_EQ(inverse->op(), OpKind::Reciprocal);
  EXPECT_EQ(inverse->input(0)->definition()->op(), OpKind::Cast);
  EXPECT_EQ(inverse->input(0)->definition()->input(0), n);

  test::RandomTensors random(8);
  const HostTensor input = random.uniform(DataType::Float32, {5, 333});
  const std::vector<double> want =
      test::valuesOf(std::get<HostTensor>(evaluateFusion(*original, {input})[0]));
  const std::vector<double> got =
      test::valuesOf(std::get<HostTensor>(evaluateFusion(*fusion, {input})[0]));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2.5e-7 * std::abs(want[i])) << "element " << i;
  }
}

TEST(MultiplyByBroadcastReciprocals, LeavesOtherDivisionsAlone) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::Float32);
  TensorView* y = makeSymbolicTensor(*fusion, 2, DataType::Float32);
  TensorView* i = makeSymbolicTensor(*fusion, 2, DataType::Int64);
  TensorView* h = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  // Full-size divisors (no reuse), integer division (truncates), mixed dtypes (bf16 / float
  // promotes, so the operands are not the result's dtype).
  fusion->addOutput(div(x, y));
  fusion->addOutput(div(i, broadcast(sum(i, {1}), {false, true})));
  fusion->addOutput(div(h, broadcast(sum(x, {1}), {false, true})));
  // An integer tensor by a scalar truncates.
  fusion->addOutput(div(i, i->axis(1)->extent()));
  EXPECT_EQ(multiplyByBroadcastReciprocals(*fusion), 0);
  for (Val* output : fusion->outputs()) EXPECT_EQ(output->definition()->op(), OpKind::Div);
}

}  // namespace
}  // namespace braze
