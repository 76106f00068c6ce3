// Discovery, probing, filtering and ordering of scheduler plugins, and choosing one for a
// fusion with failures reported rather than fatal.

#include "braze/plugin/scheduler_registry.h"

#include <dlfcn.h>
#include <atomic>
#include <cstddef>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "braze/plugin/plugin_probe.h"

namespace braze {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

fs::path homeFolder(const char* xdg_variable, const char* fallback) {
  if (auto xdg = environment(xdg_variable)) return fs::path(*xdg) / "braze";
  if (auto home = environment("HOME")) return fs::path(*home) / fallback / "braze";
  return fs::temp_directory_path() / "braze";
}

/// The folder libbraze_core was loaded from: the install prefix's libdir once installed.
fs::path coreLibraryFolder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&coreLibraryFolder), &info) == 0 || !info.dli_fname) {
    return {};
  }
  std::error_code error;
  return fs::weakly_canonical(fs::path(info.dli_fname), error).parent_path();
}

bool isSameFolder(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

SemanticVersion versionOf(const std::string& text) {
  return SemanticVersion::parse(text).value_or(SemanticVersion{});
}

/// Orders by rank, then id, then version, highest version first.
bool entryBefore(const SchedulerEntry& a, const SchedulerEntry& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  if (a.id != b.id) return a.id < b.id;
  return versionOf(a.version) > versionOf(b.version);
}

std::string display(const SchedulerEntry& entry) {
  return entry.id + "@" + entry.version;
}

/// "id@version (status)", with the reason when it is not available: what a list shows.
std::string displayWithStatus(const SchedulerEntry& entry) {
  return display(entry) + " (" + entry.status + (entry.reason.empty() ? "" : ": " + entry.reason) +
         ")";
}

/// The entries `name` names (an id, or the part of one after "::"), highest version first.
std::vector<const SchedulerEntry*> entriesNamed(const std::vector<SchedulerEntry>& entries,
                                                const std::string& name) {
  std::vector<const SchedulerEntry*> named;
  for (const SchedulerEntry& entry : entries) {
    if (schedulerNameMatches(name, entry.id)) named.push_back(&entry);
  }
  std::stable_sort(named.begin(), named.end(), [](const auto* a, const auto* b) {
    return versionOf(a->version) > versionOf(b->version);
  });
  return named;
}

/// Owns one scheduler instance for the duration of a choice.
std::atomic<int64_t> scheduler_calls{0};

// Every question the registry asks a scheduler goes through one instance.
class Instance {
 public:
  Instance(const SchedulerEntry& entry, BrazeStatus& status)
      : table_(entry.table), handle_(entry.table->create(&status)) {
    scheduler_calls.fetch_add(1, std::memory_order_relaxed);
  }
  ~Instance() {
    if (handle_ != nullptr) table_->destroy(handle_);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  BrazeSchedulerHandle handle() const { return handle_; }

 private:
  const BrazeSchedulerInfo* table_;
  BrazeSchedulerHandle handle_;
};

std::string messageOf(const BrazeStatus& status) {
  return status.message != nullptr ? std::string(status.message) : std::string("(no message)");
}

}  // namespace

int64_t schedulerCallCount() {
  return scheduler_calls.load(std::memory_order_relaxed);
}

SchedulerRegistry::SchedulerRegistry(RegistryOptions options) : options_(std::move(options)) {
  bool safe_mode = options_.safe_mode;
  std::string schedulers;
  std::vector<fs::path> environment_paths;
  if (options_.use_environment) {
    if (auto value = environment("BRAZE_PLUGIN_SAFE_MODE")) safe_mode = safe_mode || *value == "1";
    if (auto value = environment("BRAZE_SCHEDULERS")) schedulers = *value;
    if (auto value = environment("BRAZE_PLUGIN_PATH")) {
      std::stringstream stream(*value);
      std::string item;
      while (std::getline(stream, item, ':')) {
        if (!item.empty()) environment_paths.emplace_back(item);
      }
    }
  }
  if (!options_.schedulers.empty()) {
    schedulers += (schedulers.empty() ? "" : ",") + options_.schedulers;
  }
  filter_ = SchedulerFilter::parse(schedulers);
  options_.safe_mode = safe_mode;

  if (!options_.user_dir)
    options_.user_dir = homeFolder("XDG_DATA_HOME", ".local/share") / "plugins";
  const fs::path core_folder = coreLibraryFolder();
  if (!options_.install_dir) options_.install_dir = core_folder / BRAZE_INSTALL_PLUGIN_DIR;
  // The build tree's plugins and scanner belong to the build tree's libbraze_core only: an
  // installed copy must not pick up whatever a build folder happens to hold.
  in_build_tree_ = isSameFolder(core_folder, BRAZE_BUILD_CORE_DIR);
  if (!options_.build_dir && in_build_tree_) options_.build_dir = fs::path(BRAZE_BUILD_PLUGIN_DIR);
  if (!options_.scanner) {
    if (auto value = environment("BRAZE_PLUGIN_SCANNER")) {
      options_.scanner = fs::path(*value);
    } else {
      const fs::path choice =
          in_build_tree_ ? fs::path(BRAZE_BUILD_SCANNER) : core_folder / BRAZE_INSTALL_SCANNER;
      std::error_code error;
      if (fs::exists(choice, error)) {
        options_.scanner = choice;
      } else {
        missing_scanner_ = choice;
      }
    }
  }
  if (!options_.cache_file) {
    options_.cache_file = homeFolder("XDG_CACHE_HOME", ".cache") / "plugin-probe-cache.json";
  }

  if (!safe_mode) {
    for (const fs::path& path : options_.explicit_paths) addPath(path);
    for (const fs::path& path : environment_paths) addPath(path);
    addPath(*options_.user_dir);
  }
  addPath(*options_.install_dir);
  if (options_.build_dir) addPath(*options_.build_dir);
  finish();
}

void SchedulerRegistry::addPath(const fs::path& path) {
  if (path.empty()) return;
  search_path_.push_back(path);
  std::error_code error;
  if (!fs::is_directory(path, error)) {
    if (fs::exists(path, error)) addLibrary(pluginLibraryPath(path));
    return;
  }
  // Folders hold manifests, possibly one folder per plugin (the build tree, a vendor's
  // package): every folder is searched with its subfolders; unreadable ones are skipped.
  std::vector<fs::path> manifests;
  const auto options = fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it(path, options, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code entry_error;
    if (it->is_regular_file(entry_error) && isManifestPath(it->path())) {
      manifests.push_back(it->path());
    }
  }
  std::sort(manifests.begin(), manifests.end());
  for (const fs::path& manifest : manifests) {
    fs::path library;
    try {
      library = pluginLibraryPath(manifest);
    } catch (const PluginError& e) {
      failures_.emplace_back(manifest, e.what());
      continue;
    }
    addLibrary(library);
  }
}

void SchedulerRegistry::addLibrary(const fs::path& given) {
  std::error_code error;
  fs::path library = fs::weakly_canonical(fs::absolute(given, error), error);
  if (std::find(seen_.begin(), seen_.end(), library) != seen_.end()) return;
  seen_.push_back(library);

  // Entries from the manifest first, so that a plugin refused later is still listed.
  std::vector<SchedulerEntry> entries;
  auto refuse = [&](const std::string& reason) {
    if (entries.empty()) failures_.emplace_back(library, reason);
    for (SchedulerEntry& entry : entries) {
      entry.status = "refused";
      entry.reason = reason;
      entries_.push_back(entry);
    }
  };
  PluginManifest manifest;
  try {
    manifest = readManifest(manifestPathFor(library));
    for (const ManifestScheduler& scheduler : manifest.schedulers) {
      entries.push_back({scheduler.id, scheduler.version, scheduler.rank, scheduler.description,
                         library, "", "", nullptr, nullptr});
    }
    checkPluginWithoutLoading(library);
  } catch (const std::exception& e) {
    refuse(e.what());
    return;
  }

  // Schedulers nobody wants are never loaded: deny must keep a bad plugin's code out.
  bool any_allowed = false;
  for (SchedulerEntry& entry : entries) {
    if (auto refusal = filter_.refusal(entry.id, entry.version)) {
      entry.status = "disabled";
      entry.reason = *refusal;
    } else {
      any_allowed = true;
    }
  }
  if (!any_allowed) {
    for (SchedulerEntry& entry : entries) entries_.push_back(entry);
    return;
  }

  // Without the scanner a plugin that crashes while loading would take this process down.
  if (options_.probe && (!options_.scanner || options_.scanner->empty())) {
    const std::string found =
        missing_scanner_.empty()
            ? std::string("no scanner: RegistryOptions::scanner is empty")
            : "no scanner: $BRAZE_PLUGIN_SCANNER is unset and there is none at '" +
                  missing_scanner_.string() + "'";
    refuse(PluginError(library, PluginStage::Probe,
                       "the plugin scanner (braze-plugin-scanner) to probe the plugin in a "
                       "child process",
                       found,
                       in_build_tree_
                           ? "Build it (target braze_plugin_scanner, or link a program that loads "
                             "plugins to braze_runtime_plugins), point BRAZE_PLUGIN_SCANNER at "
                             "it, or turn probing off (RegistryOptions::probe = false) to load "
                             "without crash isolation."
                           : "Reinstall Braze, point BRAZE_PLUGIN_SCANNER at the scanner, or turn "
                             "probing off (RegistryOptions::probe = false) to load without crash "
                             "isolation.")
               .what());
    return;
  }
  if (options_.probe) {
    PluginFileKey key = pluginFileKey(library);
    PluginProbeCache cache(*options_.cache_file);
    std::optional<ProbeResult> result = cache.find(key);
    if (!result) {
      result = probePlugin(*options_.scanner, library, options_.probe_timeout);
      cache.store(key, *result);
    }
    if (!result->ok) {
      refuse(PluginError(library, PluginStage::Probe, "loading in a child process to succeed",
                         result->reason,
                         "The plugin is skipped until its file changes; fix or remove it.")
                 .what());
      return;
    }
  }

  std::shared_ptr<const LoadedPlugin> plugin;
  try {
    plugin = loadPlugin(library);
  } catch (const std::exception& e) {
    refuse(e.what());
    return;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    SchedulerEntry& entry = entries[i];
    entry.plugin = plugin;
    entry.table = plugin->info->schedulers[i];
    if (!entry.status.empty()) {
      entries_.push_back(entry);
      continue;
    }
    auto duplicate = std::find_if(entries_.begin(), entries_.end(), [&](const SchedulerEntry& e) {
      return e.id == entry.id && e.version == entry.version && e.status != "refused";
    });
    if (duplicate != entries_.end()) {
      entry.status = "refused";
      entry.reason =
          PluginError(library, PluginStage::Duplicate, "one plugin providing " + display(entry),
                      "another at '" + duplicate->path.string() + "', found first",
                      "Remove one of the two; the one earlier in the search order "
                      "is used.")
              .what();
    } else {
      entry.status = "available";
    }
    entries_.push_back(entry);
  }
}

void SchedulerRegistry::finish() {
  std::stable_sort(entries_.begin(), entries_.end(), entryBefore);
  // Only now is every version of an id known: a pin that matches none of them says so.
  for (SchedulerEntry& entry : entries_) {
    if (entry.status != "disabled") continue;
    std::vector<std::string> installed;
    for (const SchedulerEntry* same : entriesNamed(entries_, entry.id)) {
      installed.push_back(same->version);
    }
    entry.reason = filter_.refusal(entry.id, entry.version, installed).value_or(entry.reason);
  }
  // Several versions side by side: the highest allowed one of each id is used.
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].available()) continue;
    for (size_t j = 0; j < entries_.size(); ++j) {
      if (j == i || !entries_[j].available() || entries_[j].id != entries_[i].id) continue;
      if (versionOf(entries_[j].version) > versionOf(entries_[i].version)) {
        entries_[i].status = "superseded";
        entries_[i].reason = "version " + entries_[j].version + " is used; pin with " +
                             entries_[i].id + "@" + entries_[i].version + " to use this one";
        break;
      }
    }
  }
}

