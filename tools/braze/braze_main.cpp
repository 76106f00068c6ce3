// The `braze` command:
//   braze plugins list            every scheduler found, with status and reasons
//   braze plugins inspect FILE    a plugin's manifest, exports and checks, passed or failed

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "braze/plugin/plugin_loader.h"
#include "braze/plugin/scheduler_registry.h"

namespace {

int usage() {
  std::cerr << "usage: braze plugins list\n"
               "       braze plugins inspect FILE [--no-load]\n";
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

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 3 && std::string(argv[1]) == "plugins") {
      std::string command = argv[2];
      if (command == "list" && argc == 3) return listPlugins();
      if (command == "inspect" && (argc == 4 || argc == 5)) {
        bool load = !(argc == 5 && std::string(argv[4]) == "--no-load");
        return inspectPlugin(argv[3], load);
      }
    }
    return usage();
  } catch (const std::exception& e) {
    std::cerr << "braze: " << e.what() << "\n";
    return 1;
  }
}
