// A kernel with launch bounds (Fusion::setLaunchBounds) in the executor: a launch whose block
// exceeds the bound is refused before the driver sees it, with what, which kernel and what to
// do; on a GPU a bounded kernel runs blocks up to its bound and matches the reference.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "support/error_matchers.h"
#include "support/gpu_run.h"
#include "support/random_tensor.h"
#include "support/scheduled_suite.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

std::unique_ptr<KernelExecutor> executorForSm90(const Fusion& scheduled) {
  GeneratedKernel generated = generateCuda(scheduled);
  CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name,
                                                    {.arch = driver::GpuArch{9, 0}});
  return std::make_unique<KernelExecutor>(scheduled, std::move(generated), std::move(compiled));
}

// A device tensor at a made-up address: enough to plan a launch.
DeviceTensor fakeRows(int64_t rows, int64_t row_length) {
  return DeviceTensor::borrow(DataType::Float32, {rows, row_length}, {row_length, 1},
                              0x7f0000000000, 0, nullptr);
}

TEST(LaunchBoundsExecutorTest, BlockAboveTheBoundIsRefusedBeforeLaunch) {
  // 8 elements per thread: a row of n needs n / 8 threads; the bound is 256.
  auto fusion = test::persistentSoftmax(8, LaunchBounds{256, 2});
  const auto executor = executorForSm90(*fusion);
  EXPECT_EQ(executor->plan({fakeRows(4, 2048)}).launch.threadsPerBlock(), 256);
  const std::string& name = executor->generatedKernel().kernel_name;
  EXPECT_TRUE(
      test::throwsError([&] { executor->plan({fakeRows(4, 2056)}); },
                        {"kernel " + name, "blocks of 257 threads", "compiled for at most 256",
                         "setLaunchBounds(256, 2)", "state bounds that cover the largest block"}));
}

TEST(LaunchBoundsExecutorTest, UnboundedKernelTakesAnyBlock) {
  auto fusion = test::persistentSoftmax(8);
  EXPECT_EQ(executorForSm90(*fusion)->plan({fakeRows(4, 8192)}).launch.threadsPerBlock(), 1024);
}

TEST(LaunchBoundsExecutorTest, BoundedKernelMatchesTheReferenceOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  // 512 threads x 2 blocks per SM cap the 32 elements per thread at 64 registers; blocks at,
  // and below, the bound (a row that is not a multiple of 32 leaves a partial thread).
  auto fusion = test::persistentSoftmax(32, LaunchBounds{512, 2});
  const auto executor = test::compileForGpu(*fusion);
  test::RandomTensors random(29);
  for (const int64_t row_length : {int64_t{16384}, int64_t{3001}}) {
    const std::vector<EvaluatorArgument> host = {
        random.uniform(DataType::Float32, {70, row_length}, -4.0, 4.0)};
    const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
    EXPECT_EQ(run.plan.launch.threadsPerBlock(), (row_length + 31) / 32);
    const std::vector<EvaluatorArgument> expected =
        evaluateFusion(*test::persistentSoftmax(32), host);
    ASSERT_EQ(run.outputs.size(), 1u);
    test::expectClose(run.outputs[0], std::get<HostTensor>(expected[0]));
  }
}

}  // namespace
}  // namespace braze
