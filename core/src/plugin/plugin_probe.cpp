// Probing plugins in a child process, and remembering the outcome per file build.

#include "braze/plugin/plugin_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "braze/plugin/sha256.h"

extern char** environ;

namespace braze {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

/// Reads what is available from a non-blocking pipe, so a chatty child never blocks on it.
void drain(int fd, std::string& into) {
  char buffer[4096];
  while (true) {
    ssize_t count = ::read(fd, buffer, sizeof(buffer));
    if (count <= 0) return;
    if (into.size() < 16384) into.append(buffer, static_cast<size_t>(count));
  }
}

Json loadCache(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return Json::object();
  try {
    Json json = Json::parse(in);
    return json.is_object() ? json : Json::object();
  } catch (const Json::exception&) {
    return Json::object();
  }
}

}  // namespace

ProbeResult probePlugin(const fs::path& scanner, const fs::path& library,
                        std::chrono::milliseconds timeout) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {false, "cannot create a pipe for the plugin scanner"};
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string scanner_text = scanner.string();
  std::string library_text = library.string();
  std::vector<char*> argv = {scanner_text.data(), library_text.data(), nullptr};
  pid_t child = 0;
  int spawn_error =
      ::posix_spawn(&child, scanner_text.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawn_error != 0) {
    ::close(pipe_fds[0]);
    return {false, "cannot start the plugin scanner '" + scanner_text +
                       "': " + std::strerror(spawn_error)};
  }
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  bool exited = false;
  while (!exited) {
    drain(pipe_fds[0], output);
    pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      exited = true;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ::close(pipe_fds[0]);
      return {false, "hung while loading: no answer within " + std::to_string(timeout.count()) +
                         " ms (killed)"};
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  drain(pipe_fds[0], output);
  ::close(pipe_fds[0]);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    return {false, "crashed while loading (signal " + std::to_string(signal) + ", " +
                       ::strsignal(signal) + ")"};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, ""};
  return {false, output.empty()
                     ? "the scanner failed with exit code " + std::to_string(WEXITSTATUS(status))
                     : output};
}

PluginFileKey pluginFileKey(const fs::path& library) {
  PluginFileKey key;
  std::error_code error;
  key.path = fs::absolute(library, error).string();
  key.size = fs::file_size(library, error);
  key.mtime_ns = static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          fs::last_write_time(library, error).time_since_epoch())
                                          .count());
  key.sha256 = sha256OfFile(library);
  return key;
}

PluginProbeCache::PluginProbeCache(fs::path file) : file_(std::move(file)) {}

std::optional<ProbeResult> PluginProbeCache::find(const PluginFileKey& key) const {
  Json cache = loadCache(file_);
  auto it = cache.find(key.path);
  if (it == cache.end() || !it->is_object()) return std::nullopt;
  try {
    if (it->at("size").get<uintmax_t>() != key.size ||
        it->at("mtime_ns").get<int64_t>() != key.mtime_ns ||
        it->at("sha256").get<std::string>() != key.sha256) {
      return std::nullopt;
    }
    return ProbeResult{it->at("ok").get<bool>(), it->at("reason").get<std::string>()};
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

void PluginProbeCache::store(const PluginFileKey& key, const ProbeResult& result) {
  Json cache = loadCache(file_);
  cache[key.path] = {{"size", key.size},
                     {"mtime_ns", key.mtime_ns},
                     {"sha256", key.sha256},
                     {"ok", result.ok},
                     {"reason", result.reason}};
  std::error_code error;
  fs::create_directories(file_.parent_path(), error);
  fs::path temporary = file_;
  temporary += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary);
    if (!out) return;
    out << cache.dump(2) << "\n";
  }
  fs::rename(temporary, file_, error);  // atomic: concurrent processes never read half a file
}

}  // namespace braze
