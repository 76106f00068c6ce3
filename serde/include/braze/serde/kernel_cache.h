#pragma once

// Braze's persistent kernel cache: compiled kernels on disk, one file per kernel, shared by
// every process that uses the same folder.
//
//   <directory>/kernels/<key>.bzk   one KernelEntry (serde/schema/kernel_entry.fbs), named by
//                                   the kernel's content address (kernelKey)
//
// Why one file per entry rather than one file with an index: a writer never rewrites what
// another wrote. Each entry is written to a temporary file in the same folder and renamed
// over its name, which is atomic, so concurrent processes need no lock: two writers of one key
// write the same bytes, and a reader sees a whole old file or a whole new one. Last use is the
// file's modification time (touched on every hit), which is what pruning by size drops first.
//
// Nothing read is trusted: a file is size-capped, run through the flatbuffers verifier, and its
// identifier, schema version, content address (recomputed from the stored source, name,
// options and NVRTC version) and cubin SHA-256 are checked before the kernel is used. A file
// that fails is skipped with its reason in the log, and the kernel is compiled again and
// rewritten: a cold start, never a crash and never a wrong kernel.

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "braze/runtime/kernel_store.h"

namespace braze::serde {

/// Where a persistent cache lives and how large it may grow: KernelCache (kernels/) and
/// RuntimeCache (runtime_cache.h, runtimes/) share the folder.
struct CacheOptions {
  /// The cache folder; entries live in its `kernels` and `runtimes` folders, made on the first
  /// write.
  std::filesystem::path directory;
  /// Size cap of the kernel entries together: after a write that passes it, the least recently
  /// used entries are removed until the total is within it.
  int64_t max_bytes = int64_t{2} << 30;
  /// The same for the runtimes' decisions (about a kilobyte each, one per exact argument set).
  int64_t max_runtime_bytes = int64_t{64} << 20;
  /// Where skipped entries and failed writes are reported ("braze: kernel cache: ..."); null:
  /// nowhere.
  std::ostream* log = nullptr;
};

struct KernelCacheCounters {
  int64_t hits = 0;
  int64_t misses = 0;   ///< no entry for the key
  int64_t skipped = 0;  ///< an entry that failed its checks (logged), treated as a miss
  int64_t writes = 0;
  int64_t write_failures = 0;  ///< logged
  int64_t pruned = 0;          ///< entries removed for the size cap
};

/// One entry file as `braze cache ls / inspect / verify` shows it.
struct KernelEntryInfo {
  std::filesystem::path path;
  std::string key;  ///< from the file name
  int64_t bytes = 0;
  std::filesystem::file_time_type last_use;
  bool valid = false;
  std::string problem;  ///< why it cannot be used, when not valid
  // Read from a valid entry:
  std::string kernel_name;
  std::string arch;   ///< "sm_90"
  std::string nvrtc;  ///< "13.0"
  std::string written_by;
  int64_t created_unix_seconds = 0;
  int64_t cubin_bytes = 0;
  int registers = 0;
  std::vector<std::string> nvrtc_options;
};

class KernelCache final : public KernelStore {
 public:
  explicit KernelCache(CacheOptions options);

  std::optional<CompiledKernel> find(const std::string& key) override;
  void insert(const std::string& key, const CompiledKernel& kernel) override;

  KernelCacheCounters counters() const;
  const CacheOptions& options() const { return options_; }
  std::filesystem::path entryPath(const std::string& key) const;

  /// Every entry file, checked, least recently used first.
  std::vector<KernelEntryInfo> entries() const;
  /// Removes the least recently used entries until they take at most `max_bytes` together, and
  /// leftover temporary files of writers that died; returns the entries removed.
  int64_t prune(int64_t max_bytes);
  /// Removes the entries that fail their checks or belong to another NVRTC (entries() says
  /// why); returns how many.
  int64_t removeInvalid();
  /// Removes every entry; returns how many.
  int64_t clear();

  /// Writes every valid entry into one file (a kernel bundle: serde/schema/kernel_bundle.fbs),
  /// through a temporary file and a rename: how a cache built ahead of time travels as one
  /// file. Returns how many entries it holds; throws braze::Error naming the path when it
  /// cannot be written.
  int64_t save(const std::filesystem::path& path) const;
  struct LoadReport {
    int64_t added = 0;
    int64_t skipped = 0;                ///< entries that failed their checks
    std::vector<std::string> problems;  ///< why each was skipped, or why the file was refused
  };
  /// Adds the entries of a bundle that pass every check an entry file in the folder must pass.
  /// A file that is not a readable bundle adds nothing and says why; never throws for bad
  /// bytes.
  LoadReport load(const std::filesystem::path& path);

 private:
  void report(const std::string& message) const;
  /// Writes an entry file's bytes under `key` (temporary file, then rename); the reason when
  /// it could not.
  std::optional<std::string> writeEntry(const std::string& key, std::span<const uint8_t> bytes);

  CacheOptions options_;
  mutable std::mutex mutex_;  // guards counters_ and the log
  KernelCacheCounters counters_;
};

/// The bytes of a kernel entry file for `kernel` under `key`.
std::vector<uint8_t> encodeKernelEntry(const std::string& key, const CompiledKernel& kernel);

/// A kernel entry read back, or why it cannot be used.
struct DecodedKernelEntry {
  std::optional<CompiledKernel> kernel;
  std::string problem;  ///< empty when `kernel` is set
  std::string key;      ///< the key the entry claims, when it could be read
  std::string written_by;
  int64_t created_unix_seconds = 0;
};
/// Checks and decodes entry file bytes (see the header comment for the checks). When
/// `expected_key` is not empty, the entry must be stored under that key. Never throws for bad
/// bytes.
DecodedKernelEntry decodeKernelEntry(std::span<const uint8_t> bytes,
                                     const std::string& expected_key = {});

/// Files larger than this are not read (no kernel entry comes near it).
inline constexpr int64_t kMaxKernelEntryBytes = int64_t{256} << 20;
/// Bundles larger than this are not read.
inline constexpr int64_t kMaxKernelBundleBytes = int64_t{4} << 30;

/// The cache folder the default cache uses: $BRAZE_CACHE_DIR, else $XDG_CACHE_HOME/braze, else
/// $HOME/.cache/braze; nullopt when BRAZE_CACHE_DIR is "off" or "0", or no folder can be named.
std::optional<std::filesystem::path> defaultCacheDirectory();

/// The options of the default caches: defaultCacheDirectory(), reporting to stderr; nullopt
/// when there is no folder.
std::optional<CacheOptions> defaultCacheOptions();

/// Makes the on-disk cache in defaultCacheDirectory() the process's default kernel store
/// (registerDefaultKernelStoreFactory): opened on the first compile, so a process that compiles
/// nothing never touches the folder. Reports to stderr. Call once, early (the main job and the
/// Python package do).
void useDefaultKernelCache();

}  // namespace braze::serde
