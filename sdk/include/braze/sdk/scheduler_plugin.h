#pragma once

// The C++ side of the plugin SDK: subclass braze::sdk::SchedulerPlugin, give the class its
// identity as static members, and export the C table with BRAZE_DEFINE_PLUGIN:
//
//   class MyPointwise : public braze::sdk::SchedulerPlugin {
//    public:
//     static constexpr const char* kId = BRAZE_PLUGIN_ID;            // "acme::pointwise"
//     static constexpr const char* kVersion = BRAZE_PLUGIN_VERSION;  // "1.2.0"
//     static constexpr int kRank = 100;
//     static constexpr const char* kDescription = "Elementwise fusions, 1D or 2D tiles";
//     ... overrides ...
//   };
//   BRAZE_DEFINE_PLUGIN(BRAZE_PLUGIN_VERSION, MyPointwise)
//
// BRAZE_PLUGIN_ID and BRAZE_PLUGIN_VERSION come from the CMake function that builds the
// plugin (braze_add_scheduler_plugin's ID and VERSION); sdk/README.md shows the whole recipe.
//
// Every exception thrown by the class is caught at the boundary and returned as a status with
// its message; nothing C++ crosses the C table except the fusion and runtime info pointers.

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/sdk/param_codec.h"
#include "braze/sdk/plugin_abi.h"

namespace braze::sdk {

/// Encoded heuristic parameters, as the host hands them back to the plugin.
using ParamBytes = std::span<const uint8_t>;

/// A scheduler's ruling on params an earlier build of it computed (SchedulerPlugin::
/// reviewParams).
enum class ReviewVerdict : int32_t {
  Keep = BRAZE_REVIEW_KEEP,
  Recompute = BRAZE_REVIEW_RECOMPUTE,
  Unsupported = BRAZE_REVIEW_UNSUPPORTED,
};

/// "1.2" of "1.2.3": the part of a version whose change means new heuristics.
inline std::string_view majorMinorOf(std::string_view version) {
  const size_t first = version.find('.');
  if (first == std::string_view::npos) return version;
  const size_t second = version.find('.', first + 1);
  return second == std::string_view::npos ? version : version.substr(0, second);
}

namespace detail {
template <typename T>
struct Adapter;
}  // namespace detail

/// Base class of a scheduler. One instance is created per use through the C table; it need
/// not be thread-safe. Declining a fusion is not an error: return the reason.
class SchedulerPlugin {
 public:
  virtual ~SchedulerPlugin() = default;

  /// Structural check: nullopt to accept, otherwise why not (shown to users).
  virtual std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) = 0;
  /// Sizes, alignment, device: nullopt to accept, otherwise why not.
  virtual std::optional<std::string> canScheduleRunTime(
      [[maybe_unused]] const Fusion& fusion, [[maybe_unused]] const SchedulerRuntimeInfo& info) {
    return std::nullopt;
  }
  /// Heuristics only (no IR changes); the parameters encoded as bytes this class decodes.
  virtual std::vector<uint8_t> computeHeuristics(const Fusion& fusion,
                                                 const SchedulerRuntimeInfo& info) = 0;
  /// A printable one-line summary of encoded parameters.
  virtual std::string describeParams(ParamBytes params) = 0;
  /// Applies scheduling primitives to `fusion` according to `params`.
  virtual void schedule(Fusion& fusion, ParamBytes params) = 0;

  /// What a persistent cache should do with `params`, which the build of this scheduler whose
  /// version was `old_version` computed for `fusion` and `info`, now that another build of the
  /// plugin is loaded. The default keeps params from a build of the same major.minor version
  /// (by convention a patch release changes neither the heuristics nor the params' encoding)
  /// when the fusion still passes this build's checks, recomputes them otherwise, and gives up
  /// the fusion when this build declines it. Override it to keep params that are expensive to
  /// find (autotuned) across releases, or to recompute them on every change.
  virtual ReviewVerdict reviewParams(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                                     std::string_view old_version, ParamBytes params);

  /// The fields of this scheduler's params (ABI 1.2), for hosts that edit params by name
  /// (Python's fd.sched.compute_heuristics). Empty keeps the params opaque; a scheduler whose
  /// params come from encodeParams returns paramFieldsOf<ItsParams>(). A scheduler that lists
  /// its fields must check edited values in schedule() and refuse bad ones with an Error.
  virtual std::vector<ParamField> paramFields() { return {}; }

