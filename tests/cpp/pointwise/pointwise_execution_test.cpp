// The GPU tier: every pointwise case, scheduled by the pointwise scheduler for its own
// arguments, runs through KernelExecutor on fresh random inputs (outputs poisoned first) and
// matches the reference evaluator within the tolerance of its dtype. Skipped without a GPU.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "pointwise/pointwise_cases.h"
#include "support/poisoned_outputs.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

void expectMatchesReference(const std::function<std::unique_ptr<Fusion>()>& build,
                            Fusion& scheduled, const std::vector<EvaluatorArgument>& host,
                            const std::string& what) {
  GeneratedKernel generated = generateCuda(scheduled);
  CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name);
  KernelExecutor executor(scheduled, std::move(generated), std::move(compiled));
  std::vector<ExecutorArgument> inputs;
  for (const EvaluatorArgument& argument : host) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      inputs.emplace_back(DeviceTensor::fromHost(*tensor));
    } else {
      inputs.emplace_back(std::get<ScalarValue>(argument));
    }
  }
  const LaunchPlan plan = executor.plan(inputs);
  const std::vector<DeviceTensor> outputs =
      executor.run(inputs, nullptr, test::poisonedOutputs(executor, plan));
  BRAZE_CU(ctxSynchronize);
  // The oracle evaluates a fresh, unscheduled fusion.
  const std::vector<EvaluatorArgument> expected = evaluateFusion(*build(), host);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t j = 0; j < outputs.size(); ++j) {
    const HostTensor& reference = std::get<HostTensor>(expected[j]);
    EXPECT_TRUE(
        test::isClose(outputs[j].toHost(), reference, test::toleranceFor(reference.dtype())))
        << what << ", output " << j << "\nlaunch: " << plan.launch.toString();
  }
}

class PointwiseExecutionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PointwiseExecutionTest, MatchesTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const test::PointwiseCase& c = test::findPointwiseCase(GetParam());
  for (const uint64_t seed : {uint64_t{101}, uint64_t{202}}) {
    const std::vector<EvaluatorArgument> host =
        test::makeSuiteArguments(test::asSuiteCase(c), seed);
    std::unique_ptr<Fusion> fusion = c.build();
    const pointwise::PointwiseParams params =
        pointwise::computeHeuristics(*fusion, test::runtimeInfoOf(c, host));
    pointwise::schedule(*fusion, params);
    expectMatchesReference(
        c.build, *fusion, host,
        c.name + " seed " + std::to_string(seed) + " " + pointwise::toString(params));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PointwiseExecutionTest,
                         ::testing::ValuesIn(test::pointwiseCaseNames()),
                         [](const auto& info) { return info.param; });

TEST(PointwiseExecutionTest, GridStrideCoversEveryElement) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const test::PointwiseCase& c = test::findPointwiseCase("add_1d");
  const std::vector<EvaluatorArgument> host = test::makeSuiteArguments(test::asSuiteCase(c), 7);
  std::unique_ptr<Fusion> fusion = c.build();
  pointwise::PointwiseParams params;
  params.grid_stride = true;
  params.blocks = 3;
  params.vector_width = 4;
  params.unroll = 2;
  params.threads_per_block = 64;
  pointwise::schedule(*fusion, params);
  expectMatchesReference(c.build, *fusion, host, "grid stride " + pointwise::toString(params));
}

}  // namespace
}  // namespace braze
