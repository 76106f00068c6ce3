// Unswitch: one hoisted check for a whole unrolled nest, a predicated copy for the tail.

#include <gtest/gtest.h>

#include "braze/lower/lower.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

TEST(UnswitchTest, HoistsTheBoundsOfTheNestCheckedAtItsLastIteration) {
  auto fusion = test::findScheduledCase("pointwise_unroll_unswitch").build();
  const std::string ir = printKernelIr(lowerFusion(*fusion));
  // The fast path: the last of the 4 unrolled iterations (i1 = 3) is in bounds, no checks.
  const size_t hoisted = ir.find("  if bidx * 512 + tidx + 384 < T0.size[0] * T0.size[1]:\n");
  const size_t tail = ir.find("  else:\n");
  ASSERT_NE(hoisted, std::string::npos) << ir;
  ASSERT_NE(tail, std::string::npos) << ir;
  const std::string fast = ir.substr(hoisted, tail - hoisted);
  const std::string slow = ir.substr(tail);
  EXPECT_EQ(fast.find("if bidx * 512 + tidx + i1 * 128"), std::string::npos) << fast;
  EXPECT_NE(slow.find("if bidx * 512 + tidx + i1 * 128 < T0.size[0] * T0.size[1]:"),
            std::string::npos)
      << slow;
}

TEST(UnswitchTest, SkippingTheUnswitchPassKeepsEveryCheckInline) {
  auto fusion = test::findScheduledCase("pointwise_unroll_unswitch").build();
  LowerOptions options;
  options.skip_passes = {"unswitch"};
  const std::string ir = printKernelIr(lowerFusion(*fusion, options));
  EXPECT_EQ(ir.find("else:"), std::string::npos) << ir;
}

}  // namespace
}  // namespace braze
