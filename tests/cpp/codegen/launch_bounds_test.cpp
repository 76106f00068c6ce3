// Launch bounds a scheduler states on the fusion (Fusion::setLaunchBounds) reach the generated
// kernel as __launch_bounds__, agree with a block size the schedule fixes, and make ptxas
// budget registers for the blocks per SM they ask for.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/runtime/compiled_kernel.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string kernelText(const GeneratedKernel& kernel) {
  return kernel.source.substr(kernel.source.find("using IndexT"));
}

CompiledKernel compileForSm90(const GeneratedKernel& kernel) {
  return CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                 {.arch = driver::GpuArch{9, 0, false}});
}

TEST(LaunchBoundsCodegenTest, SymbolicBlockTakesTheStatedBounds) {
  auto bounded = test::persistentSoftmax(8, LaunchBounds{512, 2});
  const GeneratedKernel generated = generateCuda(*bounded);
  EXPECT_THAT(kernelText(generated),
              HasSubstr("__launch_bounds__(512, 2) " + generated.kernel_name + "("));
  ASSERT_TRUE(generated.launch_bounds.has_value());
  EXPECT_EQ(*generated.launch_bounds, (LaunchBounds{512, 2}));

  // Without bounds the block size is unknown to the compiler: no bound at all.
  const GeneratedKernel free = generateCuda(*test::persistentSoftmax(8));
  EXPECT_THAT(kernelText(free), Not(HasSubstr("__launch_bounds__")));
  EXPECT_FALSE(free.launch_bounds.has_value());
  // The bounds are part of the source, hence of the kernel's name.
  EXPECT_NE(free.kernel_name, generated.kernel_name);

  // A thread bound alone prints no blocks per SM.
  const GeneratedKernel threads_only = generateCuda(*test::persistentSoftmax(8, LaunchBounds{256}));
  EXPECT_THAT(kernelText(threads_only), HasSubstr("__launch_bounds__(256) "));
}

TEST(LaunchBoundsCodegenTest, ConstantBlockKeepsItsSizeAndTakesTheBlocksPerSm) {
  // The suite's softmax has blocks of 128 threads.
  auto fusion = test::findScheduledCase("softmax").build();
  fusion->setLaunchBounds(256, 4);
  const GeneratedKernel generated = generateCuda(*fusion);
  EXPECT_THAT(kernelText(generated), HasSubstr("__launch_bounds__(128, 4) "));
  EXPECT_FALSE(compileForSm90(generated).cubin().empty());
}

TEST(LaunchBoundsCodegenTest, ConstantBlockLargerThanTheBoundIsRefused) {
  auto fusion = test::findScheduledCase("softmax").build();
  fusion->setLaunchBounds(64, 1);
  EXPECT_TRUE(test::throwsError([&] { generateCuda(*fusion); },
                                {"every block 128 threads", "launch bounds allow at most 64",
                                 "setLaunchBounds(64, 1)", "schedule smaller blocks"}));
}

TEST(LaunchBoundsCodegenTest, BlocksPerSmCapRegisters) {
  // 64 elements per thread kept in registers across two reductions: ptxas uses more than 64
  // registers when free to; 512 threads x 2 blocks per SM leave 65536 / 1024 = 64 each.
  const CompiledKernel free = compileForSm90(generateCuda(*test::persistentSoftmax(64)));
  const CompiledKernel bounded =
      compileForSm90(generateCuda(*test::persistentSoftmax(64, LaunchBounds{512, 2})));
  ASSERT_TRUE(free.resources().reported) << free.compileLog();
  ASSERT_TRUE(bounded.resources().reported) << bounded.compileLog();
  EXPECT_GT(free.resources().registers, 64);
  EXPECT_LE(bounded.resources().registers, 64);
}

}  // namespace
}  // namespace braze
