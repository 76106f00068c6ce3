// A scheduler plugin for tests of the plugin host, built in several deliberately broken
// variants selected by FIXTURE_MODE. Manifests are written by the tests themselves, so that
// each test controls exactly which field disagrees.

#include <csignal>
#include <stdexcept>
#include <thread>

#include "braze/sdk/scheduler_plugin.h"

#define FIXTURE_GOOD 0
#define FIXTURE_NO_ENTRY 1
#define FIXTURE_CRASH_ON_LOAD 2
#define FIXTURE_THROWS_IN_SCHEDULE 3
#define FIXTURE_HANGS_ON_LOAD 4
#define FIXTURE_UNRESOLVED_SYMBOL 5
#define FIXTURE_ONE_OP_ONLY 6

namespace {

#if FIXTURE_MODE == FIXTURE_CRASH_ON_LOAD
/// Runs when the library is loaded, before any Braze code could catch anything.
const int kCrash = [] {
  std::raise(SIGSEGV);
  return 0;
}();
#elif FIXTURE_MODE == FIXTURE_HANGS_ON_LOAD
const int kHang = [] {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  return 0;
}();
#elif FIXTURE_MODE == FIXTURE_UNRESOLVED_SYMBOL
}  // namespace
/// Defined nowhere: dlopen with RTLD_NOW must fail.
extern "C" int braze_fixture_symbol_defined_nowhere();
namespace {
const int kUnresolved = braze_fixture_symbol_defined_nowhere();
#endif

/// Accepts every fusion; params are one byte holding the version's major.
class FixtureScheduler : public braze::sdk::SchedulerPlugin {
 public:
  static constexpr const char* kId = FIXTURE_ID;
  static constexpr const char* kVersion = FIXTURE_VERSION;
  static constexpr int kRank = FIXTURE_RANK;
  static constexpr const char* kDescription = "Test fixture scheduler";

  std::optional<std::string> canScheduleCompileTime(const braze::Fusion& fusion) override {
    if (fusion.outputs().empty()) return std::string("the fusion has no outputs");
    return std::nullopt;
  }
  std::vector<uint8_t> computeHeuristics(const braze::Fusion& fusion,
                                         const braze::SchedulerRuntimeInfo& info) override {
    return {static_cast<uint8_t>(FIXTURE_VERSION[0] - '0')};
  }
  std::string describeParams(braze::sdk::ParamBytes params) override {
    return std::string(kId) + " major " + std::to_string(params.empty() ? -1 : params[0]);
  }
  void schedule(braze::Fusion& fusion, braze::sdk::ParamBytes params) override {
#if FIXTURE_MODE == FIXTURE_THROWS_IN_SCHEDULE
    throw std::runtime_error("fixture schedule failed on purpose");
#elif FIXTURE_MODE == FIXTURE_ONE_OP_ONLY
    // Accepts every fusion, but builds only those of one op: a scheduler whose checks are
    // looser than what it can do.
    if (fusion.exprs().size() > 1) throw std::runtime_error("fixture builds one op only");
#endif
  }
};

}  // namespace

#if FIXTURE_MODE != FIXTURE_NO_ENTRY
BRAZE_DEFINE_PLUGIN(FIXTURE_PACKAGE_VERSION, FixtureScheduler)
#endif
