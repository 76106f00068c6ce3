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
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

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

// Kernels cannot raise the evaluator's error for an index out of range: they count a negative
// one from the end and then clamp it into the dim. The GPU's result is the evaluator's for the
// clamped indices.
TEST(PointwiseExecutionTest, OutOfRangeIndicesAreClamped) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const auto build = test::fusionOf([](Fusion& f) {
    TensorView* table = test::symbolic(f, 2);
    TensorView* rows = test::symbolic(f, 1, DataType::Int64);
    f.addOutput(index_select(table, 0, rows));
  });
  constexpr int64_t kRows = 16;
  const std::vector<int64_t> rows = {0, 15, 16, 40, -1, -16, -17, -100, 7, INT64_MAX, INT64_MIN};
  std::vector<int64_t> clamped;
  for (const int64_t row : rows) {
    const int64_t wrapped = row < 0 ? row + kRows : row;
    clamped.push_back(std::clamp<int64_t>(wrapped, 0, kRows - 1));
  }
  test::RandomTensors random(31);
  const HostTensor table = random.uniform(DataType::Float32, {kRows, 64});
  const std::vector<EvaluatorArgument> host = {
      table, test::tensorOfIntegers(DataType::Int64, {static_cast<int64_t>(rows.size())}, rows)};
  std::unique_ptr<Fusion> fusion = build();
  pointwise::schedule(*fusion, pointwise::computeHeuristics(*fusion, test::hostRuntimeInfo(host)));
  const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
  const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
  const HostTensor expected = std::get<HostTensor>(evaluateFusion(
      *build(), {table, test::tensorOfIntegers(DataType::Int64, {static_cast<int64_t>(rows.size())},
                                               clamped)})[0]);
  EXPECT_TRUE(test::isClose(run.outputs[0], expected, test::toleranceFor(DataType::Float32)));
}

}  // namespace
}  // namespace braze
