#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace braze {

/// One scheduler as a plugin's manifest announces it.
struct ManifestScheduler {
  std::string id;       ///< "vendor::name"
  std::string version;  ///< semantic version "x.y.z"
  int32_t rank = 0;     ///< default rank; lower ranks are tried first
  std::string description;

  bool operator==(const ManifestScheduler&) const = default;
};

/// The JSON file beside a plugin library, read without loading the library:
///
///   {"format_version": 1, "library": "libacme.so", "sha256": "<64 hex digits>",
///    "abi": {"major": 1, "minor": 0}, "build_tag": "gcc-12;libstdc++-cxx11abi1;braze-0",
///    "package_version": "1.2.0",
///    "schedulers": [{"id": "acme::pointwise", "version": "1.2.0", "rank": 100,
///                    "description": "..."}]}
///
/// It is named after the library: libacme.so -> libacme.braze-plugin.json.
struct PluginManifest {
  static constexpr int kFormatVersion = 1;

  int format_version = kFormatVersion;
  std::string library;  ///< file name only, in the manifest's folder
  std::string sha256;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::string build_tag;
  std::string package_version;
  std::vector<ManifestScheduler> schedulers;

  bool operator==(const PluginManifest&) const = default;
};

/// The manifest file that belongs to `library`: same folder, extension ".braze-plugin.json".
std::filesystem::path manifestPathFor(const std::filesystem::path& library);

/// True when `path` names a manifest (ends in ".braze-plugin.json").
bool isManifestPath(const std::filesystem::path& path);

/// Parses manifest text. Throws PluginError (stage Manifest) naming `origin`, the field, what
/// was expected and what was found, and the fix, each once.
PluginManifest parseManifest(const std::string& text, const std::string& origin);

/// Reads and parses the manifest at `path`; throws PluginError as parseManifest does.
PluginManifest readManifest(const std::filesystem::path& path);

/// The manifest as JSON text (what parseManifest reads back).
std::string manifestToJson(const PluginManifest& manifest);

}  // namespace braze
