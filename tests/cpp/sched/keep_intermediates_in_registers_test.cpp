// keepIntermediatesInRegisters: every tensor between inputs and outputs goes to registers;
// inputs and outputs keep global memory.

#include "braze/sched/keep_intermediates_in_registers.h"

#include <gtest/gtest.h>

#include "braze/ir/tensor_view.h"
#include "sched/fusion_fixtures.h"

namespace braze {
namespace {

TEST(KeepIntermediatesInRegisters, OnlyIntermediatesMove) {
  const test::SoftmaxFusion s = test::makeSoftmax();
  s.exp->setMemoryType(MemoryType::Shared);
  keepIntermediatesInRegisters(*s.fusion);
  for (const TensorView* tv : {s.max, s.max_b, s.shifted, s.exp, s.sum, s.sum_b})
    EXPECT_EQ(tv->memoryType(), MemoryType::Local) << tv->name();
  EXPECT_EQ(s.x->memoryType(), MemoryType::Global);
  EXPECT_EQ(s.y->memoryType(), MemoryType::Global);
}

}  // namespace
}  // namespace braze
