// Predicates appear exactly where an iteration point can be out of bounds: non-divisible
// splits, thread dims launched wider than a loop, and one writer among redundant threads.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/sched/inlining.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

// out = x * 2 over x of `size` (-1: symbolic), split by 128 onto blocks and threads.
std::unique_ptr<Fusion> splitByThreads(int64_t size) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {size}});
  TensorView* out = mul(x, 2.0);
  fusion->addOutput(out);
  out->split(0, 128);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  return fusion;
}

std::string lowered(const Fusion& fusion) {
  return printKernelIr(lowerFusion(fusion));
}

TEST(InsertPredicatesTest, DivisibleSplitNeedsNoPredicate) {
  const std::string ir = lowered(*splitByThreads(1024));
  EXPECT_EQ(ir.find("if "), std::string::npos) << ir;
  EXPECT_NE(ir.find("T1[bidx * 128 + tidx] = mul(T0[bidx * 128 + tidx], 2.0)"), std::string::npos)
      << ir;
}

TEST(InsertPredicatesTest, NonDivisibleSplitIsPredicated) {
  const std::string ir = lowered(*splitByThreads(1000));
  EXPECT_NE(ir.find("if bidx * 128 + tidx < 1000:"), std::string::npos) << ir;
}

TEST(InsertPredicatesTest, SymbolicExtentIsPredicated) {
  const std::string ir = lowered(*splitByThreads(-1));
  EXPECT_NE(ir.find("if bidx * 128 + tidx < T0.size[0]:"), std::string::npos) << ir;
}

TEST(InsertPredicatesTest, NestedNonDivisibleSplitsCheckBothRanges) {
  const std::string ir = lowered(*test::findScheduledCase("non_divisible_nested").build());
  EXPECT_NE(ir.find("if bidx * 128 + tidx * 3 + i0 < T0.size[0] && tidx * 3 + i0 < 128:"),
            std::string::npos)
      << ir;
}

TEST(InsertPredicatesTest, ThreadDimWiderThanALoopIsPredicated) {
  // Two outputs bind TIDx to 128 and to 64 threads: the block has 128 and the second output
  // runs on its first 64.
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1024}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {512}});
  TensorView* a2 = neg(a);
  TensorView* b2 = neg(b);
  fusion.addOutput(a2);
  fusion.addOutput(b2);
  a2->split(0, 128);
  a2->parallelize(0, ParallelType::BIDx);
  a2->parallelize(1, ParallelType::TIDx);
  b2->split(0, 64);
  b2->parallelize(0, ParallelType::BIDx);
  b2->parallelize(1, ParallelType::TIDx);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("launch TIDx = 128"), std::string::npos) << ir;
  EXPECT_NE(ir.find("if tidx < 64:\n    T3[bidx * 64 + tidx] = neg("), std::string::npos) << ir;
  EXPECT_NE(ir.find("  T2[bidx * 128 + tidx] = neg("), std::string::npos) << ir;
}

TEST(InsertPredicatesTest, OneThreadWritesWhatAllThreadsComputed) {
  const std::string ir = lowered(*test::findScheduledCase("inner_reduction_block").build());
  EXPECT_NE(ir.find("if tidx == 0:\n    T1[bidx] = set(T2[0])"), std::string::npos) << ir;
}

TEST(InsertPredicatesTest, AnOutputInsideABlockReductionNestIsWrittenByEveryThread) {
  // y = exp(x) is an output that only the row sum reads, so it is computed inside the sum's
  // nest, whose TIDx is the sum's reduction; y iterates TIDx itself: each thread writes its own
  // element, not thread 0 alone.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 128}});
  TensorView* y = exp(x);
  TensorView* s = sum(y, {1});
  fusion.addOutput(y);
  fusion.addOutput(s);
  for (TensorView* tv : {y, s}) {
    tv->parallelize(0, ParallelType::BIDx);
    tv->parallelize(1, ParallelType::TIDx);
  }
  inlineAt(y, 2);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("\n  T1[bidx * 128 + tidx] = exp(T0[bidx * 128 + tidx])"), std::string::npos)
      << ir;
  EXPECT_NE(ir.find("if tidx == 0:\n    T2[bidx] = "), std::string::npos) << ir;
}

TEST(InsertPredicatesTest, BlockReductionsPredicateTheirInputNotTheCall) {
  const std::string ir = lowered(*test::findScheduledCase("grid_reduction").build());
  EXPECT_NE(ir.find("  T2[0] = sum(T0[bidx * 128 + tidx]) block(x) grid(x) input if (bidx * 128 "
                    "+ tidx < T0.size[0])\n"),
            std::string::npos)
      << ir;
}

TEST(InsertPredicatesTest, GridReductionResultIsWrittenByTheBlockThatFinished) {
  const std::string ir = lowered(*test::findScheduledCase("grid_reduction").build());
  EXPECT_NE(ir.find("if tidx == 0 && finished0:"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("bidx == 0"), std::string::npos) << ir;
}

TEST(InsertPredicatesTest, RegisterOnlyMathIsNotPredicated) {
  const std::string ir = lowered(*test::findScheduledCase("cast_chain").build());
  EXPECT_NE(ir.find("\n  T2[0] = mul(T1[0], 3.0)"), std::string::npos) << ir;
}

}  // namespace
}  // namespace braze
