// `braze cache ...`: the persistent kernel cache (braze/serde/kernel_cache.h) from the shell.
//
//   braze cache ls [--dir DIR]                  every entry: key, kernel, arch, NVRTC, size, last
//                                               use, and why it is stale when it is
//   braze cache inspect KEY [--dir DIR]         one entry (KEY or a unique prefix of it) in full
//   braze cache verify [--dir DIR]              checks every entry; exit 1 when one fails
//   braze cache prune [--max-size SIZE] [--dir DIR]
//                                               removes stale entries, then the least recently
//                                               used until the rest fit SIZE (e.g. 512M, 2G;
//                                               default 2G)
//   braze cache clear [--dir DIR]               removes every entry (kernels and the kept
//                                               decisions of runtimes)
//   braze cache export FILE [--dir DIR]         writes every valid entry into one file (a kernel
//                                               bundle), to carry a cache built ahead of time
//   braze cache import FILE [--dir DIR]         adds a bundle's entries, each checked as an
//                                               entry file is; says why any was skipped
//
// DIR defaults to the folder the default cache uses ($BRAZE_CACHE_DIR, else
// $XDG_CACHE_HOME/braze, else ~/.cache/braze).

#include "cache_command.h"

#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"

namespace braze::cli {

namespace {

namespace fs = std::filesystem;

int usage() {
  std::cerr << "usage: braze cache ls [--dir DIR]\n"
               "       braze cache inspect KEY [--dir DIR]\n"
               "       braze cache verify [--dir DIR]\n"
               "       braze cache prune [--max-size SIZE] [--dir DIR]\n"
               "       braze cache clear [--dir DIR]\n"
               "       braze cache export FILE [--dir DIR]\n"
               "       braze cache import FILE [--dir DIR]\n";
  return 2;
}

std::string bytesText(int64_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  if (bytes >= (int64_t{1} << 30)) {
    os << static_cast<double>(bytes) / (1 << 30) << " GiB";
  } else if (bytes >= (1 << 20)) {
    os << static_cast<double>(bytes) / (1 << 20) << " MiB";
  } else if (bytes >= (1 << 10)) {
    os << static_cast<double>(bytes) / (1 << 10) << " KiB";
  } else {
    os.str("");
    os << bytes << " B";
  }
  return os.str();
}

std::string ageText(fs::file_time_type when) {
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() - when)
          .count();
  if (seconds < 120) return std::to_string(seconds) + " s ago";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min ago";
  if (seconds < 172800) return std::to_string(seconds / 3600) + " h ago";
  return std::to_string(seconds / 86400) + " days ago";
}

// "512M", "2G", "1048576": bytes, or nullopt when malformed.
std::optional<int64_t> parseSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t end = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(end);
  int shift = 0;
  if (unit == "K" || unit == "KiB") {
    shift = 10;
  } else if (unit == "M" || unit == "MiB") {
    shift = 20;
  } else if (unit == "G" || unit == "GiB") {
    shift = 30;
  } else if (!unit.empty()) {
    return std::nullopt;
  }
  if (value < 0) return std::nullopt;
  return value << shift;
}

void printEntry(const serde::KernelEntryInfo& entry, bool full) {
  std::cout << (full ? entry.key : entry.key.substr(0, 16)) << "  "
            << (entry.valid ? "valid" : "STALE") << "  " << std::setw(10) << bytesText(entry.bytes)
            << "  " << ageText(entry.last_use);
  if (!entry.kernel_name.empty())
    std::cout << "  " << entry.kernel_name << " " << entry.arch << " NVRTC " << entry.nvrtc;
  std::cout << "\n";
  if (!entry.valid) std::cout << "    reason: " << entry.problem << "\n";
}

}  // namespace

