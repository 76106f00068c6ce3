#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <iterator>
#include <system_error>
#include <thread>

#include "braze/error.h"
#include "braze/host/store.h"

namespace braze::host {

namespace {

// Keys may hold '/' or start with '.', so each byte outside [A-Za-z0-9_-] is written %XX: a
// file name that is always one entry of the directory and never a temporary's ".tmp-" name.
std::string encodeKey(const std::string& key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string name;
  for (const char c : key) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '_' || c == '-') {
      name.push_back(c);
    } else {
      name += {'%', kHex[byte >> 4], kHex[byte & 15]};
    }
  }
  return name.empty() ? "%" : name;
}

// Unique among every writer of a shared directory: ranks on different hosts may share a pid.
std::string temporaryName(const std::string& name) {
  static std::atomic<int64_t> counter{0};
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return ".tmp-" + std::string(host) + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++) + "-" + name;
}

}  // namespace

FileStore::FileStore(std::filesystem::path directory) : directory_(std::move(directory)) {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  BRAZE_USER_CHECK(!error && std::filesystem::is_directory(directory_))
      << "cannot use '" << directory_.string()
      << "' as a file store: " << (error ? error.message() : "it is not a directory")
      << "; give a directory every rank can write, on a filesystem they all mount";
}

std::filesystem::path FileStore::fileOf(const std::string& key) const {
  return directory_ / encodeKey(key);
}

void FileStore::set(const std::string& key, std::string_view value) {
  const std::filesystem::path target = fileOf(key);
  const std::filesystem::path temporary = directory_ / temporaryName(target.filename().string());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    out.close();
    BRAZE_USER_CHECK(out.good()) << "setting key '" << key << "' in " << describe()
                                 << ": cannot write '" << temporary.string()
                                 << "'; check the directory's permissions and free space";
  }
  // rename() replaces the target in one step: a reader opens the old file or the new one.
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    BRAZE_THROW() << "setting key '" << key << "' in " << describe() << ": cannot rename '"
                  << temporary.string() << "' to '" << target.string() << "': " << error.message();
  }
}

std::string FileStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  const std::filesystem::path file = fileOf(key);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    // Opening (rather than stat) also revalidates an NFS client's cached view of the directory.
    std::ifstream in(file, std::ios::binary);
    if (in.is_open()) {
      return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) throwTimeout(key, timeout);
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

std::string FileStore::describe() const {
  return "the file store in '" + directory_.string() + "'";
}

}  // namespace braze::host
