#include "braze/serde/kernel_cache.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "braze/driver/nvrtc_compiler.h"
#include "entry_files.h"

namespace braze::serde {

namespace fs = std::filesystem;
using detail::isKey;
using detail::kTemporarySuffix;

namespace {

constexpr std::string_view kEntrySuffix = ".bzk";
std::string version(std::pair<int, int> v) {
  return std::to_string(v.first) + "." + std::to_string(v.second);
}

}  // namespace

KernelCache::KernelCache(CacheOptions options) : options_(std::move(options)) {}

fs::path KernelCache::entryPath(const std::string& key) const {
  return options_.directory / "kernels" / (key + std::string(kEntrySuffix));
}

void KernelCache::report(const std::string& message) const {
  if (options_.log == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  *options_.log << "braze: kernel cache " << options_.directory.string() << ": " << message << "\n";
}

std::optional<CompiledKernel> KernelCache::find(const std::string& key) {
  const fs::path path = entryPath(key);
  std::string problem;
  std::optional<std::vector<uint8_t>> bytes =
      detail::readCapped(path, kMaxKernelEntryBytes, problem);
  if (!bytes) {
    const bool absent = problem == "absent";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++(absent ? counters_.misses : counters_.skipped);
    }
    if (!absent) report("skipping " + path.filename().string() + ": " + problem);
    return std::nullopt;
  }
  DecodedKernelEntry decoded = decodeKernelEntry(*bytes, key);
  if (!decoded.kernel) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++counters_.skipped;
    }
    report("skipping " + path.filename().string() + ": " + decoded.problem +
           "; the kernel is compiled again and the entry rewritten");
    return std::nullopt;
  }
  // Last use, for pruning; a read-only cache still serves.
  std::error_code ignored;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_.hits;
  return std::move(decoded.kernel);
}

std::optional<std::string> KernelCache::writeEntry(const std::string& key,
                                                   std::span<const uint8_t> bytes) {
  if (!isKey(key)) return "'" + key + "' is not a kernel key";
  if (std::optional<std::string> problem = detail::writeAtomically(
          options_.directory / "kernels", key + std::string(kEntrySuffix), bytes))
    return problem;
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_.writes;
  return std::nullopt;
}

void KernelCache::insert(const std::string& key, const CompiledKernel& kernel) {
  if (kernel.cubin().empty()) return;  // PTX-only compiles are not kept
  if (std::optional<std::string> problem = writeEntry(key, encodeKernelEntry(key, kernel))) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++counters_.write_failures;
    }
    report("cannot keep kernel " + kernel.kernelName() + ": " + *problem);
    return;
  }
  prune(options_.max_bytes);
}

KernelCacheCounters KernelCache::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

std::vector<KernelEntryInfo> KernelCache::entries() const {
  std::vector<KernelEntryInfo> result;
  std::error_code error;
  const fs::path folder = options_.directory / "kernels";
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name.size() <= kEntrySuffix.size() || !name.ends_with(kEntrySuffix) || name[0] == '.')
      continue;
    KernelEntryInfo info;
    info.path = path;
    info.key = name.substr(0, name.size() - kEntrySuffix.size());
    std::error_code ignored;
    info.bytes = static_cast<int64_t>(fs::file_size(path, ignored));
    info.last_use = fs::last_write_time(path, ignored);
    std::string problem;
    std::optional<std::vector<uint8_t>> bytes =
        detail::readCapped(path, kMaxKernelEntryBytes, problem);
    if (!bytes) {
      info.problem = problem;
    } else if (!isKey(info.key)) {
      info.problem = "its name is not a kernel key";
    } else {
      DecodedKernelEntry decoded = decodeKernelEntry(*bytes, info.key);
      if (!decoded.kernel) {
        info.problem = decoded.problem;
      } else {
        const CompiledKernel& kernel = *decoded.kernel;
        info.written_by = decoded.written_by;
        info.created_unix_seconds = decoded.created_unix_seconds;
        info.kernel_name = kernel.kernelName();
        info.arch = kernel.arch().toString();
        info.nvrtc = version(kernel.nvrtcVersion());
        info.cubin_bytes = static_cast<int64_t>(kernel.cubin().size());
        info.registers = kernel.resources().registers;
        info.nvrtc_options = kernel.nvrtcOptions();
        const std::pair<int, int> current = driver::nvrtcVersion();
        if (kernel.nvrtcVersion() != current) {
          info.problem = "compiled by NVRTC " + info.nvrtc + ", this process has NVRTC " +
                         version(current) + ": never used here (prune removes it when old)";
        } else {
          info.valid = true;
        }
      }
    }
    result.push_back(std::move(info));
  }
  std::sort(result.begin(), result.end(), [](const KernelEntryInfo& a, const KernelEntryInfo& b) {
    return a.last_use != b.last_use ? a.last_use < b.last_use : a.key < b.key;
  });
  return result;
}

int64_t KernelCache::prune(int64_t max_bytes) {
  const int64_t removed =
      detail::pruneLeastRecentlyUsed(options_.directory / "kernels", kEntrySuffix, max_bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  counters_.pruned += removed;
  return removed;
}

int64_t KernelCache::removeInvalid() {
  int64_t removed = 0;
  for (const KernelEntryInfo& entry : entries()) {
    std::error_code ignored;
    if (!entry.valid && fs::remove(entry.path, ignored)) ++removed;
  }
  return removed;
}

int64_t KernelCache::clear() {
  return detail::removeEntries(options_.directory / "kernels", kEntrySuffix);
}

std::optional<fs::path> defaultCacheDirectory() {
  if (const char* dir = std::getenv("BRAZE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    const std::string_view value(dir);
    if (value == "off" || value == "0") return std::nullopt;
    return fs::path(value);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return fs::path(xdg) / "braze";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return fs::path(home) / ".cache" / "braze";
  return std::nullopt;
}

std::optional<CacheOptions> defaultCacheOptions() {
  std::optional<fs::path> directory = defaultCacheDirectory();
  if (!directory) return std::nullopt;
  CacheOptions options;
  options.directory = *directory;
  options.log = &std::cerr;
  return options;
}

void useDefaultKernelCache() {
  registerDefaultKernelStoreFactory([]() -> std::shared_ptr<KernelStore> {
    std::optional<CacheOptions> options = defaultCacheOptions();
    return options ? std::make_shared<KernelCache>(std::move(*options)) : nullptr;
  });
}

}  // namespace braze::serde