  /// This scheduler's version (its class's kVersion).
  std::string_view version() const { return version_; }

 private:
  template <typename T>
  friend struct detail::Adapter;
  std::string_view version_;
};

inline ReviewVerdict SchedulerPlugin::reviewParams(const Fusion& fusion,
                                                   const SchedulerRuntimeInfo& info,
                                                   std::string_view old_version,
                                                   [[maybe_unused]] ParamBytes params) {
  if (canScheduleCompileTime(fusion) || canScheduleRunTime(fusion, info))
    return ReviewVerdict::Unsupported;
  return majorMinorOf(old_version) == majorMinorOf(version()) ? ReviewVerdict::Keep
                                                              : ReviewVerdict::Recompute;
}

namespace detail {

/// One live scheduler behind a BrazeSchedulerHandle, with the buffers its answers point into.
struct Instance {
  std::unique_ptr<SchedulerPlugin> scheduler;
  std::string message;
  std::vector<uint8_t> params;
  std::string summary;
  std::string fields;
};

inline Instance* instanceOf(BrazeSchedulerHandle handle) {
  return reinterpret_cast<Instance*>(handle);
}

inline void setStatus(BrazeStatus* status, BrazeStatusCode code, const char* message) {
  status->code = code;
  status->message = message;
}

/// Runs `body` and turns any exception into an ERROR status whose message lives in `storage`.
template <typename Body>
void guarded(std::string& storage, BrazeStatus* status, Body&& body) noexcept {
  try {
    setStatus(status, BRAZE_STATUS_OK, nullptr);
    body();
    return;
  } catch (const std::exception& e) {
    try {
      storage = e.what();
    } catch (...) {
      storage.clear();
    }
  } catch (...) {
    try {
      storage = "unknown exception (not derived from std::exception)";
    } catch (...) {
      storage.clear();
    }
  }
  setStatus(status, BRAZE_STATUS_ERROR, storage.c_str());
}

inline void answer(Instance& instance, BrazeStatus* status,
                   const std::optional<std::string>& refusal) {
  if (!refusal) return;
  instance.message = *refusal;
  setStatus(status, BRAZE_STATUS_DECLINED, instance.message.c_str());
}

inline ParamBytes bytesOf(BrazeBytes bytes) {
  return ParamBytes(bytes.data, bytes.size);
}

/// The C functions of scheduler class T.
template <typename T>
struct Adapter {
  static BrazeSchedulerHandle create(BrazeStatus* status) noexcept {
    thread_local std::string create_message;
    Instance* instance = nullptr;
    guarded(create_message, status, [&] {
      auto owned = std::make_unique<Instance>();
      owned->scheduler = std::make_unique<T>();
      owned->scheduler->version_ = T::kVersion;
      instance = owned.release();
    });
    return reinterpret_cast<BrazeSchedulerHandle>(instance);
  }
  static void destroy(BrazeSchedulerHandle handle) noexcept {
    try {
      delete instanceOf(handle);
    } catch (...) {
      // A destructor that throws cannot be reported; the instance is gone either way.
    }
  }
  static void canScheduleCompileTime(BrazeSchedulerHandle handle, const void* fusion,
                                     BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    guarded(instance.message, status, [&] {
      answer(instance, status,
             instance.scheduler->canScheduleCompileTime(*static_cast<const Fusion*>(fusion)));
    });
  }
  static void canScheduleRunTime(BrazeSchedulerHandle handle, const void* fusion, const void* info,
                                 BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    guarded(instance.message, status, [&] {
      answer(
          instance, status,
          instance.scheduler->canScheduleRunTime(*static_cast<const Fusion*>(fusion),
                                                 *static_cast<const SchedulerRuntimeInfo*>(info)));
    });
  }
  static void computeHeuristics(BrazeSchedulerHandle handle, const void* fusion, const void* info,
                                BrazeBytes* params, BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    *params = BrazeBytes{nullptr, 0};
    guarded(instance.message, status, [&] {
      instance.params = instance.scheduler->computeHeuristics(
          *static_cast<const Fusion*>(fusion), *static_cast<const SchedulerRuntimeInfo*>(info));
      *params = BrazeBytes{instance.params.data(), instance.params.size()};
    });
  }
  static void describeParams(BrazeSchedulerHandle handle, BrazeBytes params, BrazeString* summary,
                             BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    *summary = BrazeString{"", 0};
    guarded(instance.message, status, [&] {
      instance.summary = instance.scheduler->describeParams(bytesOf(params));
      *summary = BrazeString{instance.summary.c_str(), instance.summary.size()};
    });
  }
  static void schedule(BrazeSchedulerHandle handle, void* fusion, BrazeBytes params,
                       BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    guarded(instance.message, status,
            [&] { instance.scheduler->schedule(*static_cast<Fusion*>(fusion), bytesOf(params)); });
  }
  static void paramFields(BrazeSchedulerHandle handle, BrazeString* fields,
                          BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    *fields = BrazeString{"", 0};
    guarded(instance.message, status, [&] {
      instance.fields.clear();
      for (const ParamField& field : instance.scheduler->paramFields()) {
        instance.fields +=
            field.name + " " + field.kind + " " + std::to_string(field.offset) + "\n";
      }
      *fields = BrazeString{instance.fields.c_str(), instance.fields.size()};
    });
  }
  static void reviewParams(BrazeSchedulerHandle handle, const void* fusion, const void* info,
                           const char* old_version, BrazeBytes params, int32_t* verdict,
                           BrazeStatus* status) noexcept {
    Instance& instance = *instanceOf(handle);
    *verdict = BRAZE_REVIEW_RECOMPUTE;
    guarded(instance.message, status, [&] {
      *verdict = static_cast<int32_t>(instance.scheduler->reviewParams(
          *static_cast<const Fusion*>(fusion), *static_cast<const SchedulerRuntimeInfo*>(info),
          old_version != nullptr ? old_version : "", bytesOf(params)));
    });
  }
};

}  // namespace detail

