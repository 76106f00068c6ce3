#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/plugin/plugin_error.h"
#include "braze/plugin/plugin_loader.h"
#include "braze/plugin/scheduler_filter.h"
#include "braze/plugin/scheduler_runtime_info.h"

namespace braze {

/// Where and how a SchedulerRegistry looks for plugins.
struct RegistryOptions {
  /// Searched first, in order (the explicit API call): plugin libraries, manifests or folders.
  std::vector<std::filesystem::path> explicit_paths;
  /// Read BRAZE_PLUGIN_PATH, BRAZE_SCHEDULERS and BRAZE_PLUGIN_SAFE_MODE.
  bool use_environment = true;
  /// The user's plugin folder; default $XDG_DATA_HOME/braze/plugins or
  /// ~/.local/share/braze/plugins.
  std::optional<std::filesystem::path> user_dir;
  /// The install prefix's plugin folder; default <libdir of libbraze_core>/braze/plugins.
  std::optional<std::filesystem::path> install_dir;
  /// The build tree's plugin folder; default the one this libbraze_core was built with.
  std::optional<std::filesystem::path> build_dir;
  /// Added to BRAZE_SCHEDULERS (after it), same syntax.
  std::string schedulers;
  /// Only schedulers shipped with Braze (install prefix and build tree folders).
  bool safe_mode = false;
  /// Probe new or changed plugins in a child process before loading them here.
  bool probe = true;
  /// The scanner executable; default $BRAZE_PLUGIN_SCANNER, else the one beside the build
  /// tree or the install prefix. With probing on and no scanner (none found, or an empty
  /// path here), plugins are refused rather than loaded without crash isolation.
  std::optional<std::filesystem::path> scanner;
  std::chrono::milliseconds probe_timeout{10000};
  /// Probe cache file; default $XDG_CACHE_HOME/braze/plugin-probe-cache.json or
  /// ~/.cache/braze/plugin-probe-cache.json.
  std::optional<std::filesystem::path> cache_file;
};

/// One scheduler as the registry knows it, usable or not.
struct SchedulerEntry {
  std::string id;
  std::string version;
  int32_t rank = 0;
  std::string description;
  std::filesystem::path path;  ///< the plugin library
  /// "available", "refused" (the plugin failed a check), "disabled" (BRAZE_SCHEDULERS or safe
  /// mode), "superseded" (a higher compatible version of the same id is used).
  std::string status;
  std::string reason;  ///< why not available
  std::shared_ptr<const LoadedPlugin> plugin;
  const BrazeSchedulerInfo* table = nullptr;

  bool available() const { return status == "available"; }
};

/// A scheduler that failed or declined while choosing, as reported to the user.
struct SchedulerAttempt {
  std::string scheduler;  ///< "id@version"
  std::filesystem::path path;
  std::string stage;   ///< canScheduleCompileTime, canScheduleRunTime, computeHeuristics, ...
  bool error = false;  ///< true: an error or exception; false: the scheduler declined
  std::string message;
};

/// A scheduler's decision for a fusion and one run's runtime info, made before any scheduling:
/// which scheduler accepted it and its params. Choosing is cheap next to scheduling, lowering
/// and compiling, so an executor cache recomputes the choice for new sizes and reuses its
/// kernels when the params bytes come out equal.
struct SchedulerChoice {
  const SchedulerEntry* scheduler = nullptr;  ///< null when none accepted
  std::vector<uint8_t> params;
  std::string summary;
  std::vector<SchedulerAttempt> attempts;  ///< schedulers that declined or failed, in order

  bool accepted() const { return scheduler != nullptr; }
  /// One line per attempt ("  id@version (path) stage declined: reason"), for messages.
  std::string describeAttempts() const;
};

/// The result of scheduling a fusion through the registry.
struct ScheduledFusion {
  std::unique_ptr<Fusion> fusion;  ///< a scheduled copy; the input fusion is not modified
  const SchedulerEntry* scheduler = nullptr;
  std::vector<uint8_t> params;
  std::string summary;
  std::vector<SchedulerAttempt> attempts;  ///< schedulers tried before, with why they failed
};

/// Finds plugins in the search order, loads them (after a child-process probe), and chooses a
/// scheduler for a fusion: candidates in order of BRAZE_SCHEDULERS preference, rank, id,
/// then version (highest first); a scheduler that throws or returns an error is reported and
/// the next one is tried.
/// One field of a scheduler's encoded params (plugin ABI 1.2): 8 little-endian bytes at
/// `offset`, of kind "int64", "bool" or "float64".
struct SchedulerParamField {
  std::string name;
  std::string kind;
  size_t offset = 0;
};

class SchedulerRegistry {
 public:
  explicit SchedulerRegistry(RegistryOptions options = {});

