#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "braze/error.h"

namespace braze {

/// The checks a plugin goes through, in the order they run. Each failure names its stage.
enum class PluginStage {
  File,         ///< the file exists and is a shared library for this machine
  Manifest,     ///< the manifest beside it is valid and describes this file (sha256)
  Abi,          ///< plugin ABI major equal to the host's
  BuildTag,     ///< compiler family, C++ standard-library ABI and Braze ABI major equal
  Open,         ///< dlopen(RTLD_NOW | RTLD_LOCAL) succeeded
  EntrySymbol,  ///< `braze_plugin_info` is exported and returns a descriptor
  Identity,     ///< the descriptor matches the manifest
  Duplicate,    ///< no other plugin provides the same (id, version)
  Probe,        ///< loading it in a child process neither crashed nor hung
  Call,         ///< a scheduler function returned an error or threw
};

/// "file", "manifest", "abi", "build-tag", "open", "entry-symbol", "identity", "duplicate",
/// "probe", "call".
std::string_view stageName(PluginStage stage);

/// Why a plugin was refused or failed: the path, the stage, what was expected, what was found
/// and what to do. what() joins them into one message.
class PluginError : public Error {
 public:
  PluginError(std::filesystem::path path, PluginStage stage, std::string expected,
              std::string found, std::string fix);

  const std::filesystem::path& path() const { return path_; }
  PluginStage stage() const { return stage_; }
  const std::string& expected() const { return expected_; }
  const std::string& found() const { return found_; }
  const std::string& fix() const { return fix_; }

 private:
  std::filesystem::path path_;
  PluginStage stage_;
  std::string expected_;
  std::string found_;
  std::string fix_;
};

}  // namespace braze
