// reductionsOverBroadcastsAsSqueezes: a reduction over broadcast dims of extent 1 becomes a
// squeeze of them (and a reduction of the other axes), with the same results and dtype.

#include "braze/ir/broadcast_reductions.h"

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"

namespace braze {
namespace {

int64_t reductionsIn(const Fusion& fusion) {
  int64_t count = 0;
  for (const Expr* expr : fusion.exprs()) {
    const OpKind op = expr->op();
    count += op == OpKind::Sum || op == OpKind::Prod || op == OpKind::Max || op == OpKind::Min;
  }
  return count;
}

void expectSameResults(const Fusion& a, const Fusion& b, const std::vector<HostTensor>& inputs) {
  std::vector<EvaluatorArgument> arguments(inputs.begin(), inputs.end());
  const auto expected = evaluateFusion(a, arguments);
  const auto actual = evaluateFusion(b, arguments);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& e = std::get<HostTensor>(expected[i]);
    const auto& r = std::get<HostTensor>(actual[i]);
    EXPECT_EQ(r.dtype(), e.dtype());
    ASSERT_EQ(r.sizes(), e.sizes());
    for (int64_t k = 0; k < e.numel(); ++k) EXPECT_EQ(r.atFlat(k), e.atFlat(k)) << i << ":" << k;
  }
}

TEST(BroadcastReductionsTest, ASumOverAnExtentOneDimIsASqueeze) {
  // RMS norm's backward sums a [rows, 1] tensor over dim 1.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  fusion.addOutput(mul(sum(x, {1}), 2.0));
  const std::unique_ptr<Fusion> original = fusion.clone();
  EXPECT_EQ(reductionsOverBroadcastsAsSqueezes(fusion), 1);
  EXPECT_EQ(reductionsIn(fusion), 0);
  test::RandomTensors random(3);
  expectSameResults(*original, fusion, {random.uniform(DataType::Float32, {9, 1})});
}

TEST(BroadcastReductionsTest, ASumBroadcastBackAtItsDimsIsItsInput) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* column = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  TensorView* back = broadcast(sum(column, {1}), {false, true});
  fusion.addOutput(mul(x, back));
  const std::unique_ptr<Fusion> original = fusion.clone();
  EXPECT_EQ(reductionsOverBroadcastsAsSqueezes(fusion), 1);
  const Expr* product = fusion.outputs()[0]->definition();
  EXPECT_EQ(product->inputs()[1], column);  // neither a squeeze nor a broadcast between
  test::RandomTensors random(6);
  expectSameResults(
      *original, fusion,
      {random.uniform(DataType::Float32, {3, 8}), random.uniform(DataType::Float32, {3, 1})});
}

TEST(BroadcastReductionsTest, MixedAxesReduceTheRestAndIntegerSumsKeepTheirDtype) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1, 1, -1}});
  TensorView* total = sum(x, {1, 2});  // int64, as in PyTorch
  ASSERT_EQ(total->dtype(), DataType::Int64);
  fusion.addOutput(total);
  fusion.addOutput(
      max(makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1}}), {0}));
  const std::unique_ptr<Fusion> original = fusion.clone();
  EXPECT_EQ(reductionsOverBroadcastsAsSqueezes(fusion), 2);
  EXPECT_EQ(reductionsIn(fusion), 1);  // the sum over dim 2 stays
  test::RandomTensors random(4);
  expectSameResults(*original, fusion,
                    {random.uniform(DataType::Int32, {5, 1, 7}, -50, 50),
                     random.uniform(DataType::Float32, {1, 6})});
}

TEST(BroadcastReductionsTest, IterationAndExpandedDimsStayReductions) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* row = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1}});
  fusion.addOutput(sum(x, {1}));
  // Summing an expanded dim adds its copies: not a squeeze.
  fusion.addOutput(sum(expand(row, {x->axis(0)->extent(), row->axis(1)->extent()}), {0}));
  EXPECT_EQ(reductionsOverBroadcastsAsSqueezes(fusion), 0);
  EXPECT_EQ(reductionsIn(fusion), 2);
}

}  // namespace
}  // namespace braze
