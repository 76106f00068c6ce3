// The reduction scheduler as the plugin host sees it: through its C entry point, and loaded by
// the scheduler registry from its own library (build tree or BRAZE_PLUGIN_PATH), chosen by name
// and by rank after the pointwise scheduler declines.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "braze/plugin/scheduler_registry.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/sdk/plugin_abi.h"
#include "reduction/reduction_cases.h"
#include "reduction_params.h"
#include "support/linked_plugin.h"
#include "support/shipped_registry.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Fusion> rowSum() {
  auto fusion = std::make_unique<Fusion>();
  fusion->addOutput(sum(makeSymbolicTensor(*fusion, 2, DataType::BFloat16), {1}));
  return fusion;
}

TEST(ReductionPluginTest, DescribesItself) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  EXPECT_STREQ(table.id, "braze::reduction");
  EXPECT_STREQ(table.version, "1.0.0");
  EXPECT_EQ(table.default_rank, 200);
  EXPECT_EQ(table.struct_size, sizeof(BrazeSchedulerInfo));
}

TEST(ReductionPluginTest, SchedulesThroughTheCTable) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  BrazeStatus status{};
  BrazeSchedulerHandle handle = table.create(&status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  std::unique_ptr<Fusion> fusion = rowSum();
  const SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, {{4096, 4096}});
  table.can_schedule_compile_time(handle, fusion.get(), &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);
  table.can_schedule_run_time(handle, fusion.get(), &info, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);
  BrazeBytes params{};
  table.compute_heuristics(handle, fusion.get(), &info, &params, &status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  const reduction::ReductionParams decoded =
      reduction::decodeParams(std::span<const uint8_t>(params.data, params.size));
  EXPECT_TRUE(decoded.inner);
  EXPECT_EQ(decoded.vector_width, 8);
  BrazeString summary{};
  table.describe_params(handle, params, &summary, &status);
  EXPECT_EQ(std::string(summary.data, summary.size), reduction::toString(decoded));
  table.schedule(handle, fusion.get(), params, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK) << (status.message ? status.message : "");
  table.destroy(handle);
}

TEST(ReductionPluginTest, DeclinesWithAReasonAndReportsErrors) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  BrazeStatus status{};
  BrazeSchedulerHandle handle = table.create(&status);
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(add(x, x));
  table.can_schedule_compile_time(handle, &fusion, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_DECLINED);
  EXPECT_THAT(status.message, HasSubstr("the pointwise scheduler handles"));
  const uint8_t foreign[] = {1, 2, 3};
  BrazeString summary{};
  table.describe_params(handle, BrazeBytes{foreign, sizeof(foreign)}, &summary, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_ERROR);
  EXPECT_THAT(status.message, HasSubstr("belong to another scheduler"));
  table.destroy(handle);
}

TEST(ReductionPluginTest, LoadedFromItsOwnLibraryAndChosenByName) {
  test::ShippedRegistry shipped;
  const SchedulerEntry& entry = shipped.registry().find("braze::reduction");
  ASSERT_TRUE(entry.available()) << entry.reason;
  EXPECT_EQ(entry.version, "1.0.0");
  EXPECT_EQ(entry.rank, 200);
  EXPECT_EQ(entry.path.filename(), "libbraze_reduction.so");

  const std::unique_ptr<Fusion> fusion = rowSum();
  const ScheduledFusion scheduled = shipped.registry().schedule(
      *fusion, contiguousRuntimeInfo(*fusion, {{1024, 4096}}), "braze::reduction");
  ASSERT_NE(scheduled.fusion, nullptr);
  EXPECT_EQ(scheduled.scheduler->id, "braze::reduction");
  EXPECT_EQ(scheduled.summary, reduction::toString(reduction::decodeParams(std::span<const uint8_t>(
                                   scheduled.params.data(), scheduled.params.size()))));
  EXPECT_THAT(scheduled.summary, HasSubstr("reduction[inner_block]"));
}

TEST(ReductionPluginTest, ChosenByRankWhenPointwiseDeclines) {
  test::ShippedRegistry shipped;
  bool has_pointwise = false;
  for (const SchedulerEntry* candidate : shipped.registry().candidates())
    has_pointwise = has_pointwise || candidate->id == "braze::pointwise";
  const std::unique_ptr<Fusion> fusion = rowSum();
  const ScheduledFusion scheduled =
      shipped.registry().schedule(*fusion, contiguousRuntimeInfo(*fusion, {{64, 256}}));
  EXPECT_EQ(scheduled.scheduler->id, "braze::reduction");
  if (has_pointwise) {
    // Pointwise (rank 100) was asked first and declined with its reason.
    ASSERT_FALSE(scheduled.attempts.empty());
    EXPECT_THAT(scheduled.attempts[0].scheduler, HasSubstr("braze::pointwise"));
    EXPECT_FALSE(scheduled.attempts[0].error);
  }
  // And a reduction-free fusion is never scheduled by it.
  Fusion pointwise;
  TensorView* x = makeSymbolicTensor(pointwise, 2);
  pointwise.addOutput(add(x, x));
  EXPECT_THAT(
      [&] {
        shipped.registry().schedule(pointwise, contiguousRuntimeInfo(pointwise, {{4, 4}}),
                                    "reduction");
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("has no reduction")));
}

}  // namespace
}  // namespace braze
