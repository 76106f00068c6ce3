#include "braze/driver/nvrtc_compiler.h"

#include <nvrtc.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "braze/error.h"

namespace braze::driver {

namespace {

void checkNvrtc(nvrtcResult result, const char* call) {
  BRAZE_INTERNAL_CHECK(result == NVRTC_SUCCESS)
      << call << " failed: " << nvrtcGetErrorString(result);
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* program) const {
    nvrtcDestroyProgram(program);
    delete program;
  }
};

std::string programLog(nvrtcProgram program) {
  size_t size = 0;
  checkNvrtc(nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  checkNvrtc(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Failing sources are kept on disk: the log's line numbers refer to them.
std::string writeSourceForInspection(std::string_view source, std::string_view file_name) {
  std::error_code error;
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path folder = std::filesystem::path(tmp ? tmp : "/tmp") / "braze";
  std::filesystem::create_directories(folder, error);
  const std::filesystem::path path = folder / std::filesystem::path(file_name).filename();
  std::ofstream file(path);
  file << source;
  if (!file)
    return "(nowhere: writing " + path.string() + " failed; set TMPDIR to a writable folder)";
  return path.string();
}

std::atomic<int64_t> compile_count{0};

}  // namespace

int64_t nvrtcCompileCount() {
  return compile_count.load(std::memory_order_relaxed);
}

NvrtcOutput compileWithNvrtc(std::string_view source, std::string_view file_name,
                             const std::vector<std::string>& options) {
  compile_count.fetch_add(1, std::memory_order_relaxed);
  const std::string source_text(source);
  const std::string name(file_name);
  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram{});
  checkNvrtc(
      nvrtcCreateProgram(program.get(), source_text.c_str(), name.c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  std::vector<const char*> option_pointers;
  option_pointers.reserve(options.size());
  for (const std::string& option : options) option_pointers.push_back(option.c_str());

  const nvrtcResult result = nvrtcCompileProgram(*program, static_cast<int>(option_pointers.size()),
                                                 option_pointers.data());
  NvrtcOutput output;
  output.log = programLog(*program);
  if (result != NVRTC_SUCCESS) {
    std::string joined;
    for (const std::string& option : options) joined += " " + option;
    BRAZE_THROW() << "NVRTC could not compile " << name << " (" << nvrtcGetErrorString(result)
                  << "); the source is in " << writeSourceForInspection(source, name)
                  << "\noptions:" << joined << "\n"
                  << output.log;
  }

  size_t ptx_size = 0;
  checkNvrtc(nvrtcGetPTXSize(*program, &ptx_size), "nvrtcGetPTXSize");
  output.ptx.resize(ptx_size);
  checkNvrtc(nvrtcGetPTX(*program, output.ptx.data()), "nvrtcGetPTX");
  while (!output.ptx.empty() && output.ptx.back() == '\0') output.ptx.pop_back();

  size_t cubin_size = 0;
  // A virtual target (compute_90) has no cubin; NVRTC reports that as an error.
  if (nvrtcGetCUBINSize(*program, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
    output.cubin.resize(cubin_size);
    checkNvrtc(nvrtcGetCUBIN(*program, output.cubin.data()), "nvrtcGetCUBIN");
  }
  return output;
}

std::pair<int, int> nvrtcVersion() {
  int major = 0;
  int minor = 0;
  checkNvrtc(::nvrtcVersion(&major, &minor), "nvrtcVersion");
  return {major, minor};
}

}  // namespace braze::driver
