// The `braze` command:
//   braze plugins list            every scheduler found, with status and reasons
//   braze plugins inspect FILE    a plugin's manifest, exports and checks, passed or failed
//   braze plugins manifest LIBRARY [--expect ID@VERSION]
//                                 writes the manifest beside LIBRARY from its descriptor
//                                 (build and install time: this runs the plugin's code);
//                                 --expect: the descriptor must declare that scheduler
//   braze cache ls | inspect KEY | verify | prune [--max-size SIZE] | clear
//                                 the persistent kernel cache (cache_command.cpp)
//   braze compile DEF.bzf --arch ARCH [--dir DIR] (--signature SIG)... [--signatures FILE]
//                                 builds a saved definition's cache entries ahead of time
//                                 (compile_command.cpp)

#include <dlfcn.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "braze/plugin/plugin_loader.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/plugin/sha256.h"
#include "cache_command.h"
#include "compile_command.h"

namespace {

int usage() {
  std::cerr << "usage: braze plugins list\n"
               "       braze plugins inspect FILE [--no-load]\n"
               "       braze plugins manifest LIBRARY [--expect ID@VERSION]\n"
               "       braze cache ls | inspect KEY | verify | prune [--max-size SIZE] | clear "
               "[--dir DIR]\n"
               "       braze compile DEFINITION.bzf --arch sm_90|sm_100 [--dir DIR] "
               "(--signature SIG)... [--signatures FILE]\n";
  return 2;
}

int listPlugins() {
  braze::SchedulerRegistry registry;
  std::cout << "search path:\n";
  for (const auto& path : registry.searchPath()) std::cout << "  " << path.string() << "\n";
  std::cout << "schedulers (in order of rank, id, version):\n";
  if (registry.entries().empty()) std::cout << "  none\n";
  for (const braze::SchedulerEntry& entry : registry.entries()) {
    std::cout << "  " << entry.id << "@" << entry.version << "  rank " << entry.rank << "  "
              << entry.status << "  " << entry.path.string() << "\n";
    if (!entry.description.empty()) std::cout << "      " << entry.description << "\n";
    if (!entry.reason.empty()) std::cout << "      reason: " << entry.reason << "\n";
  }
  for (const auto& [path, reason] : registry.failures()) {
    std::cout << "  (unreadable) " << path.string() << "\n      reason: " << reason << "\n";
  }
  return 0;
}

int inspectPlugin(const std::string& file, bool load) {
  std::filesystem::path library;
  try {
    library = braze::pluginLibraryPath(file);
    braze::PluginManifest manifest = braze::readManifest(braze::manifestPathFor(library));
    std::cout << "manifest " << braze::manifestPathFor(library).string() << ":\n"
              << braze::manifestToJson(manifest);
  } catch (const std::exception& e) {
    std::cout << "manifest: " << e.what() << "\n";
  }
  bool all_passed = true;
  std::cout << "checks:\n";
  for (const braze::PluginCheck& check : braze::inspectPlugin(file, load)) {
    std::cout << "  " << (check.passed ? "pass " : "FAIL ") << braze::stageName(check.stage) << ": "
              << check.detail << "\n";
    all_passed = all_passed && check.passed;
  }
  if (all_passed && load) {
    std::shared_ptr<const braze::LoadedPlugin> plugin = braze::loadPlugin(file);
    std::cout << "exports " << BRAZE_PLUGIN_ENTRY_SYMBOL << ": plugin ABI "
              << plugin->info->abi.major << "." << plugin->info->abi.minor << " (negotiated "
              << BRAZE_PLUGIN_ABI_MAJOR << "." << plugin->abi_minor << "), package "
              << plugin->info->package_version << "\n";
    for (uint32_t i = 0; i < plugin->info->scheduler_count; ++i) {
      const BrazeSchedulerInfo* scheduler = plugin->info->schedulers[i];
      std::cout << "  scheduler " << scheduler->id << "@" << scheduler->version << " rank "
                << scheduler->default_rank << ": " << scheduler->description << "\n";
    }
  }
  return all_passed ? 0 : 1;
}

/// Reads the descriptor of a freshly built plugin and writes the manifest that describes it.
/// `expected` ("id@version", may be empty) is what the plugin's build says it provides.
int writeManifest(const std::string& file, const std::string& expected) {
  std::filesystem::path library = file;
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::cerr << "braze: cannot load '" << file << "': " << ::dlerror() << "\n";
    return 1;
  }
  auto entry = reinterpret_cast<BrazePluginEntry>(::dlsym(handle, BRAZE_PLUGIN_ENTRY_SYMBOL));
  const BrazePluginInfo* info = entry != nullptr ? entry() : nullptr;
  if (info == nullptr) {
    std::cerr << "braze: '" << file << "' does not export " << BRAZE_PLUGIN_ENTRY_SYMBOL
              << "; define it with BRAZE_DEFINE_PLUGIN.\n";
    return 1;
  }
  braze::PluginManifest manifest;
  manifest.library = library.filename().string();
  manifest.sha256 = braze::sha256OfFile(library);
  manifest.abi_major = info->abi.major;
  manifest.abi_minor = info->abi.minor;
  manifest.build_tag = info->build_tag;
  manifest.package_version = info->package_version;
  for (uint32_t i = 0; i < info->scheduler_count; ++i) {
    const BrazeSchedulerInfo* scheduler = info->schedulers[i];
    manifest.schedulers.push_back(
        {scheduler->id, scheduler->version, scheduler->default_rank, scheduler->description});
  }
  if (!expected.empty()) {
    std::string declared;
    bool found = false;
    for (const braze::ManifestScheduler& scheduler : manifest.schedulers) {
      const std::string name = scheduler.id + "@" + scheduler.version;
      found = found || name == expected;
      declared += (declared.empty() ? "" : ", ") + name;
    }
    if (!found) {
      std::cerr << "braze: '" << file << "' declares the schedulers [" << declared
                << "] but its build says it provides " << expected
                << " (braze_add_scheduler_plugin's ID and VERSION); give the scheduler class "
                   "kId = BRAZE_PLUGIN_ID and kVersion = BRAZE_PLUGIN_VERSION, or fix the "
                   "CMake call.\n";
      return 1;
    }
  }
  const std::filesystem::path path = braze::manifestPathFor(library);
  std::ofstream out(path);
  out << braze::manifestToJson(manifest);
  out.close();
  if (!out) {
    std::cerr << "braze: cannot write the manifest '" << path.string()
              << "'; check that its folder is writable.\n";
    return 1;
  }
  std::cout << "wrote " << path.string() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string(argv[1]) == "cache")
      return braze::cli::runCacheCommand(std::vector<std::string>(argv + 2, argv + argc));
    if (argc >= 2 && std::string(argv[1]) == "compile")
      return braze::cli::runCompileCommand(std::vector<std::string>(argv + 2, argv + argc));
    if (argc >= 3 && std::string(argv[1]) == "plugins") {
      std::string command = argv[2];
      if (command == "list" && argc == 3) return listPlugins();
      if (command == "inspect" && (argc == 4 || argc == 5)) {
        bool load = !(argc == 5 && std::string(argv[4]) == "--no-load");
        return inspectPlugin(argv[3], load);
      }
      if (command == "manifest" && argc == 4) return writeManifest(argv[3], "");
      if (command == "manifest" && argc == 6 && std::string(argv[4]) == "--expect") {
        return writeManifest(argv[3], argv[5]);
      }
    }
    return usage();
  } catch (const std::exception& e) {
    std::cerr << "braze: " << e.what() << "\n";
    return 1;
  }
}
