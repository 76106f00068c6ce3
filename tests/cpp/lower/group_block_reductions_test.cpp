// group-block-reductions: block reductions of one scope that do not depend on each other run as
// one blockReduceGroup; a reduction that reads another's result, or one across a barrier, is
// left alone.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/lower/lower.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GroupBlockReductionsTest, IndependentRowSumsMeetOnce) {
  const auto fusion = test::findScheduledCase("two_row_sums_grouped").build();
  const std::string source = generateCuda(*fusion).source;
  EXPECT_THAT(source, HasSubstr("braze::blockReduceGroup<true, false, false, 2>(braze_group, "
                                "braze::SumOp{}, 0.0f, braze_smem);"))
      << source;
  EXPECT_THAT(source, Not(HasSubstr("braze_value = braze::blockReduce<"))) << source;

  // Skipped, each reduction meets on its own.
  LowerOptions skipped;
  skipped.skip_passes = {"group-block-reductions"};
  const std::string apart = generateCuda(*fusion, skipped).source;
  EXPECT_THAT(apart, Not(HasSubstr("blockReduceGroup<"))) << apart;
  EXPECT_THAT(apart, HasSubstr("braze_value = braze::blockReduce<true, false, false>")) << apart;
}

TEST(GroupBlockReductionsTest, DependentReductionsStayApart) {
  // softmax: sum(exp(x - max(x))) reads the max, so each meets on its own.
  const std::string source = generateCuda(*test::findScheduledCase("softmax").build()).source;
  EXPECT_THAT(source, Not(HasSubstr("blockReduceGroup<"))) << source;
  EXPECT_THAT(source, HasSubstr("braze::blockReduce<true, false, false>(braze_value, braze::MaxOp"))
      << source;
}

}  // namespace
}  // namespace braze
