// The pointwise scheduler through its C entry point, as the plugin host calls it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "braze/eval/argument_binding.h"
#include "braze/ops/reduction.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/sdk/plugin_abi.h"
#include "pointwise/pointwise_cases.h"
#include "pointwise_params.h"
#include "support/linked_plugin.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

TEST(PointwisePluginTest, DescribesItself) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  EXPECT_STREQ(table.id, "braze::pointwise");
  EXPECT_STREQ(table.version, "1.0.0");
  EXPECT_EQ(table.struct_size, sizeof(BrazeSchedulerInfo));
}

TEST(PointwisePluginTest, SchedulesThroughTheCTable) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  BrazeStatus status{};
  BrazeSchedulerHandle handle = table.create(&status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(gelu(add(x, broadcast(bias, {true, false}))));
  const SchedulerRuntimeInfo info = contiguousRuntimeInfo(fusion, {{64, 512}, {512}});
  table.can_schedule_compile_time(handle, &fusion, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);
  table.can_schedule_run_time(handle, &fusion, &info, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);
  BrazeBytes params{};
  table.compute_heuristics(handle, &fusion, &info, &params, &status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  const pointwise::PointwiseParams decoded =
      pointwise::decodeParams(std::span<const uint8_t>(params.data, params.size));
  EXPECT_EQ(decoded.break_point, 1);
  EXPECT_EQ(decoded.vector_width, 4);
  BrazeString summary{};
  table.describe_params(handle, params, &summary, &status);
  EXPECT_EQ(std::string(summary.data, summary.size), pointwise::toString(decoded));
  table.schedule(handle, &fusion, params, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK) << (status.message ? status.message : "");
  table.destroy(handle);
}

TEST(PointwisePluginTest, DeclinesWithAReasonAndReportsErrors) {
  const BrazeSchedulerInfo& table = test::linkedSchedulerTable();
  BrazeStatus status{};
  BrazeSchedulerHandle handle = table.create(&status);
  Fusion fusion;
  fusion.addOutput(sum(makeSymbolicTensor(fusion, 2), {1}));
  table.can_schedule_compile_time(handle, &fusion, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_DECLINED);
  EXPECT_THAT(status.message, HasSubstr("reduction scheduler"));
  // Bytes of another scheduler: an ERROR status with the decoder's message, no exception.
  const uint8_t foreign[] = {1, 2, 3};
  BrazeString summary{};
  table.describe_params(handle, BrazeBytes{foreign, sizeof(foreign)}, &summary, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_ERROR);
  EXPECT_THAT(status.message, HasSubstr("belong to another scheduler"));
  table.destroy(handle);
}

}  // namespace
}  // namespace braze
