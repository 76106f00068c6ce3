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
  const GeneratedKernel generated = generateCuda(*fusion);
  for (const std::string& snippet : c.expected_snippets) {
    EXPECT_NE(generated.source.find(snippet), std::string::npos)
        << c.name << ": the kernel lacks \"" << snippet << "\"\n"
        << generated.source.substr(generated.source.find("using IndexT"));
  }
  const CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
  // Arrays indexed only by unrolled loops stay in registers.
  EXPECT_EQ(compiled.resources().stack_frame_bytes, 0)
      << c.name << "\n"
      << generated.source.substr(generated.source.find("using IndexT"));
}

INSTANTIATE_TEST_SUITE_P(Suite, ScheduledCodegenTest, ::testing::ValuesIn(test::scheduledSuite()),
                         [](const ::testing::TestParamInfo<ScheduledCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace braze
