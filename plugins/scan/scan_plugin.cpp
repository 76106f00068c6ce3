// The scan scheduler as a plugin: the SDK's C++ base class turns it into the C table
// the host loads, and BRAZE_DEFINE_PLUGIN exports the entry point.

#include "braze/sdk/scheduler_plugin.h"
#include "scan_scheduler.h"

namespace braze::scan {

namespace {

class ScanPlugin : public sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = BRAZE_PLUGIN_ID;
  static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;
  static constexpr int kRank = 250;
  static constexpr const char* kDescription =
      "cumsum, cumprod, cummax and cummin with elementwise ops around them: one serial loop "
      "along the scan dim per thread";

  std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) override {
    return scan::canScheduleCompileTime(fusion);
  }
  std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info) override {
    return scan::canScheduleRunTime(fusion, info);
  }
  std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                         const SchedulerRuntimeInfo& info) override {
    return encodeParams(scan::computeHeuristics(fusion, info));
  }
  std::string describeParams(sdk::ParamBytes params) override {
    return toString(decodeParams(params));
  }
  void schedule(Fusion& fusion, sdk::ParamBytes params) override {
    scan::schedule(fusion, decodeParams(params));
  }
};

}  // namespace

}  // namespace braze::scan

BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, braze::scan::ScanPlugin)
