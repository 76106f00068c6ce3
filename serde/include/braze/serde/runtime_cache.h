#pragma once

// Braze's persistent decisions: each runtime's segmentation and per-segment scheduler and
// params, on disk beside the kernel cache, so that a warm process neither segments nor asks
// the schedulers' heuristics.
//
//   <directory>/runtimes/<key>.bzr   one RuntimeEntry (serde/schema/runtime_entry.fbs),
//                                    named by runtimeKey (braze/runtime/decision_store.h)
//
// Written and read as kernel entries are (kernel_cache.h): temporary file and rename, size
// cap, verifier, identifier, schema version, key, SHA-256 over every field. What the file
// cannot vouch for, the runtime checks when it restores an entry: every Expr position exists
// in the fusion, each segment's plugin is the library (sha256) that chose its params (else
// the loaded build of that scheduler rules on them: keep, recompute, or no longer supported),
// and each kernel recipe fits its segment (positions, dtypes, ranks, formulas over earlier
// nodes). A stale entry is logged, the runtime segments and schedules again, and the entry is
// rewritten.

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "braze/runtime/decision_store.h"
#include "braze/serde/kernel_cache.h"

namespace braze::serde {

struct RuntimeCacheCounters {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t skipped = 0;  ///< entries that failed their checks (logged)
  int64_t writes = 0;
  int64_t write_failures = 0;
};

class RuntimeCache final : public DecisionStore {
 public:
  /// Entries go to `options.directory`'s `runtimes` folder, pruned least recently used first
  /// past `options.max_runtime_bytes`.
  explicit RuntimeCache(CacheOptions options);

  std::optional<RuntimeDecisions> find(const std::string& key) override;
  void insert(const std::string& key, const RuntimeDecisions& decisions) override;

  RuntimeCacheCounters counters() const;
  std::filesystem::path entryPath(const std::string& key) const;
  /// Removes every entry; returns how many.
  int64_t clear();

  /// One entry file as `braze cache ls / verify` shows it.
  struct EntryInfo {
    std::filesystem::path path;
    std::string key;
    int64_t bytes = 0;
    bool valid = false;
    std::string problem;  ///< why it cannot be used, when not valid
    int64_t segments = 0;
  };
  /// Every entry file, checked as find() checks it (the file alone: whether its decisions still
  /// fit a fusion and its plugins is known only when a runtime restores them).
  std::vector<EntryInfo> entries() const;
  /// Removes the entries that fail their checks; returns how many.
  int64_t removeInvalid();

 private:
  void report(const std::string& message) const;

  CacheOptions options_;
  mutable std::mutex mutex_;
  RuntimeCacheCounters counters_;
};

/// The bytes of a runtime entry file.
std::vector<uint8_t> encodeRuntimeEntry(const std::string& key, const RuntimeDecisions& decisions);

/// Decisions read back, or why they cannot be used. Never throws for bad bytes.
struct DecodedRuntimeEntry {
  std::optional<RuntimeDecisions> decisions;
  std::string problem;
};
DecodedRuntimeEntry decodeRuntimeEntry(std::span<const uint8_t> bytes,
                                       const std::string& expected_key = {});

/// Runtime entries larger than this are not read.
inline constexpr int64_t kMaxRuntimeEntryBytes = int64_t{64} << 20;

/// Makes the on-disk caches in defaultCacheDirectory() the process's default kernel store and
/// decision store, opened on first use: a warm process neither segments, nor runs the
/// schedulers' heuristics, nor calls NVRTC for what an earlier one built. Reports to stderr.
void useDefaultPersistentCache();

}  // namespace braze::serde