std::vector<const SchedulerEntry*> SchedulerRegistry::candidates() const {
  std::vector<const SchedulerEntry*> result;
  for (const SchedulerEntry& entry : entries_) {
    if (entry.available()) result.push_back(&entry);
  }
  auto preference = [&](const SchedulerEntry* entry) {
    return filter_.preference(entry->id).value_or(SIZE_MAX);
  };
  std::stable_sort(result.begin(), result.end(),
                   [&](const auto* a, const auto* b) { return preference(a) < preference(b); });
  return result;
}

const SchedulerEntry& SchedulerRegistry::find(const std::string& name) const {
  SchedulerFilter wanted = SchedulerFilter::parse(name + ",-*");
  const SchedulerEntry* best = nullptr;
  for (const SchedulerEntry& entry : entries_) {
    if (entry.status != "available" && entry.status != "superseded") continue;
    if (wanted.refusal(entry.id, entry.version)) continue;
    if (best == nullptr || versionOf(entry.version) > versionOf(best->version)) best = &entry;
  }
  if (best == nullptr) {
    std::string known;
    for (const SchedulerEntry& entry : entries_) known += "\n  " + displayWithStatus(entry);
    // A pin in the name that matches no version found: say which versions there are.
    std::string unmatched_pin;
    if (size_t at = name.find('@'); at != std::string::npos) {
      const std::string pin = name.substr(at + 1);
      std::string installed;
      bool any_matches = false;
      for (const SchedulerEntry* entry : entriesNamed(entries_, name.substr(0, at))) {
        installed += (installed.empty() ? "" : ", ") + display(*entry);
        any_matches = any_matches || versionMatchesPin(entry->version, pin);
      }
      if (!installed.empty() && !any_matches) {
        unmatched_pin =
            "The pin '@" + pin + "' matches no installed version (installed: " + installed + "). ";
      }
    }
    BRAZE_USER_CHECK(false) << "scheduler '" << name << "': no usable scheduler has this name. "
                            << unmatched_pin
                            << "Known schedulers:" << (known.empty() ? " none" : known)
                            << "\nInstall the plugin, or check BRAZE_PLUGIN_PATH.";
  }
  return *best;
}

