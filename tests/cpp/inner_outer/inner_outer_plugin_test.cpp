// The inner-outer scheduler as a plugin: through its C entry point, and loaded from the build
// tree by SchedulerRegistry, chosen by name, declining plain reductions.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "braze/ops/reduction.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/sdk/plugin_abi.h"
#include "inner_outer_params.h"
#include "support/linked_plugin.h"
#include "support/normalization_fusions.h"
#include "support/shipped_registry.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

TEST(InnerOuterPluginTest, DescribesItself) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  EXPECT_STREQ(table.id, "braze::inner_outer");
  EXPECT_STREQ(table.version, "1.9.0");
  EXPECT_EQ(table.default_rank, 150);
}

TEST(InnerOuterPluginTest, SchedulesThroughTheCTableAndDeclinesRowSums) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  BrazeStatus status{};
  BrazeSchedulerHandle handle = table.create(&status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(test::Normalization::LayerNorm, DataType::BFloat16);
  const SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, {{64, 4096}, {4096}, {4096}});
  table.can_schedule_compile_time(handle, fusion.get(), &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);
  table.can_schedule_run_time(handle, fusion.get(), &info, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);
  BrazeBytes params{};
  table.compute_heuristics(handle, fusion.get(), &info, &params, &status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  const inner_outer::InnerOuterParams decoded =
      inner_outer::decodeParams(std::span<const uint8_t>(params.data, params.size));
  EXPECT_EQ(decoded.persistence, inner_outer::Persistence::Registers);
  EXPECT_EQ(decoded.vector_width, 8);
  BrazeString summary{};
  table.describe_params(handle, params, &summary, &status);
  EXPECT_EQ(std::string(summary.data, summary.size), inner_outer::toString(decoded));
  table.schedule(handle, fusion.get(), params, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK) << (status.message ? status.message : "");

  Fusion row_sum;
  row_sum.addOutput(sum(makeSymbolicTensor(row_sum, 2), {1}));
  table.can_schedule_compile_time(handle, &row_sum, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_DECLINED);
  EXPECT_THAT(status.message, HasSubstr("use the reduction scheduler"));
  table.destroy(handle);
}

TEST(InnerOuterPluginTest, LoadsFromTheBuildTreeAndIsChosenByName) {
  const test::ShippedRegistry shipped;
  const SchedulerRegistry& registry = shipped.registry();
  const SchedulerEntry& entry = registry.find("braze::inner_outer");
  EXPECT_EQ(entry.version, "1.9.0");
  EXPECT_EQ(entry.rank, 150);
  EXPECT_EQ(entry.path.filename().string().find("libbraze_inner_outer"), 0u) << entry.path;

  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(test::Normalization::Softmax, DataType::Float32);
  const ScheduledFusion scheduled = registry.schedule(
      *fusion, contiguousRuntimeInfo(*fusion, {{128, 1000}}), "braze::inner_outer");
  ASSERT_NE(scheduled.fusion, nullptr);
  EXPECT_EQ(scheduled.scheduler->id, "braze::inner_outer");
  EXPECT_THAT(scheduled.summary, HasSubstr("inner_outer{persistence=registers"));

  // A plain row sum: declined by name, with the reason.
  Fusion row_sum;
  row_sum.addOutput(sum(makeSymbolicTensor(row_sum, 2), {1}));
  EXPECT_THAT(
      [&] {
        registry.schedule(row_sum, contiguousRuntimeInfo(row_sum, {{128, 1000}}),
                          "braze::inner_outer");
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("use the reduction scheduler")));
  // Without a name it is never the inner-outer scheduler that takes it.
  try {
    const ScheduledFusion other =
        registry.schedule(row_sum, contiguousRuntimeInfo(row_sum, {{128, 1000}}));
    EXPECT_NE(other.scheduler->id, "braze::inner_outer");
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("braze::inner_outer"));
  }
}

}  // namespace
}  // namespace braze
