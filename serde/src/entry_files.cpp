#include "entry_files.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
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

}  // namespace braze::serde::detail
