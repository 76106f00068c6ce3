// segmentFusion with the shipped schedulers, asked through the scheduler registry with the
// sizes of one run: norm backwards the inner-outer scheduler refuses whole at these row
// lengths come out as segments the schedulers accept, computing what the whole fusion does.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

#include "braze/segment/segmented_fusion.h"
#include "segment/segment_test_fusions.h"
#include "segment/segmented_evaluation.h"
#include "support/normalization_fusions.h"
#include "support/registry_segment_checker.h"
#include "support/shipped_registry.h"

namespace braze {
namespace {

using test::Normalization;
using test::RegistrySegmentChecker;
using ::testing::HasSubstr;

const SchedulerRegistry& registry() {
  static const test::ShippedRegistry shipped;
  return shipped.registry();
}

std::vector<const Expr*> allExprs(const Fusion& fusion) {
  const std::vector<Expr*> exprs = fusion.exprs();
  return {exprs.begin(), exprs.end()};
}

// Every segment accepted again by the registry, and the segmentation printed with the params
// summaries (the test log shows what each case gets).
void expectAccepted(const SegmentedFusion& segmented, RegistrySegmentChecker& checker,
                    const std::string& title) {
  std::cout << "== " << title << ": " << segmented.segments.size() << " segments\n";
  for (const Segment& segment : segmented.segments) {
    const SchedulerChoice choice = registry().choose(*segment.fusion, checker.runtimeInfo(segment));
    ASSERT_TRUE(choice.accepted()) << choice.describeAttempts();
    EXPECT_EQ(segment.scheduler, choice.scheduler->id + "@" + choice.scheduler->version);
    EXPECT_EQ(checker.summary(segment), choice.summary);
    std::cout << "segment " << segment.id << ": " << segment.scheduler << " " << choice.summary
              << "\n";
  }
  std::cout << segmented.toString();
}

struct NormCase {
  Normalization kind;
  DataType dtype;
  int64_t rows;
  int64_t n;
};

std::string caseName(const NormCase& c) {
  return toString(c.kind) + "_" + std::string(toString(c.dtype)) + "_" + std::to_string(c.n);
}

class NormBackwardSegmentationTest : public ::testing::TestWithParam<NormCase> {};

TEST_P(NormBackwardSegmentationTest, SplitIntoSegmentsTheSchedulersAccept) {
  const NormCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  RegistrySegmentChecker checker(registry(), *fusion,
                                 test::normalizationInputSizes(c.kind, c.rows, c.n));
  // Refused whole: the rows do not fit in registers next to the column partials.
  const Segment whole = extractSegment(*fusion, allExprs(*fusion));
  EXPECT_EQ(checker.accepts(whole), std::nullopt);
  EXPECT_THAT(checker.refusalReason(whole), HasSubstr("schedule the column sums separately"));

  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  EXPECT_GE(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, caseName(c));
  // The column sums (dw, db) are a reduction segment of their own.
  const Segment& last = segmented.segments.back();
  EXPECT_THAT(last.scheduler, HasSubstr("braze::reduction@"));
  // Small sizes, same segments: the pieces compute what the whole fusion computes.
  test::expectSameAsWhole(
      segmented,
      test::randomArguments(*fusion, test::normalizationInputSizes(c.kind, 4, 16), {}, 11));
}

INSTANTIATE_TEST_SUITE_P(
    RowsTooLongForColumnSums, NormBackwardSegmentationTest,
    ::testing::Values(NormCase{Normalization::LayerNormBackward, DataType::BFloat16, 1024, 8192},
                      NormCase{Normalization::LayerNormBackward, DataType::Float32, 1024, 8192},
                      NormCase{Normalization::LayerNormBackward, DataType::BFloat16, 1024, 16384},
                      NormCase{Normalization::LayerNormBackward, DataType::Float32, 1024, 16384},
                      NormCase{Normalization::RmsNormBackward, DataType::BFloat16, 1024, 16384},
                      NormCase{Normalization::RmsNormBackward, DataType::Float32, 1024, 16384}),
    [](const auto& info) { return caseName(info.param); });

TEST(RegistrySegmentationTest, ReductionsOverTwoAxesAreTwoReductionSegments) {
  const test::SegmentCase& c = test::segmentCase("two_axes");
  const std::unique_ptr<Fusion> fusion = c.make();
  RegistrySegmentChecker checker(registry(), *fusion, {{1024, 4096}});
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, "two_axes");
  for (const Segment& segment : segmented.segments)
    EXPECT_THAT(segment.scheduler, HasSubstr("braze::reduction@"));
  test::expectSameAsWhole(segmented, test::randomArguments(*fusion, c.sizes));
}

TEST(RegistrySegmentationTest, SoftmaxIsOneInnerOuterSegment) {
  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(Normalization::Softmax, DataType::BFloat16);
  RegistrySegmentChecker checker(registry(), *fusion, {{1024, 4096}});
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 1u);
  EXPECT_EQ(checker.calls, 1);
  expectAccepted(segmented, checker, "softmax");
  EXPECT_THAT(segmented.segments[0].scheduler, HasSubstr("braze::inner_outer@"));
}

}  // namespace
}  // namespace braze
