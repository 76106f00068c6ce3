// Loop nests: shared loops of inlined producers, reduction initialization, and the schedules
// lowering refuses.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::throwsError;

std::string lowered(const Fusion& fusion) {
  return printKernelIr(lowerFusion(fusion));
}

TEST(BuildLoopNestsTest, InlinedProducerSharesItsConsumersLoops) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* out = add(y, x);
  fusion.addOutput(out);
  y->setMemoryType(MemoryType::Local);
  inlineAt(y, 2);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("  for i0 in 0..T0.size[0]:\n"
                    "    for i1 in 0..T0.size[1]:\n"
                    "      alloc T1: float32[1] local\n"
                    "      T1[0] = exp(T0[i0 * T0.size[1] + i1])\n"
                    "      T2[i0 * T0.size[1] + i1] = add(T1[0], T0[i0 * T0.size[1] + i1])\n"),
            std::string::npos)
      << ir;
}

TEST(BuildLoopNestsTest, AccumulatorIsInitializedBeforeItsReductionLoop) {
  const std::string ir = lowered(*test::findScheduledCase("outer_reduction").build());
  EXPECT_NE(ir.find("  T2[0] = init max\n  for i0 in 0..T0.size[0]:\n"), std::string::npos) << ir;
}

TEST(BuildLoopNestsTest, ProducersSharingTheDeepestLoopArePlacedLast) {
  // mul(a) is inlined deeper into add than the cached b: placing b first keeps the loop open.
  const std::string ir = lowered(*test::findScheduledCase("pointwise_vectorize").build());
  const size_t load_b = ir.find("vector<4> T5[0] = T1[");
  const size_t loop = ir.find("for i2 in 0..4:");
  ASSERT_NE(load_b, std::string::npos) << ir;
  ASSERT_NE(loop, std::string::npos) << ir;
  EXPECT_LT(load_b, loop) << ir;
}

TEST(BuildLoopNestsTest, ReadersOfOneInlinedTensorShareItsLoops) {
  // Sum and max of exp(x) in registers: exp is computed once per element, inside the row loop
  // both reductions accumulate in.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  fusion.addOutput(sum(e, {1}));
  fusion.addOutput(max(e, {1}));
  e->setMemoryType(MemoryType::Local);
  inlineAt(e, 2);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("    for i1 in 0..T0.size[1]:\n"
                    "      alloc T1: float32[1] local\n"
                    "      T1[0] = exp(T0[i0 * T0.size[1] + i1])\n"
                    "      T2[i0] = sum(T1[0])\n"
                    "      T3[i0] = max(T1[0])\n"),
            std::string::npos)
      << ir;
}

TEST(BuildLoopNestsTest, InliningIntoLoopsThatDoNotMapIsRefused) {
  // The reduction axis of T1 is no axis of its consumer.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* r = sum(x, {1});
  TensorView* out = broadcast(r, {false, true});
  fusion.addOutput(out);
  r->setMemoryType(MemoryType::Local);
  r->setInlinePosition(2);  // bypasses inlineAt's own check on purpose
  EXPECT_TRUE(throwsError([&] { lowerFusion(fusion); },
                          {"T1 is inlined at position 2 into T2", "loop axis 1 of T1 (r",
                           "is not the same iteration as axis 1 of T2 (b"}));
}

TEST(BuildLoopNestsTest, ReadersOfAnInlinedChainWaitForItsEnd) {
  // q = exp(x) is kept per row (inlined at 1) and read by c = q * 2, inlined into sum(c)'s
  // loop, and by d = -q. d goes after the sum: placed right after c, it would close the loop
  // c shares with the sum.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 8}});
  TensorView* q = exp(x);
  TensorView* c = mul(q, 2.0);
  TensorView* r = sum(c, {1});
  TensorView* d = neg(q);
  fusion.addOutput(r);
  fusion.addOutput(d);
  q->setMemoryType(MemoryType::Local);
  c->setMemoryType(MemoryType::Local);
  inlineAt(c, 2);
  inlineAt(q, 1);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("    for i2 in 0..8:\n"
                    "      alloc T2: float32[1] local\n"
                    "      T2[0] = mul(T1[i2], 2.0)\n"
                    "      T3[i0] = sum(T2[0])\n"),
            std::string::npos)
      << ir;
}

TEST(BuildLoopNestsTest, GridReductionInsideASerialLoopOverRowsTakesARegionPerRow) {
  // Rows serial, each row reduced across blocks: every row synchronizes through its own
  // region of the workspace, which grows by the row count.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* out = sum(x, {1});
  fusion.addOutput(out);
  out->split(1, 128);
  out->parallelize(1, ParallelType::BIDx);
  out->parallelize(2, ParallelType::TIDx);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("grid(x) region i0"), std::string::npos) << ir;
}

TEST(BuildLoopNestsTest, GridReductionInsideItsOwnSerialReductionLoopIsRefused) {
  // A global accumulator reduced across blocks once per iteration of its own reduction loop:
  // only the finishing block of each iteration would add to it.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* out = sum(x, {0});
  fusion.addOutput(out);
  out->split(0, 128);
  out->split(0, 4);
  out->parallelize(0, ParallelType::BIDx);
  out->parallelize(2, ParallelType::TIDx);
  EXPECT_TRUE(
      throwsError([&] { lowerFusion(fusion); },
                  {"T1 is reduced across blocks inside the serial loop over its own reduction axis",
                   "keep the reduction in registers"}));
}

TEST(BuildLoopNestsTest, GridResultReadAfterItsIterationLoopIsRefused) {
  // Column sums as [r blocks, 4 serial, threads]: the grid reduction runs once per serial
  // iteration, but the copy to the output reads the register result in a later loop.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* out = sum(x, {0});
  fusion.addOutput(out);
  TensorView* partial = out->cacheBefore();
  partial->split(1, 4, /*inner_split=*/false);  // [r0, 4, ceil(i1 / 4)]
  partial->parallelize(0, ParallelType::BIDx);
  partial->parallelize(2, ParallelType::TIDx);
  partial->setMemoryType(MemoryType::Local);
  EXPECT_TRUE(throwsError([&] { lowerFusion(fusion); },
                          {"is reduced across blocks once per iteration of the serial loop",
                           "is read after that loop"}));
}

TEST(BuildLoopNestsTest, ContractionsAreRefusedByName) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2);
  TensorView* b = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(matmul(a, b));
  EXPECT_TRUE(throwsError([&] { lowerFusion(fusion); }, {"matmul", "T2", "matmul scheduler"}));
}

TEST(BuildLoopNestsTest, ConflictingParallelTypesOnOneLoopAreRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  TensorView* out = neg(y);
  fusion.addOutput(out);
  y->setMemoryType(MemoryType::Local);
  inlineAt(y, 1);
  y->loopAxis(0)->parallelize(ParallelType::TIDx);  // bypasses parallelize's own check
  out->loopAxis(0)->parallelize(ParallelType::BIDx);
  EXPECT_TRUE(throwsError(
      [&] { lowerFusion(fusion); },
      {"loop axis 0 of T1 is parallelized as TIDx", "BIDx", "conflicting parallel types"}));
}

}  // namespace
}  // namespace braze
