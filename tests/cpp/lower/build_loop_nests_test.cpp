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

TEST(BuildLoopNestsTest, GridReductionInsideASerialLoopIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* out = sum(x, {1});
  fusion.addOutput(out);
  out->split(1, 128);
  out->parallelize(1, ParallelType::BIDx);
  out->parallelize(2, ParallelType::TIDx);
  EXPECT_TRUE(throwsError(
      [&] { lowerFusion(fusion); },
      {"T1 is reduced across blocks inside the serial loop over i", "parallelize that axis"}));
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
