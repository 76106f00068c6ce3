// issue-loads-early: a load from a fusion input placed after a block reduction moves before
// it, so that it is in flight while the threads meet; loads that cross no barrier stay.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

// out = y * sum(x) per row, one row per block on TIDx: y's register copy is read only after
// the block reduction of x.
std::unique_ptr<Fusion> scaledBySum() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = makeSymbolicTensor(*fusion, 2);
  TensorView* total = sum(x, {1});
  TensorView* out = mul(y, broadcast(total, {false, true}));
  fusion->addOutput(out);
  y->cacheAfter();
  total->parallelize(0, ParallelType::BIDx);
  total->parallelize(1, ParallelType::TIDx);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(out);
  keepIntermediatesInRegisters(*fusion);
  inlineMost(*fusion);
  return fusion;
}

// Positions in the printed kernel IR of the copy of y (T1) and of the block reduction.
std::pair<size_t, size_t> loadAndReduction(const std::string& ir) {
  return {ir.find("= set(T1["), ir.find("block(")};
}

TEST(IssueLoadsEarlyTest, MovesALoadReadAfterABlockReductionBeforeIt) {
  auto fusion = scaledBySum();
  LowerOptions skipped;
  skipped.skip_passes = {"issue-loads-early"};
  const std::string before = printKernelIr(lowerFusion(*fusion, skipped));
  const auto [load_before, reduction_before] = loadAndReduction(before);
  ASSERT_NE(load_before, std::string::npos) << before;
  ASSERT_NE(reduction_before, std::string::npos) << before;
  EXPECT_GT(load_before, reduction_before) << before;

  const std::string after = printKernelIr(lowerFusion(*fusion));
  const auto [load, reduction] = loadAndReduction(after);
  ASSERT_NE(load, std::string::npos) << after;
  EXPECT_LT(load, reduction) << after;
}

TEST(IssueLoadsEarlyTest, LoadsThatCrossNoBarrierStayByTheirReaders) {
  // Pointwise kernels, and reductions whose loads come first anyway.
  for (const char* name : {"pointwise_unroll_unswitch", "inner_reduction_vectorized", "softmax"}) {
    LowerOptions skipped;
    skipped.skip_passes = {"issue-loads-early"};
    EXPECT_EQ(printKernelIr(lowerFusion(*test::findScheduledCase(name).build())),
              printKernelIr(lowerFusion(*test::findScheduledCase(name).build(), skipped)))
        << name;
  }
}

}  // namespace
}  // namespace braze
