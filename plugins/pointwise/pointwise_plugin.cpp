// The pointwise scheduler as a plugin: the SDK's C++ base class turns it into the C table
// the host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include <algorithm>

#include "braze/sdk/scheduler_plugin.h"
#include "pointwise_scheduler.h"

namespace braze::pointwise {

namespace {

// The SDK's runtime info in the form the heuristics read.
PointwiseRuntimeInfo pointwiseInfo(const SchedulerRuntimeInfo& info) {
  PointwiseRuntimeInfo result;
  result.device = info.device;
  for (size_t i = 0; i < info.arguments.size(); ++i) {
    PointwiseInput input;
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

class PointwisePlugin : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  static constexpr int kRank = 100;
  static constexpr const char* kDescription =
      "Elementwise, broadcast, cast, where and permute fusions: 1D or 2D, vectorized";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    return pointwise::canScheduleCompileTime(fusion);
  }
  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    return pointwise::canScheduleRunTime(fusion, pointwiseInfo(info));
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(pointwise::computeHeuristics(fusion, pointwiseInfo(info)));
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    pointwise::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::pointwise

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::pointwise::PointwisePlugin)
