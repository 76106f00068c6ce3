// The TMA warp-specialized normalization scheduler as a plugin: the SDK's C++ base class turns it
// into the C table the host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include "braze/sdk/param_codec.h"
#include "braze/sdk/scheduler_plugin.h"
#include "tma_ws_normalization_scheduler.h"

namespace braze::tma_ws_normalization {

namespace {

class TmaWsNormalizationPlugin : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  // Below braze::inner_outer (150): tried first, and refuses the rows it is not faster on.
  static constexpr int kRank = 140;
  static constexpr const char* kDescription =
      "softmax, layer norm, RMS norm and any chain of row reductions and pointwise ops on long "
      "rows (sm_90+): each row split over a cluster of up to 16 CTAs, copied once into shared "
      "memory by 1-d bulk copies from a producer warp, partial results exchanged through "
      "distributed shared memory";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    return tma_ws_normalization::canScheduleCompileTime(fusion);
  }
  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    return tma_ws_normalization::canScheduleRunTime(fusion, info);
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(tma_ws_normalization::computeHeuristics(fusion, info));
  }
  std::vector<sdk::ParamField> paramFields() override {
    return sdk::paramFieldsOf<TmaWsNormalizationParams>();
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    tma_ws_normalization::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::tma_ws_normalization

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::tma_ws_normalization::TmaWsNormalizationPlugin)
