// bypassRedundantExpands: an expand read by elementwise ops whose other operands already span
// its expanded dims is bypassed there, and nowhere else; the results stay the reference's.

#include "braze/ir/redundant_expands.h"

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"

namespace braze {
namespace {

bool readsAnExpand(const Fusion& fusion) {
  for (const Expr* expr : fusion.exprs()) {
    if (expr->op() == OpKind::Expand) return true;
  }
  return false;
}

// x * broadcast_in_dim(w, x.shape(), [1]), the way nvFuser-style definitions scale rows.
struct ScaledRows {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* w = makeSymbolicTensor(*fusion, 1);
  TensorView* expanded = broadcast_in_dim(w, {x->axis(0)->extent(), x->axis(1)->extent()}, {1});
};

TEST(RedundantExpandsTest, AnElementwiseUseSpannedByItsOtherOperandReadsTheBroadcast) {
  ScaledRows rows;
  rows.fusion->addOutput(mul(rows.x, rows.expanded));
  ASSERT_TRUE(readsAnExpand(*rows.fusion));
  const std::unique_ptr<Fusion> original = rows.fusion->clone();

  EXPECT_EQ(bypassRedundantExpands(*rows.fusion), 1);
  EXPECT_FALSE(readsAnExpand(*rows.fusion));
  EXPECT_EQ(bypassRedundantExpands(*rows.fusion), 0);  // nothing left to do

  test::RandomTensors random(7);
  const HostTensor x = random.uniform(DataType::Float32, {5, 7});
  const HostTensor w = random.uniform(DataType::Float32, {7});
  const auto expected = evaluateFusion(*original, {x, w});
  const auto actual = evaluateFusion(*rows.fusion, {x, w});
  const auto& e = std::get<HostTensor>(expected[0]);
  const auto& a = std::get<HostTensor>(actual[0]);
  ASSERT_EQ(a.sizes(), e.sizes());
  for (int64_t i = 0; i < e.numel(); ++i) EXPECT_EQ(a.atFlat(i), e.atFlat(i)) << i;
}

TEST(RedundantExpandsTest, AnExpandMovesBelowOneInputOpsUntilItIsRedundant) {
  // RMS norm: x * reciprocal(broadcast_in_dim(rms, x.shape(), [0, 1])) with rms [rows, 1].
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* rms = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  TensorView* expanded =
      broadcast_in_dim(rms, {x->axis(0)->extent(), x->axis(1)->extent()}, {0, 1});
  fusion->addOutput(mul(x, cast(reciprocal(expanded), DataType::Float64)));
  const std::unique_ptr<Fusion> original = fusion->clone();

  EXPECT_EQ(bypassRedundantExpands(*fusion), 3);  // two moves, then the multiply's read
  EXPECT_FALSE(readsAnExpand(*fusion));
  test::RandomTensors random(5);
  const HostTensor xs = random.uniform(DataType::Float32, {4, 9});
  const HostTensor rs = random.nonZero(DataType::Float32, {4, 1});
  const auto expected = std::get<HostTensor>(evaluateFusion(*original, {xs, rs})[0]);
  const auto actual = std::get<HostTensor>(evaluateFusion(*fusion, {xs, rs})[0]);
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_EQ(actual.dtype(), DataType::Float64);
  for (int64_t i = 0; i < expected.numel(); ++i) EXPECT_EQ(actual.atFlat(i), expected.atFlat(i));
}

TEST(RedundantExpandsTest, AnExpandThatIsAnOutputOrSetsTheExtentsStays) {
  // An output: its extents are the result.
  ScaledRows output;
  output.fusion->addOutput(output.expanded);
  output.fusion->addOutput(mul(output.x, output.expanded));
  EXPECT_EQ(bypassRedundantExpands(*output.fusion), 1);  // the mul's read only
  EXPECT_TRUE(readsAnExpand(*output.fusion));

  // Nothing else spans the expanded rows: the expand gives the result its extents, so it
  // moves below the negation and stays, now defining the output.
  ScaledRows alone;
  alone.fusion->addOutput(neg(alone.expanded));
  EXPECT_EQ(bypassRedundantExpands(*alone.fusion), 1);
  EXPECT_EQ(alone.fusion->outputs()[0]->definition()->op(), OpKind::Expand);

  // Another operand of another extent (checked equal at run time only through the expand)
  // does not count.
  ScaledRows other;
  TensorView* y = makeSymbolicTensor(*other.fusion, 2);
  other.fusion->addOutput(add(y, other.expanded));
  EXPECT_EQ(bypassRedundantExpands(*other.fusion), 0);
  // ...unless the caller checks that extent equal to the expanded one before every run.
  const Val* rows = other.x->axis(0)->extent();
  const std::pair<const Val*, const Val*> checked[] = {{y->axis(0)->extent(), rows}};
  EXPECT_EQ(bypassRedundantExpands(*other.fusion, checked), 1);

  // Not elementwise: a reduction of the expanded tensor sums over the expanded extent.
  ScaledRows reduced;
  reduced.fusion->addOutput(cat({reduced.x, reduced.expanded}, 0));
  EXPECT_EQ(bypassRedundantExpands(*reduced.fusion), 0);
}

}  // namespace
}  // namespace braze
