#include "braze/plugin/plugin_manifest.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "braze/error.h"

namespace braze {
namespace {

constexpr const char* kManifestSuffix = ".braze-plugin.json";

using Json = nlohmann::json;

/// Reads `object[key]` as T, or throws naming the manifest, the key and the expected type.
template <typename T>
T field(const Json& object, const char* key, const char* expected, const std::string& where,
        const std::string& origin) {
  auto it = object.find(key);
  BRAZE_USER_CHECK(it != object.end())
      << "plugin manifest '" << origin << "': " << where << " has no field \"" << key
      << "\" (expected " << expected << "). Rebuild the plugin with the Braze SDK's "
      << "braze_add_scheduler_plugin, which writes the manifest.";
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    BRAZE_USER_CHECK(false) << "plugin manifest '" << origin << "': " << where << " field \"" << key
                            << "\" should be " << expected << ", found " << it->dump()
                            << ". Rebuild the plugin with the Braze SDK.";
  }
  return T{};
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
    BRAZE_USER_CHECK(false) << "plugin manifest '" << origin << "': expected JSON, found a "
                            << "syntax error (" << e.what()
                            << "). Rebuild the plugin with the Braze SDK.";
  }
  BRAZE_USER_CHECK(json.is_object())
      << "plugin manifest '" << origin << "': expected a JSON object, found " << json.type_name()
      << ". Rebuild the plugin with the Braze SDK.";
  PluginManifest manifest;
  const std::string top = "the manifest";
  manifest.format_version = field<int>(json, "format_version", "an integer", top, origin);
  BRAZE_USER_CHECK(manifest.format_version == PluginManifest::kFormatVersion)
      << "plugin manifest '" << origin << "': expected format_version "
      << PluginManifest::kFormatVersion << ", found " << manifest.format_version
      << ". Rebuild the plugin with an SDK matching this Braze.";
  manifest.library = field<std::string>(json, "library", "a file name", top, origin);
  manifest.sha256 = field<std::string>(json, "sha256", "64 hex digits", top, origin);
  BRAZE_USER_CHECK(manifest.sha256.size() == 64 &&
                   manifest.sha256.find_first_not_of("0123456789abcdef") == std::string::npos)
      << "plugin manifest '" << origin << "': expected sha256 as 64 lowercase hex digits, found \""
      << manifest.sha256 << "\". Rebuild the plugin with the Braze SDK.";
  Json abi = field<Json>(json, "abi", "an object {\"major\", \"minor\"}", top, origin);
  manifest.abi_major = field<uint32_t>(abi, "major", "an unsigned integer", "abi", origin);
  manifest.abi_minor = field<uint32_t>(abi, "minor", "an unsigned integer", "abi", origin);
  manifest.build_tag = field<std::string>(json, "build_tag", "a string", top, origin);
  manifest.package_version = field<std::string>(json, "package_version", "a string", top, origin);
  Json schedulers = field<Json>(json, "schedulers", "an array", top, origin);
  BRAZE_USER_CHECK(schedulers.is_array() && !schedulers.empty())
      << "plugin manifest '" << origin << "': expected \"schedulers\" to be a non-empty array, "
      << "found " << schedulers.dump() << ". A plugin must provide at least one scheduler.";
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
  BRAZE_USER_CHECK(in.good()) << "plugin manifest '" << path.string()
                              << "': expected a readable file, found none. Install the "
                              << "manifest the SDK wrote beside the library.";
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