std::string SchedulerRegistry::describeNoneAvailable() const {
  if (!candidates().empty()) return {};
  std::string text = "no scheduler is available";
  for (const SchedulerEntry& entry : entries_) {
    text += "\n  " + entry.id + "@" + entry.version + " (" + entry.path.string() + ") " +
            entry.status + (entry.reason.empty() ? "" : ": " + entry.reason);
  }
  for (const auto& [path, error] : failures_) text += "\n  " + path.string() + ": " + error;
  if (entries_.empty() && failures_.empty()) {
    text += "; no plugin was found in";
    if (search_path_.empty()) text += " an empty search path";
    for (const std::filesystem::path& folder : search_path_) text += " '" + folder.string() + "'";
    text += " (set BRAZE_PLUGIN_PATH to the folder of the scheduler plugins)";
  }
  return text;
}

std::string SchedulerChoice::describeAttempts() const {
  std::string text;
  for (const SchedulerAttempt& attempt : attempts) {
    text += "\n  " + attempt.scheduler + " (" + attempt.path.string() + ") " + attempt.stage +
            (attempt.error ? " failed: " : " declined: ") + attempt.message;
  }
  return text;
}

std::optional<std::string> SchedulerRegistry::checkCompileTime(const SchedulerEntry& entry,
                                                               const Fusion& fusion) const {
  BrazeStatus status{BRAZE_STATUS_OK, nullptr};
  Instance instance(entry, status);
  if (instance.handle() == nullptr || status.code != BRAZE_STATUS_OK) {
    return "create failed: " + (status.code == BRAZE_STATUS_OK ? std::string("create returned null")
                                                               : messageOf(status));
  }
  entry.table->can_schedule_compile_time(instance.handle(), &fusion, &status);
  if (status.code != BRAZE_STATUS_OK) return messageOf(status);
  return std::nullopt;
}

