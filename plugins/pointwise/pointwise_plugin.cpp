// The pointwise scheduler as a plugin: the SDK's C++ base class turns it into the C table
// the host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include "braze/sdk/scheduler_plugin.h"
#include "pointwise_scheduler.h"

namespace braze::pointwise {

namespace {

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
    return pointwise::canScheduleRunTime(fusion, info);
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(pointwise::computeHeuristics(fusion, info));
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  std::vector<sdk::ParamField> paramFields() override {
    return sdk::paramFieldsOf<PointwiseParams>();
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    pointwise::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::pointwise

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::pointwise::PointwisePlugin)
