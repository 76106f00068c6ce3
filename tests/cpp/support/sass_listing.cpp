#include "support/sass_listing.h"

#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "braze/error.h"

namespace braze::test {

namespace {

bool isExecutable(const std::filesystem::path& path) {
  return access(path.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(path);
}

bool isOpcodeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

}  // namespace

std::optional<std::string> findNvdisasm(std::string* reason) {
  std::vector<std::filesystem::path> candidates;
  if (const char* given = std::getenv("BRAZE_NVDISASM")) candidates.emplace_back(given);
  const char* tools = std::getenv("BRAZE_TOOLS_DIR");
  candidates.push_back(std::filesystem::path(tools ? tools : "/opt/braze-tools") / "nvidia" /
                       "cu13" / "bin" / "nvdisasm");
  candidates.emplace_back("/usr/local/cuda/bin/nvdisasm");
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view folder = rest.substr(0, colon);
      if (!folder.empty()) candidates.push_back(std::filesystem::path(folder) / "nvdisasm");
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  for (const std::filesystem::path& candidate : candidates) {
    if (isExecutable(candidate)) return candidate.string();
  }
  if (reason != nullptr) {
    *reason =
        "no nvdisasm (looked in $BRAZE_NVDISASM, $BRAZE_TOOLS_DIR or /opt/braze-tools/nvidia/cu13/"
        "bin, /usr/local/cuda/bin and PATH); tools/install-deps.sh installs it (pip package "
        "nvidia-cuda-nvdisasm)";
  }
  return std::nullopt;
}

std::string disassemble(const std::string& nvdisasm, const std::vector<char>& cubin) {
  BRAZE_USER_CHECK(!cubin.empty()) << "disassemble: the kernel has no cubin (compiled to PTX only)";
  const char* tmp = std::getenv("TMPDIR");
  std::string path_template =
      (std::filesystem::path(tmp ? tmp : "/tmp") / "braze_sass_XXXXXX").string();
  const int fd = mkstemp(path_template.data());
  BRAZE_USER_CHECK(fd >= 0) << "disassemble: cannot create a file in " << (tmp ? tmp : "/tmp");
  close(fd);
  const std::string cubin_path = path_template;
  {
    std::ofstream file(cubin_path, std::ios::binary);
    file.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  }
  const std::string command = "'" + nvdisasm + "' '" + cubin_path + "' 2>&1";
  std::string text;
  int status = -1;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 4096> buffer{};
    size_t read = 0;
    while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
      text.append(buffer.data(), read);
    status = pclose(pipe);
  }
  std::filesystem::remove(cubin_path);
  BRAZE_USER_CHECK(status == 0) << "disassemble: `" << command << "` failed (status " << status
                                << "):\n"
                                << text;
  return text;
}

int countInstructions(std::string_view sass, std::string_view opcode) {
  int count = 0;
  for (size_t at = sass.find(opcode); at != std::string_view::npos;
       at = sass.find(opcode, at + 1)) {
    // A whole opcode: not preceded by a name character, followed by a modifier dot or a space.
    const bool starts = at == 0 || !isOpcodeChar(sass[at - 1]);
    const size_t end = at + opcode.size();
    const bool ends = end == sass.size() || sass[end] == '.' || sass[end] == ' ' ||
                      sass[end] == ';' || sass[end] == '\t';
    if (starts && ends) ++count;
  }
  return count;
}

}  // namespace braze::test