BrazeReviewVerdict SchedulerRegistry::reviewParams(const SchedulerEntry& entry,
                                                   const Fusion& fusion,
                                                   const SchedulerRuntimeInfo& info,
                                                   const std::string& old_version,
                                                   const std::vector<uint8_t>& params) const {
  const BrazeSchedulerInfo& table = *entry.table;
  const bool has_review =
      entry.plugin && entry.plugin->abi_minor >= 1 &&
      table.struct_size >= offsetof(BrazeSchedulerInfo, review_params) + sizeof(void*) &&
      table.review_params != nullptr;
  if (!has_review) return BRAZE_REVIEW_RECOMPUTE;
  BrazeStatus status{BRAZE_STATUS_OK, nullptr};
  Instance instance(entry, status);
  if (instance.handle() == nullptr || status.code != BRAZE_STATUS_OK) return BRAZE_REVIEW_RECOMPUTE;
  int32_t verdict = BRAZE_REVIEW_RECOMPUTE;
  table.review_params(instance.handle(), &fusion, &info, old_version.c_str(),
                      BrazeBytes{params.data(), params.size()}, &verdict, &status);
  if (status.code != BRAZE_STATUS_OK) return BRAZE_REVIEW_RECOMPUTE;
  switch (verdict) {
    case BRAZE_REVIEW_KEEP:
    case BRAZE_REVIEW_UNSUPPORTED:
      return static_cast<BrazeReviewVerdict>(verdict);
    default:
      return BRAZE_REVIEW_RECOMPUTE;
  }
}

