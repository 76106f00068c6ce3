// NVRTC needs no GPU: these run on every machine.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "braze/driver/nvrtc_compiler.h"
#include "braze/error.h"

namespace braze::driver {
namespace {

constexpr const char* kScale = R"(
extern "C" __global__ void scale(float* out, const float* in, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}
)";

TEST(NvrtcCompilerTest, CompilesToCubinAndPtx) {
  const NvrtcOutput output =
      compileWithNvrtc(kScale, "scale.cu", {"--gpu-architecture=sm_90", "-Xptxas=-v"});
  EXPECT_FALSE(output.cubin.empty());
  // A cubin is an ELF file.
  ASSERT_GE(output.cubin.size(), 4u);
  EXPECT_EQ(std::string(output.cubin.data() + 1, 3), "ELF");
  EXPECT_NE(output.ptx.find(".entry scale"), std::string::npos) << output.ptx;
  EXPECT_NE(output.ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(output.log.find("Used "), std::string::npos) << output.log;
  EXPECT_NE(output.ptx.back(), '\0');
}

TEST(NvrtcCompilerTest, AVirtualArchitectureGivesPtxOnly) {
  const NvrtcOutput output =
      compileWithNvrtc(kScale, "scale.cu", {"--gpu-architecture=compute_90"});
  EXPECT_TRUE(output.cubin.empty());
  EXPECT_NE(output.ptx.find(".entry scale"), std::string::npos);
}

TEST(NvrtcCompilerTest, AnErrorShowsTheLogTheOptionsAndWhereTheSourceIs) {
  const std::string source = "extern \"C\" __global__ void broken(float* x) { x[0] = y; }\n";
  std::string message;
  try {
    compileWithNvrtc(source, "broken_kernel_for_test.cu",
                     {"--gpu-architecture=sm_90", "-lineinfo"});
    FAIL() << "the source should not compile";
  } catch (const Error& error) {
    message = error.what();
  }
  EXPECT_NE(message.find("NVRTC could not compile broken_kernel_for_test.cu"), std::string::npos)
      << message;
  EXPECT_NE(message.find("identifier \"y\" is undefined"), std::string::npos) << message;
  EXPECT_NE(message.find("options: --gpu-architecture=sm_90 -lineinfo"), std::string::npos)
      << message;
  const std::string marker = "the source is in ";
  const size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  const size_t end = message.find('\n', at);
  const std::string path = message.substr(at + marker.size(), end - at - marker.size());
  EXPECT_TRUE(path.ends_with("broken_kernel_for_test.cu")) << path;
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << path;
  std::stringstream written;
  written << file.rdbuf();
  EXPECT_EQ(written.str(), source);
}

TEST(NvrtcCompilerTest, AnUnwritableTmpdirIsNamed) {
  const char* previous = std::getenv("TMPDIR");
  const std::string saved = previous ? previous : "";
  // Nothing can be created under /proc, not even by root.
  ::setenv("TMPDIR", "/proc", 1);
  std::string message;
  try {
    compileWithNvrtc("extern \"C\" __global__ void k() { undefined(); }", "k.cu",
                     {"--gpu-architecture=sm_90"});
  } catch (const Error& error) {
    message = error.what();
  }
  if (previous) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_NE(message.find("the source is in (nowhere: writing /proc/braze/k.cu failed; set TMPDIR"),
            std::string::npos)
      << message;
}

TEST(NvrtcCompilerTest, AnUnknownOptionIsAnError) {
  try {
    compileWithNvrtc(kScale, "scale.cu", {"--no-such-option"});
    FAIL() << "the option should be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--no-such-option"), std::string::npos)
        << error.what();
  }
}

TEST(NvrtcCompilerTest, ReportsItsVersion) {
  const auto [major, minor] = nvrtcVersion();
  EXPECT_GE(major, 12);
  EXPECT_GE(minor, 0);
}

}  // namespace
}  // namespace braze::driver
