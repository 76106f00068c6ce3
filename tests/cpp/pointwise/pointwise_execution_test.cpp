// The GPU tier: every pointwise case, scheduled by the pointwise scheduler for its own
// arguments, runs through KernelExecutor on fresh random inputs (outputs poisoned first) and
// matches the reference evaluator within the tolerance of its dtype. Skipped without a GPU.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "pointwise/pointwise_cases.h"
#include "support/gpu_run.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

void expectMatchesReference(const std::function<std::unique_ptr<Fusion>()>& build,
                            Fusion& scheduled, const std::vector<EvaluatorArgument>& host,
                            const std::string& what) {
  const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(scheduled);
  const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
  const std::vector<HostTensor>& outputs = run.outputs;
  const LaunchPlan& plan = run.plan;
  // The oracle evaluates a fresh, unscheduled fusion.
  const std::vector<EvaluatorArgument> expected = evaluateFusion(*build(), host);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t j = 0; j < outputs.size(); ++j) {
    const HostTensor& reference = std::get<HostTensor>(expected[j]);
    EXPECT_TRUE(test::isClose(outputs[j], reference, test::toleranceFor(reference.dtype())))
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
