// A block or grid reduction within serial loops over its own reduction axes reduces across
// threads once, after them.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/reduction.h"
#include "braze/sched/inlining.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

std::string lowered(const Fusion& fusion) {
  return printKernelIr(lowerFusion(fusion));
}

TEST(HoistParallelReductionsTest, SerialPartThenOneBlockReduction) {
  const std::string ir = lowered(*test::findScheduledCase("inner_reduction_block").build());
  EXPECT_NE(ir.find("  T2[0] = init sum\n"
                    "  for i0 in 0..braze::ceilDiv(T0.size[1], 128):\n"
                    "    if tidx + i0 * 128 < T0.size[1]:\n"
                    "      T2[0] = sum(T0[bidx * T0.size[1] + tidx + i0 * 128])\n"
                    "  T2[0] = finish sum block(x)\n"),
            std::string::npos)
      << ir;
}

TEST(HoistParallelReductionsTest, WelfordTooAndOnceForAllItsOutputs) {
  const std::string ir = lowered(*test::findScheduledCase("welford_block").build());
  EXPECT_NE(ir.find(" = finish welford block(x)\n"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("welford(T0[bidx * T0.size[1] + tidx + i0 * 128]) block"), std::string::npos)
      << ir;
}

TEST(HoistParallelReductionsTest, GlobalAccumulatorsReduceEveryIteration) {
  // Without a register accumulator there is no per-thread partial result to keep.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* out = sum(x, {1});
  fusion.addOutput(out);
  out->split(1, 128);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(2, ParallelType::TIDx);
  const std::string ir = lowered(fusion);
  EXPECT_EQ(ir.find("finish"), std::string::npos) << ir;
  EXPECT_NE(ir.find("for i0 in 0..braze::ceilDiv(T0.size[1], 128):\n    T1[bidx] = sum("),
            std::string::npos)
      << ir;
}

TEST(HoistParallelReductionsTest, GridReductionAfterItsSerialLoopIsAllowed) {
  // [blocks, 4 serial, 128 threads], all reduction axes: the serial loop runs first, then one
  // block and one grid reduction.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* out = sum(x, {0});
  fusion.addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(0, 128);
  partial->split(0, 4);
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::TIDx);
  inlineMost(fusion);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("  T2[0] = finish sum block(x) grid(x)\n"), std::string::npos) << ir;
}

}  // namespace
}  // namespace braze
