// Registers and shared memory are sized by the loop axes after a tensor's inline position.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/eval/expression_evaluator.h"
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

// Static shared tensors stay __shared__ arrays (transpose_shared's tile, above); one whose size
// only the launch knows lives in dynamic shared memory, at byte 0, and the launch's dynamic
// shared memory is its size rounded to 16 bytes.
TEST(AllocateTest, SharedMemoryOfSymbolicSizeIsDynamic) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  fusion.addOutput(neg(y));
  y->setMemoryType(MemoryType::Shared);
  const std::string ir = lowered(fusion);
  EXPECT_NE(ir.find("alloc T1: float32[T0.size[0]] shared dynamic at byte 0"), std::string::npos)
      << ir;
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_NE(kernel.source.find("float* T1 = reinterpret_cast<float*>(braze_dynamic_smem + 0);"),
            std::string::npos)
      << kernel.source;
  ASSERT_NE(kernel.launch.dynamic_shared_memory_bytes, nullptr);
  ExpressionEvaluator evaluator;
  evaluator.bind(x->axis(0)->extent(), int64_t{1001});
  EXPECT_EQ(toInt64(*evaluator.evaluate(kernel.launch.dynamic_shared_memory_bytes)), 4016);
  EXPECT_EQ(lowered(*test::findScheduledCase("transpose_shared").build()).find("dynamic"),
            std::string::npos);
}

// Shared tensors together past the static limit move to dynamic memory, each 16-byte aligned,
// with the block reduction's scratch after them.
TEST(AllocateTest, SharedMemoryPastTheStaticLimitIsDynamic) {
  const GeneratedKernel kernel =
      generateCuda(*test::findScheduledCase("row_in_shared_memory_past_static_limit").build());
  EXPECT_NE(kernel.source.find("char* braze_smem_bytes = braze_dynamic_smem + 51200;"),
            std::string::npos)
      << kernel.source;
  ASSERT_NE(kernel.launch.dynamic_shared_memory_bytes, nullptr);
  ExpressionEvaluator evaluator;
  // 51200 bytes of row, then 8 bytes per thread of the block reduction (800 threads).
  EXPECT_EQ(toInt64(*evaluator.evaluate(kernel.launch.dynamic_shared_memory_bytes)), 51200 + 6400);
}

}  // namespace
}  // namespace braze
