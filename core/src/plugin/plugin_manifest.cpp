#include "braze/plugin/plugin_manifest.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "braze/plugin/plugin_error.h"

namespace braze {
namespace {

constexpr const char* kManifestSuffix = ".braze-plugin.json";
constexpr const char* kRebuild =
    "Rebuild the plugin with the Braze SDK matching this Braze: its braze_add_scheduler_plugin "
    "writes the manifest.";

using Json = nlohmann::json;

/// A manifest that cannot be used: its path, what was expected and found, and the one fix.
[[noreturn]] void invalid(const std::string& origin, const std::string& expected,
                          const std::string& found, const std::string& fix = kRebuild) {
  throw PluginError(origin, PluginStage::Manifest, expected, found, fix);
}

/// Reads `object[key]` as T, or throws naming the manifest, the key and the expected type.
template <typename T>
T field(const Json& object, const char* key, const char* expected, const std::string& where,
        const std::string& origin) {
  const std::string name = "field \"" + std::string(key) + "\" of " + where;
  auto it = object.find(key);
  if (it == object.end()) invalid(origin, name + " (" + expected + ")", "none");
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    invalid(origin, name + " to be " + expected, it->dump());
  }
}

}  // namespace

std::filesystem::path manifestPathFor(const std::filesystem::path& library) {
  std::filesystem::path manifest = library;
  manifest.replace_extension(kManifestSuffix);
  return manifest;
}

bool isManifestPath(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  std::string suffix = kManifestSuffix;
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

PluginManifest parseManifest(const std::string& text, const std::string& origin) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann's messages start with "[json.exception.parse_error.101] ": keep what follows.
    const std::string detail = e.what();
    const size_t bracket = detail.find("] ");
    invalid(origin, "JSON",
            "a syntax error (" +
                (bracket == std::string::npos ? detail : detail.substr(bracket + 2)) + ")");
  }
  if (!json.is_object()) invalid(origin, "a JSON object", json.type_name());
  PluginManifest manifest;
  const std::string top = "the manifest";
  manifest.format_version = field<int>(json, "format_version", "an integer", top, origin);
  if (manifest.format_version != PluginManifest::kFormatVersion) {
    invalid(origin, "format_version " + std::to_string(PluginManifest::kFormatVersion),
            std::to_string(manifest.format_version));
  }
  manifest.library = field<std::string>(json, "library", "a file name", top, origin);
  manifest.sha256 = field<std::string>(json, "sha256", "64 hex digits", top, origin);
  if (manifest.sha256.size() != 64 ||
      manifest.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    invalid(origin, "sha256 as 64 lowercase hex digits", "\"" + manifest.sha256 + "\"");
  }
  Json abi = field<Json>(json, "abi", "an object {\"major\", \"minor\"}", top, origin);
  manifest.abi_major = field<uint32_t>(abi, "major", "an unsigned integer", "abi", origin);
  manifest.abi_minor = field<uint32_t>(abi, "minor", "an unsigned integer", "abi", origin);
  manifest.build_tag = field<std::string>(json, "build_tag", "a string", top, origin);
  manifest.package_version = field<std::string>(json, "package_version", "a string", top, origin);
  Json schedulers = field<Json>(json, "schedulers", "an array", top, origin);
  if (!schedulers.is_array() || schedulers.empty()) {
    invalid(origin, "\"schedulers\" to be a non-empty array (a plugin provides at least one)",
            schedulers.dump());
  }
  for (size_t i = 0; i < schedulers.size(); ++i) {
    std::string where = "schedulers[" + std::to_string(i) + "]";
    ManifestScheduler scheduler;
    scheduler.id = field<std::string>(schedulers[i], "id", "\"vendor::name\"", where, origin);
    scheduler.version = field<std::string>(schedulers[i], "version", "\"x.y.z\"", where, origin);
    scheduler.rank = field<int32_t>(schedulers[i], "rank", "an integer", where, origin);
    scheduler.description =
        field<std::string>(schedulers[i], "description", "a string", where, origin);
    manifest.schedulers.push_back(std::move(scheduler));
  }
  return manifest;
}

PluginManifest readManifest(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in.good()) {
    invalid(path.string(), "a readable file", "none",
            "Install the .braze-plugin.json the SDK wrote beside the library.");
  }
  std::stringstream text;
  text << in.rdbuf();
  return parseManifest(text.str(), path.string());
}

std::string manifestToJson(const PluginManifest& manifest) {
  Json schedulers = Json::array();
  for (const ManifestScheduler& scheduler : manifest.schedulers) {
    schedulers.push_back({{"id", scheduler.id},
                          {"version", scheduler.version},
                          {"rank", scheduler.rank},
                          {"description", scheduler.description}});
  }
  Json json = {{"format_version", manifest.format_version},
               {"library", manifest.library},
               {"sha256", manifest.sha256},
               {"abi", {{"major", manifest.abi_major}, {"minor", manifest.abi_minor}}},
               {"build_tag", manifest.build_tag},
               {"package_version", manifest.package_version},
               {"schedulers", schedulers}};
  return json.dump(2) + "\n";
}

}  // namespace braze
