// Every case of the hand-scheduled suite is lowered, printed as CUDA and compiled with NVRTC
// for sm_90; the generated code has the structure its schedule asks for.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/runtime/compiled_kernel.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::ScheduledCase;

class ScheduledCodegenTest : public ::testing::TestWithParam<ScheduledCase> {};

TEST_P(ScheduledCodegenTest, CompilesForSm90) {
  const ScheduledCase& c = GetParam();
  std::unique_ptr<Fusion> fusion = c.build();
  const GeneratedKernel generated = generateCuda(*fusion, {.verify = true});
  for (const std::string& snippet : c.expected_snippets) {
    EXPECT_NE(generated.source.find(snippet), std::string::npos)
        << c.name << ": the kernel lacks \"" << snippet << "\"\n"
        << generated.source.substr(generated.source.find("using IndexT"));
  }
  const CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
  // Arrays indexed only by unrolled loops stay in registers. (Trigonometric functions keep a
  // small table on the stack for large arguments: that frame is theirs; normal calls cos.)
  const std::string kernel_text = generated.source.substr(generated.source.find("using IndexT"));
  const bool trigonometry = kernel_text.find("braze::sin(") != std::string::npos ||
                            kernel_text.find("braze::cos(") != std::string::npos ||
                            kernel_text.find("braze::tan(") != std::string::npos ||
                            kernel_text.find("braze::normalFloat(") != std::string::npos ||
                            kernel_text.find("braze::normalDouble(") != std::string::npos;
  if (!trigonometry) {
    EXPECT_EQ(compiled.resources().stack_frame_bytes, 0) << c.name << "\n" << kernel_text;
    EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, ScheduledCodegenTest, ::testing::ValuesIn(test::scheduledSuite()),
                         [](const ::testing::TestParamInfo<ScheduledCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace braze

namespace braze {
namespace {

std::string ptxOf(const std::string& case_name) {
  const GeneratedKernel generated = generateCuda(*test::findScheduledCase(case_name).build());
  return CompiledKernel::compile(generated.source, generated.kernel_name,
                                 {.arch = driver::GpuArch{9, 0, false}})
      .ptx();
}

TEST(ScheduledPtxTest, VectorizedCopiesAreSixteenByteAccesses) {
  const std::string ptx = ptxOf("pointwise_vectorize");
  EXPECT_NE(ptx.find("ld.global.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos) << ptx;
  const std::string half = ptxOf("pointwise_vectorize_half");
  EXPECT_TRUE(half.find("ld.global.v4.u32") != std::string::npos ||
              half.find("ld.global.v4.b32") != std::string::npos)
      << half;
}

TEST(ScheduledPtxTest, BlockReductionsUseWarpShuffles) {
  EXPECT_NE(ptxOf("inner_reduction_block").find("shfl.sync.bfly"), std::string::npos);
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

TEST(ScheduledPtxTest, Int64IndexingCompiles) {
  for (const char* name :
       {"pointwise_vectorize", "softmax", "grid_reduction", "transpose_shared"}) {
    const GeneratedKernel generated =
        generateCuda(*test::findScheduledCase(name).build(), {.index_type = DataType::Int64});
    EXPECT_NE(generated.source.find("using IndexT = long long;"), std::string::npos);
    const CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name,
                                                            {.arch = driver::GpuArch{9, 0, false}});
    EXPECT_FALSE(compiled.cubin().empty()) << name;
  }
}

}  // namespace
}  // namespace braze
