// Golden text of generated kernels (the kernel itself, without the runtime headers in front):
// a refactor of lowering or codegen must leave them unchanged. To accept a new output after
// reviewing it:
//   BRAZE_UPDATE_GOLDEN=1 ./braze_codegen_tests --gtest_filter='GoldenKernelsTest.*'

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

std::string kernelText(const GeneratedKernel& kernel) {
  return kernel.source.substr(kernel.source.find("using IndexT"));
}

void expectGolden(const std::string& case_name) {
  auto fusion = test::findScheduledCase(case_name).build();
  const std::string actual = kernelText(generateCuda(*fusion));
  const std::string path = std::string(BRAZE_TEST_DATA_DIR) + "/codegen/" + case_name + ".cu";
  if (std::getenv("BRAZE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "missing golden file " << path
                           << "; run with BRAZE_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << file.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "generated kernel differs from " << path;
}

TEST(GoldenKernelsTest, PointwiseVectorize) {
  expectGolden("pointwise_vectorize");
}
TEST(GoldenKernelsTest, InnerReductionRFactor) {
  expectGolden("inner_reduction_rfactor");
}
TEST(GoldenKernelsTest, Softmax) {
  expectGolden("softmax");
}
TEST(GoldenKernelsTest, TransposeShared) {
  expectGolden("transpose_shared");
}
TEST(GoldenKernelsTest, GridReductionColumns) {
  expectGolden("grid_reduction_columns");
}

TEST(GoldenKernelsTest, KernelNamesComeFromContent) {
  const test::ScheduledCase& c = test::findScheduledCase("softmax");
  const GeneratedKernel a = generateCuda(*c.build());
  const GeneratedKernel b = generateCuda(*c.build());
  EXPECT_EQ(a.kernel_name, b.kernel_name);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.kernel_name.rfind("braze_", 0), 0u);
  EXPECT_EQ(a.kernel_name.size(), 6u + 16u);
  const GeneratedKernel other = generateCuda(*test::findScheduledCase("layer_norm").build());
  EXPECT_NE(a.kernel_name, other.kernel_name);
  EXPECT_NE(a.source.find("void __launch_bounds__(128) " + a.kernel_name + "("), std::string::npos);
}

TEST(GoldenKernelsTest, SourceIsSelfContained) {
  const GeneratedKernel kernel = generateCuda(*test::findScheduledCase("welford_block").build());
  EXPECT_EQ(kernel.source.find("#include"), std::string::npos);
  // The runtime headers it uses are in the source (runtime_prelude_test.cpp: only those).
  for (const char* part : {"__device__ __forceinline__ T blockReduce(", "struct WelfordTriplet",
                           "__shfl_xor_sync", "struct Tensor"}) {
    EXPECT_NE(kernel.source.find(part), std::string::npos) << part;
  }
}

}  // namespace
}  // namespace braze