std::vector<SchedulerParamField> SchedulerRegistry::paramFields(const SchedulerEntry& entry) const {
  const BrazeSchedulerInfo& table = *entry.table;
  const bool has_fields =
      entry.plugin && entry.plugin->abi_minor >= 2 &&
      table.struct_size >= offsetof(BrazeSchedulerInfo, param_fields) + sizeof(void*) &&
      table.param_fields != nullptr;
  if (!has_fields) return {};
  BrazeStatus status{BRAZE_STATUS_OK, nullptr};
  Instance instance(entry, status);
  BRAZE_USER_CHECK(instance.handle() != nullptr && status.code == BRAZE_STATUS_OK)
      << display(entry) << " (" << entry.path.string() << "): create failed: "
      << (status.code == BRAZE_STATUS_OK ? std::string("create returned null") : messageOf(status));
  BrazeString text{nullptr, 0};
  table.param_fields(instance.handle(), &text, &status);
  BRAZE_USER_CHECK(status.code == BRAZE_STATUS_OK)
      << display(entry) << ": param_fields failed: " << messageOf(status);
  std::vector<SchedulerParamField> fields;
  std::istringstream lines(std::string(text.data ? text.data : "", text.size));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream words(line);
    SchedulerParamField field;
    words >> field.name >> field.kind >> field.offset;
    BRAZE_USER_CHECK(!words.fail() && !field.name.empty() &&
                     (field.kind == "int64" || field.kind == "bool" || field.kind == "float64"))
        << display(entry) << " (" << entry.path.string() << "): param_fields gave the line '"
        << line << "', not '<name> <int64|bool|float64> <offset>'; the plugin is broken";
    fields.push_back(std::move(field));
  }
  return fields;
}

std::string SchedulerRegistry::describeParams(const SchedulerEntry& entry,
                                              const std::vector<uint8_t>& params) const {
  BrazeStatus status{BRAZE_STATUS_OK, nullptr};
  Instance instance(entry, status);
  BRAZE_USER_CHECK(instance.handle() != nullptr && status.code == BRAZE_STATUS_OK)
      << display(entry) << ": create failed";
  BrazeString summary{nullptr, 0};
  entry.table->describe_params(instance.handle(), BrazeBytes{params.data(), params.size()},
                               &summary, &status);
  BRAZE_USER_CHECK(status.code == BRAZE_STATUS_OK)
      << display(entry) << " cannot read these params: " << messageOf(status);
  return std::string(summary.data ? summary.data : "", summary.size);
}

SchedulerChoice SchedulerRegistry::chooseWith(const SchedulerEntry& entry, const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) const {
  SchedulerChoice choice;
  auto report = [&](const char* stage, const BrazeStatus& status) {
    choice.attempts.push_back({display(entry), entry.path, stage,
                               status.code != BRAZE_STATUS_DECLINED, messageOf(status)});
    return choice;
  };
  BrazeStatus status{BRAZE_STATUS_OK, nullptr};
  Instance instance(entry, status);
  if (instance.handle() == nullptr || status.code != BRAZE_STATUS_OK) {
    if (status.code == BRAZE_STATUS_OK) status = {BRAZE_STATUS_ERROR, "create returned null"};
    return report("create", status);
  }
  const BrazeSchedulerInfo& table = *entry.table;
  table.can_schedule_compile_time(instance.handle(), &fusion, &status);
  if (status.code != BRAZE_STATUS_OK) return report("canScheduleCompileTime", status);
  table.can_schedule_run_time(instance.handle(), &fusion, &info, &status);
  if (status.code != BRAZE_STATUS_OK) return report("canScheduleRunTime", status);
  BrazeBytes params{nullptr, 0};
  table.compute_heuristics(instance.handle(), &fusion, &info, &params, &status);
  if (status.code != BRAZE_STATUS_OK) return report("computeHeuristics", status);
  std::vector<uint8_t> bytes(params.data, params.data + params.size);
  BrazeString summary{nullptr, 0};
  table.describe_params(instance.handle(), BrazeBytes{bytes.data(), bytes.size()}, &summary,
                        &status);
  if (status.code != BRAZE_STATUS_OK) return report("describeParams", status);
  choice.scheduler = &entry;
  choice.params = std::move(bytes);
  choice.summary.assign(summary.data ? summary.data : "", summary.size);
  return choice;
}

