// split, merge, reorder and loopAxis: their effect on loop domains (extents, iter types,
// definitions), clone keeping schedules, and every error they report.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/transform_history.h"
#include "ops/domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::scalarText;
using test::throwsError;

TEST(SplitTest, InnerSplitByConstantFactor) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  fusion.addOutput(y);
  IterDomain* original = y->axis(1);
  y->split(1, 4);
  ASSERT_EQ(y->nLoopDims(), 3);
  EXPECT_EQ(y->loopAxis(0), y->axis(0));
  EXPECT_EQ(scalarText(y->loopAxis(1)->extent()),
            "ceil_div(" + original->extent()->name() + ", 4)");
  EXPECT_EQ(y->loopAxis(2)->extent()->constantInt(), 4);
  EXPECT_TRUE(y->loopAxis(1)->isIteration());
  EXPECT_TRUE(y->loopAxis(2)->isIteration());
  const Expr* split = y->loopAxis(1)->definition();
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->op(), OpKind::Split);
  EXPECT_EQ(split->input(0), original);
  EXPECT_EQ(split->output(0), y->loopAxis(1));
  EXPECT_EQ(split->output(1), y->loopAxis(2));
  EXPECT_TRUE(split->attribute<bool>("inner_split"));
  // The logical domain is untouched; the transform is reachable from the loop domain.
  EXPECT_EQ(y->logical()[1], original);
  EXPECT_EQ(loopTransforms(y), std::vector<Expr*>{const_cast<Expr*>(split)});
}

TEST(SplitTest, OuterSplitPutsTheFactorOnTheOuterAxis) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {10, 24}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(-1, 3, /*inner_split=*/false);
  EXPECT_EQ(y->loopAxis(1)->extent()->constantInt(), 3);
  EXPECT_EQ(y->loopAxis(2)->extent()->constantInt(), 8);
  EXPECT_FALSE(y->loopAxis(1)->definition()->attribute<bool>("inner_split"));
}

TEST(SplitTest, ConstantExtentsFoldIncludingNonDivisibleSplits) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {10}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(0, 4);
  EXPECT_EQ(y->loopAxis(0)->extent()->constantInt(), 3);  // ceil(10 / 4)
  EXPECT_EQ(y->loopAxis(1)->extent()->constantInt(), 4);
}

TEST(SplitTest, SymbolicFactor) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* factor = makeInputScalar(fusion, DataType::Index);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(0, factor);
  EXPECT_EQ(y->loopAxis(1)->extent(), factor);
  EXPECT_EQ(scalarText(y->loopAxis(0)->extent()),
            "ceil_div(" + x->axis(0)->extent()->name() + ", " + factor->name() + ")");
}

TEST(SplitTest, Int64FactorIsCastToIndex) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* factor = makeInputScalar(fusion, DataType::Int64);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(0, factor);
  EXPECT_EQ(y->loopAxis(1)->extent()->dtype(), DataType::Index);
}

TEST(SplitTest, ReductionSplitsIntoReductions) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = sum(x, {1});
  fusion.addOutput(y);
  y->split(1, 32);
  EXPECT_TRUE(y->loopAxis(0)->isIteration());
  EXPECT_TRUE(y->loopAxis(1)->isReduction());
  EXPECT_TRUE(y->loopAxis(2)->isReduction());
}

TEST(SplitTest, BroadcastSplitsIntoBroadcastsOfExtentOne) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 1}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(y->loopAxis(1)->isBroadcast());
  EXPECT_TRUE(y->loopAxis(2)->isBroadcast());
  EXPECT_TRUE(y->loopAxis(1)->extent()->isConstantEqualTo(1));
  EXPECT_TRUE(y->loopAxis(2)->extent()->isConstantEqualTo(1));
}

TEST(SplitTest, ExpandedBroadcastSplitsItsExpandedExtent) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {1}});
  TensorView* y = expand(x, {int64_t{12}});
  fusion.addOutput(y);
  y->split(0, 4);
  EXPECT_TRUE(y->loopAxis(0)->isBroadcast());
  EXPECT_EQ(y->loopAxis(0)->expandedExtent()->constantInt(), 3);
  EXPECT_EQ(y->loopAxis(1)->expandedExtent()->constantInt(), 4);
}

TEST(SplitTest, Errors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  EXPECT_TRUE(throwsError([&] { y->split(2, 4); },
                          {"split(2, 4)", y->name(), "loop axis 2", "out of range", "-2 .. 1"}));
  EXPECT_TRUE(throwsError([&] { y->split(-3, 4); }, {"loop axis -3", "out of range"}));
  EXPECT_TRUE(throwsError([&] { y->split(0, int64_t{0}); }, {"split(0, 0)", "must be positive"}));
  EXPECT_TRUE(throwsError([&] { y->split(0, -2); }, {"factor -2 must be positive"}));
  Scalar* floating = makeInputScalar(fusion, DataType::Float32);
  EXPECT_TRUE(throwsError([&] { y->split(0, floating); }, {"dtype float32", "integer"}));
  EXPECT_TRUE(throwsError([&] { y->split(0, static_cast<Scalar*>(nullptr)); }, {"null"}));
  Fusion other;
  Scalar* foreign = makeInputScalar(other, DataType::Index);
  EXPECT_TRUE(throwsError([&] { y->split(0, foreign); }, {"another fusion"}));
  EXPECT_TRUE(throwsError([&] { x->split(5, 2); }, {"(input 0)", "out of range"}));
}

