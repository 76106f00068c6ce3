#include "braze/plugin/plugin_error.h"

namespace braze {
namespace {

std::string composeMessage(const std::filesystem::path& path, PluginStage stage,
                           const std::string& expected, const std::string& found,
                           const std::string& fix) {
  return "plugin '" + path.string() + "' failed the " + std::string(stageName(stage)) +
         " check: expected " + expected + ", found " + found + ". " + fix;
}

}  // namespace

std::string_view stageName(PluginStage stage) {
  switch (stage) {
    case PluginStage::File:
      return "file";
    case PluginStage::Manifest:
      return "manifest";
    case PluginStage::Abi:
      return "abi";
    case PluginStage::BuildTag:
      return "build-tag";
    case PluginStage::Open:
      return "open";
    case PluginStage::EntrySymbol:
      return "entry-symbol";
    case PluginStage::Identity:
      return "identity";
    case PluginStage::Duplicate:
      return "duplicate";
    case PluginStage::Probe:
      return "probe";
    case PluginStage::Call:
      return "call";
  }
  return "unknown";
}

PluginError::PluginError(std::filesystem::path path, PluginStage stage, std::string expected,
                         std::string found, std::string fix)
    : Error(composeMessage(path, stage, expected, found, fix)),
      path_(std::move(path)),
      stage_(stage),
      expected_(std::move(expected)),
      found_(std::move(found)),
      fix_(std::move(fix)) {}

}  // namespace braze