SchedulerChoice SchedulerRegistry::choose(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                                          const std::string& name) const {
  const std::vector<const SchedulerEntry*> order =
      name.empty() ? candidates() : std::vector<const SchedulerEntry*>{&find(name)};
  SchedulerChoice result;
  for (const SchedulerEntry* entry : order) {
    SchedulerChoice choice = chooseWith(*entry, fusion, info);
    choice.attempts.insert(choice.attempts.begin(), result.attempts.begin(), result.attempts.end());
    result = std::move(choice);
    if (result.accepted()) break;
  }
  return result;
}

std::unique_ptr<Fusion> SchedulerRegistry::trySchedule(const SchedulerChoice& choice,
                                                       const Fusion& fusion,
                                                       std::string& failure) const {
  BRAZE_INTERNAL_CHECK(choice.accepted()) << "applySchedule: the choice has no scheduler";
  const SchedulerEntry& entry = *choice.scheduler;
  BrazeStatus status{BRAZE_STATUS_OK, nullptr};
  Instance instance(entry, status);
  if (instance.handle() == nullptr || status.code != BRAZE_STATUS_OK) {
    failure = status.code == BRAZE_STATUS_OK ? "create returned null" : messageOf(status);
    return nullptr;
  }
  // A scheduler that fails halfway leaves a half-scheduled fusion: work on a copy.
  std::unique_ptr<Fusion> copy = fusion.clone();
  std::vector<uint8_t> params = choice.params;
  entry.table->schedule(instance.handle(), copy.get(), BrazeBytes{params.data(), params.size()},
                        &status);
  if (status.code != BRAZE_STATUS_OK) {
    failure = messageOf(status);
    return nullptr;
  }
  return copy;
}

std::unique_ptr<Fusion> SchedulerRegistry::applySchedule(const SchedulerChoice& choice,
                                                         const Fusion& fusion) const {
  std::string failure;
  std::unique_ptr<Fusion> scheduled = trySchedule(choice, fusion, failure);
  BRAZE_USER_CHECK(scheduled != nullptr)
      << "scheduler " << display(*choice.scheduler) << " (" << choice.scheduler->path.string()
      << ") failed to schedule with params " << choice.summary << ": " << failure;
  return scheduled;
}

ScheduledFusion SchedulerRegistry::schedule(const Fusion& fusion, const SchedulerRuntimeInfo& info,
                                            const std::string& name) const {
  const std::vector<const SchedulerEntry*> order =
      name.empty() ? candidates() : std::vector<const SchedulerEntry*>{&find(name)};
  ScheduledFusion result;
  for (const SchedulerEntry* entry : order) {
    SchedulerChoice choice = chooseWith(*entry, fusion, info);
    result.attempts.insert(result.attempts.end(), choice.attempts.begin(), choice.attempts.end());
    if (!choice.accepted()) continue;
    std::string failure;
    result.fusion = trySchedule(choice, fusion, failure);
    if (result.fusion == nullptr) {
      result.attempts.push_back({display(*entry), entry->path, "schedule", true, failure});
      continue;
    }
    result.scheduler = entry;
    result.params = std::move(choice.params);
    result.summary = std::move(choice.summary);
    return result;
  }
  SchedulerChoice failed;
  failed.attempts = result.attempts;
  BRAZE_USER_CHECK(false) << "schedule: no scheduler accepted the fusion (" << order.size()
                          << " tried)." << failed.describeAttempts()
                          << "\nInstall a scheduler for it, or check BRAZE_SCHEDULERS.";
  return result;
}

}  // namespace braze