TEST(MergeTest, MergesExtentsOuterMajor) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 6, 5}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->merge(1, 2);
  ASSERT_EQ(y->nLoopDims(), 2);
  EXPECT_EQ(y->loopAxis(1)->extent()->constantInt(), 30);
  const Expr* merge = y->loopAxis(1)->definition();
  ASSERT_NE(merge, nullptr);
  EXPECT_EQ(merge->op(), OpKind::Merge);
  EXPECT_EQ(merge->input(0), y->axis(1));
  EXPECT_EQ(merge->input(1), y->axis(2));
  y->merge(0);
  ASSERT_EQ(y->nLoopDims(), 1);
  EXPECT_EQ(scalarText(y->loopAxis(0)->extent()), "mul(" + x->axis(0)->extent()->name() + ", 30)");
}

TEST(MergeTest, MergedAxisTakesTheLeftmostPosition) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->merge(2, 0);
  ASSERT_EQ(y->nLoopDims(), 2);
  EXPECT_EQ(y->loopAxis(1), y->axis(1));
  const Expr* merge = y->loopAxis(0)->definition();
  EXPECT_EQ(merge->input(0), y->axis(2));  // outer is the first argument
  EXPECT_EQ(merge->input(1), y->axis(0));
}

TEST(MergeTest, IterTypes) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 1, -1, -1}});
  TensorView* y = sum(neg(x), {2, 3});
  fusion.addOutput(y);
  // [i0, b1, r2, r3]
  y->merge(2, 3);
  EXPECT_TRUE(y->loopAxis(2)->isReduction());
  y->merge(0, 1);
  EXPECT_TRUE(y->loopAxis(0)->isIteration());
  // A plain broadcast contributes nothing to the extent.
  EXPECT_EQ(y->loopAxis(0)->extent(), y->axis(0)->extent());

  Fusion broadcasts;
  TensorView* b = makeInputTensor(broadcasts, {.sizes = {1, 1}});
  TensorView* c = neg(b);
  broadcasts.addOutput(c);
  c->merge(0);
  EXPECT_TRUE(c->loopAxis(0)->isBroadcast());
}

TEST(MergeTest, ReductionWithIterationIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = sum(x, {1});
  fusion.addOutput(y);
  EXPECT_TRUE(
      throwsError([&] { y->merge(0, 1); }, {"merge(0, 1)", y->name(), "loop axis 0", "loop axis 1",
                                            "Reduction", "Iteration", "cannot be merged"}));
  EXPECT_TRUE(throwsError([&] { y->merge(1, 1); }, {"both axes are loop axis 1"}));
  EXPECT_TRUE(throwsError([&] { y->merge(1, 2); }, {"out of range"}));
  EXPECT_TRUE(throwsError([&] { y->merge(1); }, {"merge(1, 2)", "out of range"}));
}

TEST(MergeTest, ReductionWithExpandedBroadcastIsRefused) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 1, -1}});
  TensorView* y = sum(expand(x, {int64_t{-1}, int64_t{6}, int64_t{-1}}), {2});  // [i, b ex 6, r]
  fusion.addOutput(y);
  EXPECT_TRUE(throwsError([&] { y->merge(1, 2); }, {"merge(1, 2)", "expanded Broadcast"}));
}

TEST(ReorderTest, MovesNamedAxesAndKeepsTheOthersInOrder) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 4);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  const std::vector<IterDomain*> before = y->loop();
  y->reorder({{3, 0}});
  EXPECT_EQ(y->loop(), (std::vector<IterDomain*>{before[3], before[0], before[1], before[2]}));
  y->reorder({{0, -1}, {-1, 0}});
  EXPECT_EQ(y->loop(), (std::vector<IterDomain*>{before[2], before[0], before[1], before[3]}));
  // reorder adds no transform.
  EXPECT_TRUE(loopTransforms(y).empty());
}

TEST(ReorderTest, Errors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  EXPECT_TRUE(throwsError(
      [&] {
        y->reorder({{0, 3}});
      },
      {"reorder({{0, 3}})", "loop axis 3", "out of range"}));
  EXPECT_TRUE(throwsError([&] { y->reorder({{0, 1}, {0, 2}}); }, {"moved twice"}));
  EXPECT_TRUE(throwsError([&] { y->reorder({{0, 1}, {2, 1}}); }, {"moved to position 1"}));
}

TEST(LoopAxisTest, NegativeAxesAndErrors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_EQ(x->loopAxis(-1), x->axis(1));
  EXPECT_TRUE(throwsError([&] { x->loopAxis(2); }, {"loopAxis(2)", "out of range"}));
}

TEST(ScheduleCloneTest, CloneKeepsLoopDomainsTransformsAndParallelTypes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = sum(exp(x), {1});
  fusion.addOutput(y);
  y->split(1, 128)->split(1, 4)->reorder({{1, -1}});
  y->parallelize(0, ParallelType::BIDx)->parallelize(1, ParallelType::TIDx);
  y->setMemoryType(MemoryType::Global);
  CloneMap map;
  std::unique_ptr<Fusion> copy = fusion.clone(&map);
  TensorView* twin = map[y];
  ASSERT_EQ(twin->nLoopDims(), y->nLoopDims());
  for (int64_t i = 0; i < y->nLoopDims(); ++i) {
    EXPECT_EQ(twin->loopAxis(i), map[y->loopAxis(i)]);
    EXPECT_EQ(twin->loopAxis(i)->parallelType(), y->loopAxis(i)->parallelType());
    EXPECT_EQ(twin->loopAxis(i)->iterType(), y->loopAxis(i)->iterType());
  }
  const std::vector<Expr*> original = loopTransforms(y);
  const std::vector<Expr*> cloned = loopTransforms(twin);
  ASSERT_EQ(cloned.size(), original.size());
  for (size_t i = 0; i < original.size(); ++i) EXPECT_EQ(cloned[i], map[original[i]]);
  // The copy is independent.
  twin->split(0, 2);
  EXPECT_EQ(y->nLoopDims(), 4);
}

}  // namespace
}  // namespace braze