int runCacheCommand(const std::vector<std::string>& args) {
  if (args.empty()) return usage();
  const std::string& command = args[0];
  std::optional<fs::path> directory = serde::defaultCacheDirectory();
  std::optional<int64_t> max_size;
  std::vector<std::string> positional;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--dir" && i + 1 < args.size()) {
      directory = fs::path(args[++i]);
    } else if (args[i] == "--max-size" && i + 1 < args.size()) {
      max_size = parseSize(args[++i]);
      if (!max_size) {
        std::cerr << "braze cache: '" << args[i] << "' is not a size; write e.g. 512M or 2G\n";
        return 2;
      }
    } else {
      positional.push_back(args[i]);
    }
  }
  if (!directory) {
    std::cerr << "braze cache: no cache folder: BRAZE_CACHE_DIR is off and no --dir was given\n";
    return 2;
  }
  serde::CacheOptions options;
  options.directory = *directory;
  serde::KernelCache cache(options);
  const std::vector<serde::KernelEntryInfo> entries = cache.entries();

  if (command == "ls" && positional.empty()) {
    int64_t total = 0;
    int64_t stale = 0;
    for (const serde::KernelEntryInfo& entry : entries) {
      total += entry.bytes;
      stale += entry.valid ? 0 : 1;
    }
    const auto runtimes = static_cast<int64_t>(serde::RuntimeCache(options).entries().size());
    std::cout << "kernel cache " << directory->string() << ": " << entries.size() << " entries, "
              << bytesText(total) << (stale ? ", " : "")
              << (stale ? std::to_string(stale) + " stale" : "") << "; decisions of " << runtimes
              << " runtimes\n";
    for (const serde::KernelEntryInfo& entry : entries) printEntry(entry, false);
    return 0;
  }
  if (command == "inspect" && positional.size() == 1) {
    const std::string& prefix = positional[0];
    std::vector<const serde::KernelEntryInfo*> matches;
    for (const serde::KernelEntryInfo& entry : entries) {
      if (entry.key.rfind(prefix, 0) == 0) matches.push_back(&entry);
    }
    if (matches.size() != 1) {
      std::cerr << "braze cache inspect: " << matches.size() << " entries of "
                << directory->string() << " start with '" << prefix
                << "'; give more of the key (braze cache ls lists them)\n";
      return 1;
    }
    const serde::KernelEntryInfo& entry = *matches[0];
    std::cout << "path:       " << entry.path.string() << "\n"
              << "key:        " << entry.key << "\n"
              << "size:       " << bytesText(entry.bytes) << "\n"
              << "last use:   " << ageText(entry.last_use) << "\n"
              << "valid:      " << (entry.valid ? "yes" : "no: " + entry.problem) << "\n";
    if (!entry.kernel_name.empty()) {
      std::cout << "kernel:     " << entry.kernel_name << "\n"
                << "arch:       " << entry.arch << "\n"
                << "NVRTC:      " << entry.nvrtc << "\n"
                << "cubin:      " << bytesText(entry.cubin_bytes) << ", " << entry.registers
                << " registers\n"
                << "written by: " << entry.written_by << "\n"
                << "options:   ";
      for (const std::string& option : entry.nvrtc_options) std::cout << " " << option;
      std::cout << "\n";
    }
    return 0;
  }
  if (command == "verify" && positional.empty()) {
    int64_t stale = 0;
    for (const serde::KernelEntryInfo& entry : entries) {
      if (entry.valid) continue;
      ++stale;
      printEntry(entry, true);
    }
    const std::vector<serde::RuntimeCache::EntryInfo> runtimes =
        serde::RuntimeCache(options).entries();
    int64_t stale_runtimes = 0;
    for (const serde::RuntimeCache::EntryInfo& entry : runtimes) {
      if (entry.valid) continue;
      ++stale_runtimes;
      std::cout << entry.key << "  STALE  runtime decisions\n    reason: " << entry.problem << "\n";
    }
    std::cout << entries.size() - static_cast<size_t>(stale) << " of " << entries.size()
              << " kernel entries and " << runtimes.size() - static_cast<size_t>(stale_runtimes)
              << " of " << runtimes.size() << " runtime entries valid in " << directory->string()
              << "\n";
    stale += stale_runtimes;
    return stale == 0 ? 0 : 1;
  }
  if (command == "prune" && positional.empty()) {
    const int64_t invalid = cache.removeInvalid() + serde::RuntimeCache(options).removeInvalid();
    const int64_t pruned = cache.prune(max_size.value_or(options.max_bytes));
    std::cout << "removed " << invalid << " stale and " << pruned
              << " least recently used entries from " << directory->string() << "\n";
    return 0;
  }
  if (command == "export" && positional.size() == 1) {
    const int64_t count = cache.save(positional[0]);
    std::cout << "wrote " << count << " entries of " << directory->string() << " to "
              << positional[0] << "\n";
    return 0;
  }
  if (command == "import" && positional.size() == 1) {
    const serde::KernelCache::LoadReport report = cache.load(positional[0]);
    for (const std::string& problem : report.problems) std::cout << "skipped: " << problem << "\n";
    std::cout << "added " << report.added << " entries to " << directory->string() << ", skipped "
              << report.skipped << "\n";
    return report.problems.empty() ? 0 : 1;
  }
  if (command == "clear" && positional.empty()) {
    const int64_t kernels = cache.clear();
    const int64_t runtimes = serde::RuntimeCache(options).clear();
    std::cout << "removed " << kernels << " kernel entries and the decisions of " << runtimes
              << " runtimes from " << directory->string() << "\n";
    return 0;
  }
  return usage();
}

}  // namespace braze::cli
