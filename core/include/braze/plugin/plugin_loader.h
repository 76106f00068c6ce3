#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "braze/plugin/plugin_error.h"
#include "braze/plugin/plugin_manifest.h"
#include "braze/sdk/plugin_abi.h"

namespace braze {

/// A plugin library loaded into this process. Libraries are never unloaded (plugin code may
/// have registered static state or handed out function pointers); shared_ptrs to this object,
/// held by every scheduler created from it, document that dependency.
struct LoadedPlugin {
  std::filesystem::path library;  ///< absolute path of the shared library
  PluginManifest manifest;
  const BrazePluginInfo* info = nullptr;
  /// ABI minor both sides understand: min(host's, plugin's).
  uint32_t abi_minor = 0;
};

/// One check of `inspectPlugin`, passed or failed.
struct PluginCheck {
  PluginStage stage;
  bool passed = false;
  std::string detail;  ///< what was found, or the failure's message
};

/// Resolves a path given by a user: a manifest names its library; a library is returned as is.
std::filesystem::path pluginLibraryPath(const std::filesystem::path& library_or_manifest);

/// The checks that need no plugin code to run, in order: file (an ELF shared library for this
/// machine), manifest (valid, naming this file, sha256 equal), ABI major, build tag. Returns
/// the manifest; throws PluginError at the first failure.
PluginManifest checkPluginWithoutLoading(const std::filesystem::path& library_or_manifest);

/// Every check including dlopen (RTLD_NOW | RTLD_LOCAL), the entry symbol and the identity
/// of the descriptor against the manifest. Throws PluginError at the first failure; the
/// duplicate check belongs to the registry. Loading the same file twice returns the same
/// object.
std::shared_ptr<const LoadedPlugin> loadPlugin(const std::filesystem::path& library_or_manifest);

/// Runs the checks of loadPlugin and reports each, stopping at the first failure (for
/// `braze plugins inspect`). When `load` is false, stops before running plugin code.
std::vector<PluginCheck> inspectPlugin(const std::filesystem::path& library_or_manifest, bool load);

}  // namespace braze