/// The C descriptor of scheduler class T, built from T::kId, kVersion, kRank, kDescription.
template <typename T>
const BrazeSchedulerInfo* schedulerInfo() {
  static const BrazeSchedulerInfo info{
      .struct_size = sizeof(BrazeSchedulerInfo),
      .id = T::kId,
      .version = T::kVersion,
      .default_rank = T::kRank,
      .description = T::kDescription,
      .create = &detail::Adapter<T>::create,
      .destroy = &detail::Adapter<T>::destroy,
      .can_schedule_compile_time = &detail::Adapter<T>::canScheduleCompileTime,
      .can_schedule_run_time = &detail::Adapter<T>::canScheduleRunTime,
      .compute_heuristics = &detail::Adapter<T>::computeHeuristics,
      .describe_params = &detail::Adapter<T>::describeParams,
      .schedule = &detail::Adapter<T>::schedule,
      .review_params = &detail::Adapter<T>::reviewParams,
      .param_fields = &detail::Adapter<T>::paramFields,
  };
  return &info;
}

/// The plugin descriptor listing scheduler classes Ts, for `braze_plugin_info` to return.
template <typename... Ts>
const BrazePluginInfo* pluginInfo(const char* package_version) {
  static const BrazeSchedulerInfo* const schedulers[] = {schedulerInfo<Ts>()...};
  static const BrazePluginInfo info{
      .struct_size = sizeof(BrazePluginInfo),
      .abi = {BRAZE_PLUGIN_ABI_MAJOR, BRAZE_PLUGIN_ABI_MINOR},
      .build_tag = BRAZE_BUILD_TAG,
      .package_version = package_version,
      .scheduler_count = sizeof...(Ts),
      .schedulers = schedulers,
  };
  return &info;
}

}  // namespace braze::sdk

/// Defines the plugin's entry point, listing its package version and scheduler classes.
#define BRAZE_DEFINE_PLUGIN(PACKAGE_VERSION, ...)                             \
  extern "C" BRAZE_PLUGIN_EXPORT const BrazePluginInfo* braze_plugin_info() { \
    return ::braze::sdk::pluginInfo<__VA_ARGS__>(PACKAGE_VERSION);            \
  }
