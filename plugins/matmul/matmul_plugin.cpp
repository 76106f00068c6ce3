// The matmul scheduler as a plugin: the SDK's C++ base class turns it into the C table the
// host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include "braze/sdk/param_codec.h"
#include "braze/sdk/scheduler_plugin.h"
#include "matmul_scheduler.h"

namespace braze::matmul_scheduler {

namespace {

class MatmulPlugin : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  static constexpr int kRank = 300;
  static constexpr const char* kDescription =
      "linear and matmul in bf16 or fp16 on Hopper, any layout, up to three batch dims, with "
      "fp32 operands' casts and the pointwise ops after them fused: a warp-specialized kernel of "
      "TMA copies and wgmma, "
      "tiles 128 x 64-256, K split over a cluster for few tiles";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    return matmul_scheduler::canScheduleCompileTime(fusion);
  }
  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    return matmul_scheduler::canScheduleRunTime(fusion, info);
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(matmul_scheduler::computeHeuristics(fusion, info));
  }
  std::vector<sdk::ParamField> paramFields() override { return sdk::paramFieldsOf<MatmulParams>(); }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    matmul_scheduler::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::matmul_scheduler

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::matmul_scheduler::MatmulPlugin)
