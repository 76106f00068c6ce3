#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace braze::driver {

/// What NVRTC produced for one translation unit.
struct NvrtcOutput {
  std::vector<char> cubin;  ///< Empty when compiling for a virtual architecture (compute_XX).
  std::string ptx;
  std::string log;  ///< Warnings and, with -Xptxas=-v, ptxas' resource report.
};

/// Compiles CUDA C++ `source` with NVRTC and `options` (passed through as given). On failure
/// throws a braze::Error with NVRTC's log, the options, and the path where the source was
/// written for inspection (under $TMPDIR/braze, named `file_name`).
NvrtcOutput compileWithNvrtc(std::string_view source, std::string_view file_name,
                             const std::vector<std::string>& options);

/// How many times this process has called nvrtcCompileProgram (successful or not): what a
/// warm start from the kernel cache must keep at zero, and tests count.
int64_t nvrtcCompileCount();

/// NVRTC's version, e.g. {13, 0}.
std::pair<int, int> nvrtcVersion();

}  // namespace braze::driver
