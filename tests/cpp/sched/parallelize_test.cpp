// parallelize: binding loop axes, and the schedule errors it reports (conflicting types,
// vectorization rules).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

TEST(ParallelizeTest, BindsLoopAxes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->merge(0)->split(0, 128);
  y->parallelize(0, ParallelType::BIDx)->parallelize(-1, ParallelType::TIDx);
  EXPECT_EQ(y->loopAxis(0)->parallelType(), ParallelType::BIDx);
  EXPECT_EQ(y->loopAxis(1)->parallelType(), ParallelType::TIDx);
  EXPECT_EQ(y->loopAxis(1)->name().substr(y->loopAxis(1)->name().size() - 5), ":TIDx");
  // Rebinding an axis, or going back to Serial, is allowed.
  y->parallelize(1, ParallelType::TIDy)->parallelize(1, ParallelType::Serial);
  EXPECT_EQ(y->loopAxis(1)->parallelType(), ParallelType::Serial);
}

TEST(ParallelizeTest, SameThreadTypeOnTwoAxesIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->parallelize(0, ParallelType::TIDx);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::TIDx); },
                          {"parallelize(2, TIDx)", y->name(), "loop axis 0", "already TIDx"}));
  y->parallelize(1, ParallelType::BIDx);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::BIDx); }, {"already BIDx"}));
  // Unroll may appear more than once; re-binding the same axis is fine.
  y->parallelize(2, ParallelType::Unroll);
  y->parallelize(0, ParallelType::TIDx);
  EXPECT_TRUE(throwsError([&] { y->parallelize(5, ParallelType::TIDy); }, {"out of range"}));
}

TEST(VectorizeTest, InnermostContiguousPowerOfTwo) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 4);
  y->parallelize(2, ParallelType::Vectorize);
  EXPECT_EQ(y->loopAxis(2)->parallelType(), ParallelType::Vectorize);
}

TEST(VectorizeTest, MergedInnermostDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, 4, 6}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->merge(1, 2)->split(1, 8);  // 24 elements in a row, 8 halves = 16 bytes
  y->parallelize(-1, ParallelType::Vectorize);
  EXPECT_EQ(y->loopAxis(-1)->parallelType(), ParallelType::Vectorize);
}

TEST(VectorizeTest, NotInnermostIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError(
      [&] { y->parallelize(1, ParallelType::Vectorize); },
      {"parallelize(1, Vectorize)", "loop axis 1", y->name(), "not the innermost loop axis"}));
}

TEST(VectorizeTest, WidthRules) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 3);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::Vectorize); },
                          {"extent 3", "power-of-two", "16 bytes", "up to 4 elements"}));
  Fusion wide;
  TensorView* a = makeInputTensor(wide, {.dtype = DataType::Float32, .sizes = {-1}});
  TensorView* b = neg(a);
  wide.addOutput(b);
  b->split(0, 8);
  EXPECT_TRUE(throwsError([&] { b->parallelize(1, ParallelType::Vectorize); },
                          {"extent 8", "float32", "16 bytes"}));
  Fusion symbolic;
  TensorView* s = makeSymbolicTensor(symbolic, 1);
  TensorView* t = neg(s);
  symbolic.addOutput(t);
  EXPECT_TRUE(throwsError([&] { t->parallelize(0, ParallelType::Vectorize); },
                          {"symbolic extent", "constant"}));
}

TEST(VectorizeTest, WidthMustDivideAConstantExtent) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 10}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::Vectorize); },
                          {"vector width 4 does not divide the extent 10"}));
  // A split of a split must keep every access in one run as well.
  Fusion nested;
  TensorView* a = makeSymbolicTensor(nested, 1);
  TensorView* b = neg(a);
  nested.addOutput(b);
  b->split(0, 6)->split(1, 4);
  EXPECT_TRUE(throwsError([&] { b->parallelize(2, ParallelType::Vectorize); },
                          {"does not divide the extent 6"}));
}

TEST(VectorizeTest, OuterPartOfASplitIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(0, 4, /*inner_split=*/false)->reorder({{0, 1}});
  EXPECT_TRUE(throwsError([&] { y->parallelize(1, ParallelType::Vectorize); },
                          {"outer part of a split", "strided"}));
}

TEST(VectorizeTest, SplitInsideAMergeIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 2)->merge(1, 2)->split(1, 4);
  EXPECT_TRUE(
      throwsError([&] { y->parallelize(2, ParallelType::Vectorize); }, {"split inside a merge"}));
}

TEST(VectorizeTest, ExpandedBroadcastIsRefused) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {1}});
  TensorView* y = expand(x, {int64_t{8}});
  fusion.addOutput(y);
  y->split(0, 4);
  EXPECT_TRUE(throwsError([&] { y->parallelize(1, ParallelType::Vectorize); },
                          {"expanded broadcast", "no storage"}));
}

TEST(VectorizeTest, NonContiguousInputIsRefused) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {true, false}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::Vectorize); },
                          {"dim 1 of", x->name(), "(input 0)", "not contiguous"}));
}

TEST(VectorizeTest, InputNotInnermostInMemoryIsRefused) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::Vectorize); },
                          {"not the innermost dims in its memory layout"}));
}

TEST(VectorizeTest, TransposedReadIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = transpose(x, 0, 1);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::Vectorize); },
                          {x->name(), "not the innermost dims"}));
}

TEST(VectorizeTest, BroadcastProducersAreReadOneValueAtATime) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeInputTensor(fusion, {.sizes = {-1, 1}});
  TensorView* y = add(x, bias);
  fusion.addOutput(y);
  y->split(1, 4);
  y->parallelize(2, ParallelType::Vectorize);
  EXPECT_EQ(y->loopAxis(2)->parallelType(), ParallelType::Vectorize);
}

TEST(VectorizeTest, ReductionAxisIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = sum(x, {1});
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError([&] { y->parallelize(2, ParallelType::Vectorize); },
                          {"Reduction axis", "rFactor"}));
}

}  // namespace
}  // namespace braze
