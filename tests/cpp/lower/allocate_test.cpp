// Registers and shared memory are sized by the loop axes after a tensor's inline position.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "braze/sched/inlining.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::throwsError;

std::string lowered(const Fusion& fusion) {
  return printKernelIr(lowerFusion(fusion));
}

TEST(AllocateTest, RegistersHoldTheAxesAfterTheInlinePosition) {
  // exp(x - max) is kept for the whole row across the sum: 4 elements per thread (the TIDx
  // axis is each thread's own).
  const std::string ir = lowered(*test::findScheduledCase("softmax").build());
  EXPECT_NE(ir.find("alloc T4: float32[4] local"), std::string::npos) << ir;
  // Fully inlined tensors are one register, declared in the loop that recomputes them.
  EXPECT_NE(ir.find("for i1 in 0..4:\n    alloc T2: float32[1] local"), std::string::npos) << ir;
}

TEST(AllocateTest, SharedMemoryHoldsEveryThreadsPart) {
  const std::string ir = lowered(*test::findScheduledCase("transpose_shared").build());
  EXPECT_NE(ir.find("alloc T2: float32[1024] shared"), std::string::npos) << ir;
}

TEST(AllocateTest, VectorizedCopiesGetTheWholeVector) {
  const std::string ir = lowered(*test::findScheduledCase("pointwise_vectorize").build());
  EXPECT_NE(ir.find("alloc T4: float32[4] local"), std::string::npos) << ir;
}

TEST(AllocateTest, RegistersOfSymbolicSizeAreRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* out = neg(y);
  fusion.addOutput(out);
  y->setMemoryType(MemoryType::Local);
  inlineAt(y, 1);
  EXPECT_TRUE(throwsError(
      [&] { lowerFusion(fusion); },
      {"T1 is in registers", "T1 axis 1 (i", "symbolic extent T0.size[1]", "constant size"}));
}

TEST(AllocateTest, SharedMemoryOfSymbolicSizeIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  fusion.addOutput(neg(y));
  y->setMemoryType(MemoryType::Shared);
  EXPECT_TRUE(throwsError([&] { lowerFusion(fusion); },
                          {"T1 is in shared memory", "T1 axis 0", "constant size"}));
}

}  // namespace
}  // namespace braze
