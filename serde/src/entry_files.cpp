#include "entry_files.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>

namespace braze::serde::detail {

namespace fs = std::filesystem;

bool isKey(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<std::vector<uint8_t>> readCapped(const fs::path& path, int64_t cap,
                                               std::string& problem) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) {
    problem = "absent";
    return std::nullopt;
  }
  if (!fs::is_regular_file(status)) {
    problem = "not a regular file";
    return std::nullopt;
  }
  const uintmax_t size = fs::file_size(path, error);
  if (error) {
    problem = "its size cannot be read: " + error.message();
    return std::nullopt;
  }
  if (size > static_cast<uintmax_t>(cap)) {
    problem = "the file is larger than any entry (" + std::to_string(size) + " bytes)";
    return std::nullopt;
  }
  std::ifstream file(path, std::ios::binary);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (!file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    problem = "it cannot be read";
    return std::nullopt;
  }
  return bytes;
}

std::optional<std::string> writeAtomically(const fs::path& folder, const std::string& name,
                                           std::span<const uint8_t> bytes) {
  static std::atomic<uint64_t> counter{0};
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return "cannot create " + folder.string() + ": " + error.message();
  const fs::path temporary = folder / ("." + name + "." + std::to_string(::getpid()) + "." +
                                       std::to_string(++counter) + std::string(kTemporarySuffix));
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    file.flush();
    if (!file) {
      fs::remove(temporary, error);
      return "cannot write " + temporary.string();
    }
  }
  fs::rename(temporary, folder / name, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return "cannot rename " + temporary.string() + ": " + error.message();
  }
  return std::nullopt;
}

int64_t pruneLeastRecentlyUsed(const fs::path& folder, std::string_view suffix, int64_t max_bytes) {
  struct File {
    fs::path path;
    int64_t bytes;
    fs::file_time_type last_use;
  };
  std::vector<File> files;
  int64_t total = 0;
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;
    const fs::file_time_type last_use = fs::last_write_time(it->path(), ignored);
    if (name.ends_with(kTemporarySuffix)) {
      if (now - last_use > std::chrono::hours(1)) fs::remove(it->path(), ignored);
      continue;
    }
    if (!name.ends_with(suffix)) continue;
    const auto bytes = static_cast<int64_t>(fs::file_size(it->path(), ignored));
    files.push_back({it->path(), bytes, last_use});
    total += bytes;
  }
  if (total <= max_bytes) return 0;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.last_use < b.last_use; });
  int64_t removed = 0;
  for (const File& file : files) {
    if (total <= max_bytes) break;
    std::error_code ignored;
    if (fs::remove(file.path, ignored)) {
      total -= file.bytes;
      ++removed;
    }
  }
  return removed;
}

int64_t removeEntries(const fs::path& folder, std::string_view suffix) {
  std::vector<fs::path> paths;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(suffix) || name.ends_with(kTemporarySuffix)) paths.push_back(it->path());
  }
  int64_t removed = 0;
  for (const fs::path& path : paths) {
    std::error_code ignored;
    if (fs::remove(path, ignored) && path.filename().string().ends_with(suffix)) ++removed;
  }
  return removed;
}

int64_t unixSecondsNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace braze::serde::detail
