#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace braze {

/// The outcome of loading a plugin in a child process.
struct ProbeResult {
  bool ok = false;
  std::string reason;  ///< why not: the scanner's message, the signal, or the timeout
};

/// Runs `scanner LIBRARY` in a child process and waits at most `timeout`: a plugin that
/// crashes or hangs while loading cannot take this process down. The scanner exits 0 when
/// loadPlugin succeeded and otherwise prints the error on stderr.
ProbeResult probePlugin(const std::filesystem::path& scanner, const std::filesystem::path& library,
                        std::chrono::milliseconds timeout);

/// What identifies one build of a plugin file: a changed file is probed again.
struct PluginFileKey {
  std::string path;
  uintmax_t size = 0;
  int64_t mtime_ns = 0;
  std::string sha256;
  bool operator==(const PluginFileKey&) const = default;
};

PluginFileKey pluginFileKey(const std::filesystem::path& library);

/// Probe results remembered across processes in a JSON file, keyed by path, size, mtime and
/// sha256. A missing or unreadable cache file is an empty cache.
class PluginProbeCache {
 public:
  explicit PluginProbeCache(std::filesystem::path file);
  std::optional<ProbeResult> find(const PluginFileKey& key) const;
  /// Records the result and writes the file (errors writing it are ignored: the cache only
  /// saves time).
  void store(const PluginFileKey& key, const ProbeResult& result);

 private:
  std::filesystem::path file_;
};

}  // namespace braze
