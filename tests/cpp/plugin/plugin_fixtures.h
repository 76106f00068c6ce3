#pragma once

// Installs the fixture plugins built in tests/plugin_fixtures into a fresh temporary folder,
// each with a manifest the test may alter field by field.

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "braze/plugin/plugin_manifest.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/plugin/sha256.h"
#include "braze/sdk/plugin_abi.h"

namespace braze::test {

/// The directory the fixture libraries were built in.
inline std::filesystem::path fixtureBuildDir() {
  return BRAZE_PLUGIN_FIXTURE_DIR;
}

/// A manifest describing fixture `name` as it was built: one scheduler `id`@`version`.
inline PluginManifest fixtureManifest(const std::filesystem::path& library, const std::string& id,
                                      const std::string& version, int rank) {
  PluginManifest manifest;
  manifest.library = library.filename().string();
  manifest.sha256 = sha256OfFile(library);
  manifest.abi_major = BRAZE_PLUGIN_ABI_MAJOR;
  manifest.abi_minor = BRAZE_PLUGIN_ABI_MINOR;
  manifest.build_tag = BRAZE_BUILD_TAG;
  manifest.package_version = version;
  manifest.schedulers.push_back({id, version, rank, "Test fixture scheduler"});
  return manifest;
}

/// A temporary folder, removed at destruction.
class TempPluginDir {
 public:
  TempPluginDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("braze-plugin-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempPluginDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

  /// Copies fixture library `fixture` (e.g. "fixture_good") here as lib<as>.so and writes its
  /// manifest, after `edit` changed it. Returns the library's path.
  std::filesystem::path install(const std::string& fixture, const std::string& id,
                                const std::string& version, int rank = 10,
                                const std::function<void(PluginManifest&)>& edit = {},
                                const std::string& as = "") {
    std::filesystem::path source = fixtureBuildDir() / ("lib" + fixture + ".so");
    std::filesystem::path library = path_ / ("lib" + (as.empty() ? fixture : as) + ".so");
    std::filesystem::copy_file(source, library, std::filesystem::copy_options::overwrite_existing);
    PluginManifest manifest = fixtureManifest(library, id, version, rank);
    if (edit) edit(manifest);
    writeManifest(library, manifestToJson(manifest));
    return library;
  }

  static void writeManifest(const std::filesystem::path& library, const std::string& text) {
    std::ofstream(manifestPathFor(library)) << text;
  }

 private:
  std::filesystem::path path_;
};

/// Options that see only the given folders, never the user's or the build tree's plugins.
struct IsolatedOptions {
  TempPluginDir user, install, empty, cache;
  RegistryOptions options;
  IsolatedOptions() {
    options.use_environment = false;
    options.user_dir = user.path();
    options.install_dir = install.path();
    options.build_dir = empty.path();
    options.scanner = std::filesystem::path(BRAZE_TEST_PLUGIN_SCANNER);
    options.cache_file = cache.path() / "cache.json";
  }
};

}  // namespace braze::test
