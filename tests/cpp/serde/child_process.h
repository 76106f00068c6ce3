#pragma once

// The programs the persistent-cache tests start as other processes (the cache worker, the
// braze command): found beside the test binary (a bundle carried to a GPU machine), else where
// the build put them; run with their output read back and its key=value counts parsed.

#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

namespace braze::test {

/// `name` beside this test binary, else `built`.
inline std::filesystem::path programPath(const std::string& name,
                                         const std::filesystem::path& built) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path beside = self.parent_path() / name;
    if (std::filesystem::exists(beside)) return beside;
  }
  return built;
}

struct ProcessResult {
  int exit_code = -1;
  std::string output;
  std::map<std::string, int64_t> counts;  ///< every "key=number" word of the output
};

/// Starts `command` (a shell command line) with its stdout read through the pipe.
inline FILE* startProcess(const std::string& command) {
  return ::popen(command.c_str(), "r");
}

/// Reads the process's output to its end and waits for it.
inline ProcessResult finishProcess(FILE* pipe) {
  ProcessResult result;
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream words(result.output);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq + 1 == word.size()) continue;
    try {
      size_t used = 0;
      const int64_t value = std::stoll(word.substr(eq + 1), &used);
      if (used == word.size() - eq - 1) result.counts[word.substr(0, eq)] = value;
    } catch (const std::exception&) {
      // not a count ("seconds=0.21", "dir=/tmp")
    }
  }
  return result;
}

/// Whether a sanitized child failed only because LeakSanitizer's own stop-the-world tracer
/// crashed at its exit ("Tracer caught signal 11"): a known intermittent fault of the sanitizer
/// runtime under load, after the child's work is done and before any leak is looked for. Only
/// visible when the command sends its stderr into the output.
inline bool leakCheckerCrashed(const ProcessResult& result) {
  return result.exit_code != 0 && result.output.find("Tracer caught signal") != std::string::npos &&
         result.output.find("LeakSanitizer has encountered a fatal error") != std::string::npos;
}

/// Runs `command` to its end; up to twice more while the leak checker crashed at exit (it did
/// twice in a row on a loaded machine). The commands the tests run may be repeated: a second run
/// of `braze compile` finds its kernels stored.
inline ProcessResult runProcess(const std::string& command) {
  ProcessResult result = finishProcess(startProcess(command));
  for (int retry = 0; retry < 2 && leakCheckerCrashed(result); ++retry)
    result = finishProcess(startProcess(command));
  return result;
}

}  // namespace braze::test
