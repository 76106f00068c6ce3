// The C table that braze::sdk::SchedulerPlugin fills: identity, answers, declines with their
// reasons, and exceptions turned into an ERROR status at the boundary.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "braze/ir/fusion.h"
#include "braze/sdk/plugin_abi.h"
#include "braze/sdk/scheduler_plugin.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

/// Accepts fusions with at most `kMaxInputs` inputs; params are one byte, the input count.
class CountingScheduler : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = "test::counting";
  static constexpr const char* kVersion = "1.2.3";
  static constexpr int kRank = 7;
  static constexpr const char* kDescription = "Counts inputs";
  static constexpr size_t kMaxInputs = 2;

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    if (fusion.inputs().size() > kMaxInputs) {
      return "too many inputs: " + std::to_string(fusion.inputs().size());
    }
    return std::nullopt;
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return {static_cast<uint8_t>(fusion.inputs().size()),
            static_cast<uint8_t>(info.arguments.size())};
  }
  std::string describeParams(sdk::ParamBytes params) override {
    if (params.size() != 2) throw Error("describeParams: expected 2 bytes");
    return "inputs=" + std::to_string(params[0]) + " arguments=" + std::to_string(params[1]);
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    throw std::runtime_error("schedule exploded on purpose");
  }
};

class ThrowingConstructor : public CountingScheduler {
 public:
  static constexpr const char* kId = "test::throwing";
  ThrowingConstructor() { throw std::runtime_error("cannot construct"); }
};

TEST(PluginAbi, BuildTagNamesCompilerStdlibAndBrazeAbi) {
  std::string tag = BRAZE_BUILD_TAG;
  EXPECT_THAT(tag, HasSubstr("gcc-"));
  EXPECT_THAT(tag, HasSubstr("libstdc++-cxx11abi1"));
  EXPECT_THAT(tag, HasSubstr(";braze-" + std::to_string(BRAZE_ABI_MAJOR)));
}

TEST(PluginAbi, PluginInfoDescribesEverySchedulerClass) {
  const BrazePluginInfo* info = sdk::pluginInfo<CountingScheduler, ThrowingConstructor>("4.5.6");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->struct_size, sizeof(BrazePluginInfo));
  EXPECT_EQ(info->abi.major, BRAZE_PLUGIN_ABI_MAJOR);
  EXPECT_EQ(info->abi.minor, BRAZE_PLUGIN_ABI_MINOR);
  EXPECT_STREQ(info->build_tag, BRAZE_BUILD_TAG);
  EXPECT_STREQ(info->package_version, "4.5.6");
  ASSERT_EQ(info->scheduler_count, 2u);
  const BrazeSchedulerInfo* first = info->schedulers[0];
  EXPECT_EQ(first->struct_size, sizeof(BrazeSchedulerInfo));
  EXPECT_STREQ(first->id, "test::counting");
  EXPECT_STREQ(first->version, "1.2.3");
  EXPECT_EQ(first->default_rank, 7);
  EXPECT_STREQ(first->description, "Counts inputs");
  EXPECT_STREQ(info->schedulers[1]->id, "test::throwing");
}

TEST(PluginAbi, CallsThroughTheCTable) {
  const BrazeSchedulerInfo* table = sdk::schedulerInfo<CountingScheduler>();
  BrazeStatus status{-1, nullptr};
  BrazeSchedulerHandle handle = table->create(&status);
  ASSERT_NE(handle, nullptr);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);

  Fusion fusion;
  for (int i = 0; i < 3; ++i) makeSymbolicTensor(fusion, 1);

  table->can_schedule_compile_time(handle, &fusion, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_DECLINED);
  ASSERT_NE(status.message, nullptr);
  EXPECT_STREQ(status.message, "too many inputs: 3");

  SchedulerRuntimeInfo runtime;
  runtime.arguments.resize(5, ScalarValue(int64_t{1}));
  table->can_schedule_run_time(handle, &fusion, &runtime, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_OK);

  BrazeBytes params{nullptr, 0};
  table->compute_heuristics(handle, &fusion, &runtime, &params, &status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  ASSERT_EQ(params.size, 2u);
  EXPECT_EQ(params.data[0], 3);
  EXPECT_EQ(params.data[1], 5);

  BrazeString summary{nullptr, 0};
  table->describe_params(handle, params, &summary, &status);
  ASSERT_EQ(status.code, BRAZE_STATUS_OK);
  EXPECT_EQ(std::string(summary.data, summary.size), "inputs=3 arguments=5");

  // A braze::Error inside the plugin comes back as an ERROR status with its message.
  table->describe_params(handle, BrazeBytes{params.data, 1}, &summary, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_ERROR);
  EXPECT_THAT(status.message, HasSubstr("describeParams: expected 2 bytes"));

  table->schedule(handle, &fusion, params, &status);
  EXPECT_EQ(status.code, BRAZE_STATUS_ERROR);
  EXPECT_STREQ(status.message, "schedule exploded on purpose");
  table->destroy(handle);
}

TEST(PluginAbi, ConstructorExceptionBecomesAStatus) {
  const BrazeSchedulerInfo* table = sdk::schedulerInfo<ThrowingConstructor>();
  BrazeStatus status{-1, nullptr};
  EXPECT_EQ(table->create(&status), nullptr);
  EXPECT_EQ(status.code, BRAZE_STATUS_ERROR);
  EXPECT_STREQ(status.message, "cannot construct");
}

}  // namespace
}  // namespace braze
