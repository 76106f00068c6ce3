// The inner-outer scheduler as a plugin: the SDK's C++ base class turns it into the C table
// the host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include "braze/sdk/scheduler_plugin.h"
#include "inner_outer_scheduler.h"

namespace braze::inner_outer {

namespace {

class InnerOuterPlugin : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  // After pointwise (100), before the reduction scheduler (200): it declines plain reductions,
  // which the reduction scheduler then takes.
  static constexpr int kRank = 150;
  static constexpr const char* kDescription =
      "Persistent normalizations (softmax, layer and RMS norm, forward and backward): rows kept "
      "in registers, column sums fused, multi-wave for long rows";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    return inner_outer::canScheduleCompileTime(fusion);
  }
  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    return inner_outer::canScheduleRunTime(fusion, info);
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(inner_outer::computeHeuristics(fusion, info));
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  std::vector<sdk::ParamField> paramFields() override {
    return sdk::paramFieldsOf<InnerOuterParams>();
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    inner_outer::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::inner_outer

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::inner_outer::InnerOuterPlugin)
