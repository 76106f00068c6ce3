// Loading a plugin library: each check in the documented order, each with its own error.

#include "braze/plugin/plugin_loader.h"

#include <array>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>  // before Boost.DLL, whose 1.74 headers use std::vector unincluded

#define BOOST_DLL_USE_STD_FS
#include <boost/dll/import.hpp>
#include <boost/dll/shared_library.hpp>
#include <boost/version.hpp>

#include "braze/plugin/sha256.h"

namespace braze {
namespace {

namespace fs = std::filesystem;

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = 62;  // EM_X86_64
constexpr const char* kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = 183;  // EM_AARCH64
constexpr const char* kHostMachineName = "aarch64";
#else
constexpr uint16_t kHostMachine = 0;
constexpr const char* kHostMachineName = "this machine";
#endif

std::string inQuotes(const std::string& text) {
  return "\"" + text + "\"";
}

std::string abiText(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

/// Reads the ELF header: a 64-bit little-endian shared object for this machine.
void checkFile(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    throw PluginError(
        path, PluginStage::File, "a shared library file",
        fs::exists(path, error) ? "something that is not a regular file" : "no such file",
        "Check the path, or remove the stale manifest that names it.");
  }
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 64> header{};
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  auto count = static_cast<size_t>(in.gcount());
  const std::string fix = "Point Braze at the plugin's .so built for " +
                          std::string(kHostMachineName) + ", not at another file.";
  if (count >= 7 && std::string(header.begin(), header.begin() + 7) == "!<arch>") {
    throw PluginError(path, PluginStage::File, "an ELF shared library", "a static archive",
                      "Build the plugin as a SHARED library (braze_add_scheduler_plugin does).");
  }
  if (count < 20 || header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') {
    throw PluginError(path, PluginStage::File, "an ELF shared library",
                      "a file without an ELF header (" + std::to_string(count) + " bytes read)",
                      fix);
  }
  if (header[4] != 2 || header[5] != 1) {
    throw PluginError(
        path, PluginStage::File, "a 64-bit little-endian ELF file",
        "ELF class " + std::to_string(header[4]) + ", data encoding " + std::to_string(header[5]),
        fix);
  }
  uint16_t type = static_cast<uint16_t>(header[16] | (header[17] << 8));
  uint16_t machine = static_cast<uint16_t>(header[18] | (header[19] << 8));
  if (type != 3) {  // ET_DYN
    throw PluginError(path, PluginStage::File, "an ELF shared object (ET_DYN)",
                      "ELF type " + std::to_string(type) +
                          (type == 1   ? " (an object file)"
                           : type == 2 ? " (an executable)"
                                       : ""),
                      "Build the plugin as a SHARED library.");
  }
  if (machine != kHostMachine) {
    throw PluginError(path, PluginStage::File,
                      "ELF machine " + std::to_string(kHostMachine) + " (" + kHostMachineName + ")",
                      "ELF machine " + std::to_string(machine), fix);
  }
}

PluginManifest checkManifest(const fs::path& library) {
  fs::path manifest_path = manifestPathFor(library);
  std::error_code error;
  if (!fs::exists(manifest_path, error)) {
    throw PluginError(library, PluginStage::Manifest,
                      "a manifest at '" + manifest_path.string() + "'", "none",
                      "Install the .braze-plugin.json the SDK wrote beside the library.");
  }
  // An invalid manifest throws a PluginError naming the manifest, what is wrong and the fix.
  PluginManifest manifest = readManifest(manifest_path);
  if (manifest.library != library.filename().string()) {
    throw PluginError(library, PluginStage::Manifest,
                      "the manifest to name library " + inQuotes(library.filename().string()),
                      inQuotes(manifest.library),
                      "Install each library with its own manifest, both renamed together.");
  }
  std::string sha256 = sha256OfFile(library);
  if (sha256 != manifest.sha256) {
    throw PluginError(library, PluginStage::Manifest,
                      "sha256 " + manifest.sha256 + " (from the manifest)",
                      "sha256 " + sha256 + " (of the library)",
                      "The library and its manifest come from different builds; reinstall "
                      "them together.");
  }
  return manifest;
}

void checkAbi(const fs::path& library, uint32_t major, uint32_t minor) {
  if (major != BRAZE_PLUGIN_ABI_MAJOR) {
    throw PluginError(library, PluginStage::Abi,
                      "plugin ABI " + std::to_string(BRAZE_PLUGIN_ABI_MAJOR) + ".x (supported " +
                          abiText(BRAZE_PLUGIN_ABI_MAJOR, BRAZE_PLUGIN_ABI_MINOR) + ")",
                      "plugin ABI " + abiText(major, minor),
                      major > BRAZE_PLUGIN_ABI_MAJOR
                          ? "Upgrade Braze, or use a plugin release built for this Braze."
                          : std::string("Rebuild the plugin against this Braze's SDK."));
  }
}

void checkBuildTag(const fs::path& library, const std::string& tag) {
  if (tag != BRAZE_BUILD_TAG) {
    throw PluginError(library, PluginStage::BuildTag, "build tag " + inQuotes(BRAZE_BUILD_TAG),
                      "build tag " + inQuotes(tag),
                      "Rebuild the plugin with the same compiler family, C++ standard library "
                      "ABI and Braze major version as this Braze.");
  }
}

/// Every library ever opened, never closed; keyed by absolute path.
struct OpenLibraries {
  std::mutex mutex;
  std::map<fs::path, std::shared_ptr<const LoadedPlugin>> loaded;
  std::vector<boost::dll::shared_library> libraries;
};

OpenLibraries& openLibraries() {
  static auto* libraries = new OpenLibraries();  // never destroyed: plugins outlive statics
  return *libraries;
}

void checkIdentity(const fs::path& library, const PluginManifest& manifest,
                   const BrazePluginInfo& info) {
  const std::string fix =
      "The library and its manifest disagree; rebuild the plugin so the SDK rewrites the "
      "manifest.";
  auto mismatch = [&](const std::string& what, const std::string& expected,
                      const std::string& found) {
    throw PluginError(library, PluginStage::Identity, what + " " + expected + " (manifest)",
                      found + " (library)", fix);
  };
  if (info.struct_size < sizeof(BrazePluginInfo) && info.struct_size < 48) {
    mismatch("descriptor size at least", "48", std::to_string(info.struct_size));
  }
  if (info.abi.major != manifest.abi_major || info.abi.minor != manifest.abi_minor) {
    mismatch("ABI", abiText(manifest.abi_major, manifest.abi_minor),
             abiText(info.abi.major, info.abi.minor));
  }
  std::string tag = info.build_tag ? info.build_tag : "";
  if (tag != manifest.build_tag) mismatch("build tag", inQuotes(manifest.build_tag), inQuotes(tag));
  std::string package = info.package_version ? info.package_version : "";
  if (package != manifest.package_version) {
    mismatch("package version", inQuotes(manifest.package_version), inQuotes(package));
  }
  if (info.scheduler_count != manifest.schedulers.size()) {
    mismatch("scheduler count", std::to_string(manifest.schedulers.size()),
             std::to_string(info.scheduler_count));
  }
  for (size_t i = 0; i < manifest.schedulers.size(); ++i) {
    const ManifestScheduler& expected = manifest.schedulers[i];
    const BrazeSchedulerInfo* found = info.schedulers[i];
    std::string where = "scheduler " + std::to_string(i);
    if (found == nullptr) mismatch(where, inQuotes(expected.id), "null");
    std::string id = found->id ? found->id : "";
    std::string version = found->version ? found->version : "";
    if (id != expected.id || version != expected.version) {
      mismatch(where, inQuotes(expected.id + "@" + expected.version), inQuotes(id + "@" + version));
    }
    if (found->default_rank != expected.rank) {
      mismatch(where + " rank", std::to_string(expected.rank), std::to_string(found->default_rank));
    }
    if (found->create == nullptr || found->destroy == nullptr ||
        found->can_schedule_compile_time == nullptr || found->can_schedule_run_time == nullptr ||
        found->compute_heuristics == nullptr || found->describe_params == nullptr ||
        found->schedule == nullptr) {
      mismatch(where + " functions", "all present", "a null function pointer");
    }
  }
}

/// Boost 1.76 renamed dll::import to dll::import_symbol; both return a callable that keeps
/// the library loaded.
template <typename Signature>
auto importFunction(const boost::dll::shared_library& library, const char* name) {
#if BOOST_VERSION >= 107600
  return boost::dll::import_symbol<Signature>(library, name);
#else
  return boost::dll::import <Signature>(library, name);
#endif
}

}  // namespace

fs::path pluginLibraryPath(const fs::path& library_or_manifest) {
  if (!isManifestPath(library_or_manifest)) return library_or_manifest;
  return library_or_manifest.parent_path() / readManifest(library_or_manifest).library;
}

PluginManifest checkPluginWithoutLoading(const fs::path& library_or_manifest) {
  fs::path library = pluginLibraryPath(library_or_manifest);
  checkFile(library);
  PluginManifest manifest = checkManifest(library);
  checkAbi(library, manifest.abi_major, manifest.abi_minor);
  checkBuildTag(library, manifest.build_tag);
  return manifest;
}

std::shared_ptr<const LoadedPlugin> loadPlugin(const fs::path& library_or_manifest) {
  std::error_code error;
  fs::path library = fs::absolute(pluginLibraryPath(library_or_manifest), error);
  OpenLibraries& open = openLibraries();
  {
    std::lock_guard lock(open.mutex);
    if (auto it = open.loaded.find(library); it != open.loaded.end()) return it->second;
  }
  PluginManifest manifest = checkPluginWithoutLoading(library);

  boost::dll::shared_library handle;
  try {
    handle.load(library, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    throw PluginError(library, PluginStage::Open, "dlopen(RTLD_NOW | RTLD_LOCAL) to succeed",
                      std::string("an error: ") + e.what(),
                      "Check that every library the plugin needs (ldd) is installed and "
                      "that it links against this Braze's libbraze_core.");
  }
  if (!handle.has(BRAZE_PLUGIN_ENTRY_SYMBOL)) {
    throw PluginError(library, PluginStage::EntrySymbol,
                      std::string("an exported symbol ") + BRAZE_PLUGIN_ENTRY_SYMBOL,
                      "no such symbol",
                      "Define the entry point with BRAZE_DEFINE_PLUGIN (extern \"C\", "
                      "visibility default).");
  }
  auto entry = importFunction<const BrazePluginInfo*()>(handle, BRAZE_PLUGIN_ENTRY_SYMBOL);
  const BrazePluginInfo* info = entry();
  if (info == nullptr) {
    throw PluginError(library, PluginStage::EntrySymbol,
                      std::string(BRAZE_PLUGIN_ENTRY_SYMBOL) + "() to return a descriptor",
                      "a null pointer", "Return a static BrazePluginInfo from the entry point.");
  }
  checkIdentity(library, manifest, *info);

  auto loaded = std::make_shared<LoadedPlugin>();
  loaded->library = library;
  loaded->manifest = std::move(manifest);
  loaded->info = info;
  loaded->abi_minor = std::min<uint32_t>(info->abi.minor, BRAZE_PLUGIN_ABI_MINOR);
  std::lock_guard lock(open.mutex);
  open.libraries.push_back(std::move(handle));
  auto [it, inserted] = open.loaded.emplace(library, std::move(loaded));
  return it->second;
}

std::vector<PluginCheck> inspectPlugin(const fs::path& library_or_manifest, bool load) {
  std::vector<PluginCheck> checks;
  auto run = [&](PluginStage stage, auto&& body) {
    try {
      checks.push_back({stage, true, body()});
      return true;
    } catch (const PluginError& e) {
      checks.push_back({e.stage(), false, e.what()});
    } catch (const std::exception& e) {
      checks.push_back({stage, false, e.what()});
    }
    return false;
  };
  fs::path library;
  if (!run(PluginStage::File, [&] {
        library = pluginLibraryPath(library_or_manifest);
        checkFile(library);
        return std::string("ELF shared object for ") + kHostMachineName;
      })) {
    return checks;
  }
  PluginManifest manifest;
  if (!run(PluginStage::Manifest, [&] {
        manifest = checkManifest(library);
        return manifestPathFor(library).string() + ", sha256 " + manifest.sha256;
      })) {
    return checks;
  }
  if (!run(PluginStage::Abi, [&] {
        checkAbi(library, manifest.abi_major, manifest.abi_minor);
        return "plugin ABI " + abiText(manifest.abi_major, manifest.abi_minor);
      })) {
    return checks;
  }
  if (!run(PluginStage::BuildTag, [&] {
        checkBuildTag(library, manifest.build_tag);
        return manifest.build_tag;
      })) {
    return checks;
  }
  if (!load) return checks;
  run(PluginStage::Identity, [&] {
    std::shared_ptr<const LoadedPlugin> loaded = loadPlugin(library);
    return std::string("descriptor matches the manifest; entry ") + BRAZE_PLUGIN_ENTRY_SYMBOL +
           " exported";
  });
  return checks;
}

}  // namespace braze
