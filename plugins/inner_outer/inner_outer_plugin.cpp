// The inner-outer scheduler as a plugin: the SDK's C++ base class turns it into the C table
// the host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include <algorithm>

#include "braze/sdk/scheduler_plugin.h"
#include "inner_outer_scheduler.h"

namespace braze::inner_outer {

namespace {

// The SDK's runtime info in the form the heuristics read.
InnerOuterRuntimeInfo innerOuterInfo(const SchedulerRuntimeInfo& info) {
  InnerOuterRuntimeInfo result;
  result.device = info.device;
  for (size_t i = 0; i < info.arguments.size(); ++i) {
    InnerOuterInput input;
    if (const auto* tensor = std::get_if<TensorArgumentInfo>(&info.arguments[i])) {
      input.sizes = tensor->sizes;
      input.strides = tensor->strides;
      // Unknown alignment (none given) allows no vector access.
      const int64_t alignment = i < info.data_alignments.size() ? info.data_alignments[i] : 0;
      input.data_alignment = std::clamp<int64_t>(alignment, 1, 16);
    } else {
      input.scalar = std::get<ScalarValue>(info.arguments[i]);
    }
    result.inputs.push_back(std::move(input));
  }
  return result;
}

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
    return inner_outer::canScheduleRunTime(fusion, innerOuterInfo(info));
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(inner_outer::computeHeuristics(fusion, innerOuterInfo(info)));
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    inner_outer::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::inner_outer

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::inner_outer::InnerOuterPlugin)