  /// Every scheduler found, usable or not, sorted by rank, id, version (highest first).
  const std::vector<SchedulerEntry>& entries() const { return entries_; }
  /// Plugin files that could not be loaded at all, with their error.
  const std::vector<std::pair<std::filesystem::path, std::string>>& failures() const {
    return failures_;
  }
  /// The folders searched, in order.
  const std::vector<std::filesystem::path>& searchPath() const { return search_path_; }

  /// Available schedulers in the order they are tried.
  std::vector<const SchedulerEntry*> candidates() const;
  /// When no scheduler is available: why, for an error message (each scheduler found with its
  /// status and reason, each plugin file that failed to load, and the folders searched).
  /// Empty while some scheduler is available.
  std::string describeNoneAvailable() const;
  /// The available scheduler `name` ("id", "name" or "name@version-prefix"). Throws
  /// braze::Error listing what is available when there is none.
  const SchedulerEntry& find(const std::string& name) const;

  /// Schedules a copy of `fusion` with the first candidate (or only `name` when given) that
  /// accepts it. Throws braze::Error listing every attempt when none does.
  ScheduledFusion schedule(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                           const std::string& name = "") const;

  /// The first candidate (or only `name` when given) whose compile-time and run-time checks
  /// pass and whose heuristics succeed, without scheduling anything. Declines and failures are
  /// recorded in the choice's attempts; none accepting gives a choice with no scheduler.
  SchedulerChoice choose(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                         const std::string& name = "") const;
  /// `entry`'s checks and heuristics alone (the choice has no scheduler when it declines).
  SchedulerChoice chooseWith(const SchedulerEntry& entry, const Fusion& fusion,
                             const SchedulerRuntimeInfo& info) const;
  /// `entry`'s structural check alone: nullopt when it accepts, else its reason.
  std::optional<std::string> checkCompileTime(const SchedulerEntry& entry,
                                              const Fusion& fusion) const;
  /// `entry`'s ruling on `params`, which the build of its id whose version was `old_version`
  /// computed for `fusion` (a persistent cache's entry, now that the plugin changed): its
  /// review_params (plugin ABI 1.1), or RECOMPUTE for a plugin without one or one that fails.
  BrazeReviewVerdict reviewParams(const SchedulerEntry& entry, const Fusion& fusion,
                                  const SchedulerRuntimeInfo& info, const std::string& old_version,
                                  const std::vector<uint8_t>& params) const;
  /// The fields of `entry`'s params by name (plugin ABI 1.2 param_fields): empty for a plugin
  /// without the entry or with opaque params. Throws braze::Error when the plugin fails or
  /// describes a field that is malformed.
  std::vector<SchedulerParamField> paramFields(const SchedulerEntry& entry) const;
  /// `entry`'s one-line summary of `params`; throws braze::Error with the plugin's message when
  /// it cannot read them.
  std::string describeParams(const SchedulerEntry& entry, const std::vector<uint8_t>& params) const;
  /// A copy of `fusion` scheduled by `choice`'s scheduler with its params. Throws braze::Error
  /// naming the scheduler when scheduling fails.
  std::unique_ptr<Fusion> applySchedule(const SchedulerChoice& choice, const Fusion& fusion) const;

 private:
  /// applySchedule without throwing: null, with the scheduler's message in `failure`.
  std::unique_ptr<Fusion> trySchedule(const SchedulerChoice& choice, const Fusion& fusion,
                                      std::string& failure) const;
  void addPath(const std::filesystem::path& path);
  void addLibrary(const std::filesystem::path& library);
  void finish();

  RegistryOptions options_;
  SchedulerFilter filter_;
  std::vector<std::filesystem::path> search_path_;
  std::vector<std::filesystem::path> seen_;
  std::vector<SchedulerEntry> entries_;
  std::vector<std::pair<std::filesystem::path, std::string>> failures_;
  bool in_build_tree_ = false;             ///< this libbraze_core runs from its build tree
  std::filesystem::path missing_scanner_;  ///< where the scanner was looked for, not found
};

/// How many times this process has asked a scheduler anything (checks, heuristics, scheduling)
/// through any registry: what a warm start from the persistent cache keeps at zero, and tests
/// count.
int64_t schedulerCallCount();

}  // namespace braze
