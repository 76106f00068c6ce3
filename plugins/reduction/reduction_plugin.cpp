// The reduction scheduler as a plugin: the SDK's C++ base class turns it into the C table the
// host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include "braze/sdk/scheduler_plugin.h"
#include "reduction_scheduler.h"

namespace braze::reduction {

namespace {

class ReductionPlugin : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  // After pointwise (rank 100), which takes the reduction-free fusions this one refuses.
  static constexpr int kRank = 200;
  static constexpr const char* kDescription =
      "Inner and outer reductions (sum, max, mean, var, var_mean) with fused prologue and "
      "epilogue: warp, block or grid per reduction, vectorized";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    return reduction::canScheduleCompileTime(fusion);
  }
  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    return reduction::canScheduleRunTime(fusion, info);
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(reduction::computeHeuristics(fusion, info));
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  std::vector<sdk::ParamField> paramFields() override {
    return sdk::paramFieldsOf<ReductionParams>();
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    reduction::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::reduction

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::reduction::ReductionPlugin)
