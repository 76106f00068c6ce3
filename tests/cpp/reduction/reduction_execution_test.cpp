// The GPU tier: every reduction case, scheduled by the reduction scheduler for its own
// arguments, runs through KernelExecutor on fresh random inputs (outputs poisoned first) and
// matches the reference evaluator within the tolerance of its dtype, for two seeds. Skipped
// without a GPU. A row-sum timing test runs only when BRAZE_REDUCTION_TIMING is set.

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "reduction/reduction_cases.h"

namespace braze {
namespace {

// Contiguous outputs of the planned sizes, every byte 0xFF, so that an element the kernel
// never writes shows.
std::vector<DeviceTensor> poisonedOutputs(const KernelExecutor& executor, const LaunchPlan& plan) {
  const GeneratedKernel& kernel = executor.generatedKernel();
  std::vector<DeviceTensor> outputs(executor.fusion().outputs().size());
  for (size_t i = 0; i < kernel.parameters.size(); ++i) {
    const KernelParameter& p = kernel.parameters[i];
    if (p.kind != KernelParameter::Kind::OutputTensor) continue;
    DeviceTensor& output = outputs[static_cast<size_t>(p.fusion_position)];
    output = DeviceTensor::empty(p.dtype, plan.parameters[i].sizes, plan.device);
    output.fillBytes(0xFF);
  }
  return outputs;
}

std::vector<ExecutorArgument> deviceInputs(const std::vector<EvaluatorArgument>& host) {
  std::vector<ExecutorArgument> inputs;
  for (const EvaluatorArgument& argument : host) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      inputs.emplace_back(DeviceTensor::fromHost(*tensor));
    } else {
      inputs.emplace_back(std::get<ScalarValue>(argument));
    }
  }
  return inputs;
}

class ReductionExecutionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReductionExecutionTest, MatchesTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const test::ReductionCase& c = test::findReductionCase(GetParam());
  for (const uint64_t seed : {uint64_t{101}, uint64_t{202}}) {
    const std::vector<EvaluatorArgument> host =
        test::makeSuiteArguments(test::asSuiteCase(c), seed);
    std::unique_ptr<Fusion> fusion = c.build();
    reduction::ReductionRuntimeInfo info = test::runtimeInfoOf(c, host);
    info.device = driver::deviceProperties();
    const reduction::ReductionParams params = reduction::computeHeuristics(*fusion, info);
    reduction::schedule(*fusion, params);
    const std::string what =
        c.name + " seed " + std::to_string(seed) + " " + reduction::toString(params);

    GeneratedKernel generated = generateCuda(*fusion);
    CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name);
    KernelExecutor executor(*fusion, std::move(generated), std::move(compiled));
    const std::vector<ExecutorArgument> inputs = deviceInputs(host);
    const LaunchPlan plan = executor.plan(inputs);
    // Twice on the same executor: a grid reduction must leave its semaphores ready.
    for (int run = 0; run < 2; ++run) {
      const std::vector<DeviceTensor> outputs =
          executor.run(inputs, nullptr, poisonedOutputs(executor, plan));
      BRAZE_CU(ctxSynchronize);
      // The oracle evaluates a fresh, unscheduled fusion.
      const std::vector<EvaluatorArgument> expected = evaluateFusion(*c.build(), host);
      ASSERT_EQ(outputs.size(), expected.size());
      for (size_t j = 0; j < outputs.size(); ++j) {
        const HostTensor& reference = std::get<HostTensor>(expected[j]);
        EXPECT_TRUE(test::isClose(outputs[j].toHost(), reference,
                                  c.tolerance.value_or(test::toleranceFor(reference.dtype()))))
            << what << ", run " << run << ", output " << j
            << "\nlaunch: " << plan.launch.toString();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ReductionExecutionTest,
                         ::testing::ValuesIn(test::reductionCaseNames()),
                         [](const auto& info) { return info.param; });

// Row sums of 256 MiB (the benchmark's shapes), timed with CUDA events over back-to-back
// launches; prints the bandwidth (bytes read and written / time). Only with
// BRAZE_REDUCTION_TIMING set: it measures, it does not check.
TEST(ReductionTimingTest, RowSumBandwidth) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  if (std::getenv("BRAZE_REDUCTION_TIMING") == nullptr)
    GTEST_SKIP() << "set BRAZE_REDUCTION_TIMING=1 to time row sums";
  for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
    for (const int64_t n : {1024, 4096, 16384, 65536, 262144}) {
      const int64_t m = (int64_t{256} << 20) / n / sizeInBytes(dtype);
      Fusion fusion;
      fusion.addOutput(sum(makeSymbolicTensor(fusion, 2, dtype), {1}));
      reduction::ReductionRuntimeInfo info =
          reduction::ReductionRuntimeInfo::contiguous(fusion, {{m, n}});
      info.device = driver::deviceProperties();
      const reduction::ReductionParams params = reduction::computeHeuristics(fusion, info);
      reduction::schedule(fusion, params);
      GeneratedKernel generated = generateCuda(fusion);
      CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name);
      KernelExecutor executor(fusion, std::move(generated), std::move(compiled));
      DeviceTensor x = DeviceTensor::empty(dtype, {m, n});
      x.fillBytes(0x3C);
      const std::vector<ExecutorArgument> inputs = {std::move(x)};
      const LaunchPlan plan = executor.plan(inputs);
      std::vector<DeviceTensor> outputs = poisonedOutputs(executor, plan);
      executor.run(inputs, nullptr, outputs);  // loads the module
      BRAZE_CU(ctxSynchronize);
      CUevent start = nullptr;
      CUevent stop = nullptr;
      BRAZE_CU(eventCreate, &start, 0);
      BRAZE_CU(eventCreate, &stop, 0);
      constexpr int kLaunches = 20;
      BRAZE_CU(eventRecord, start, nullptr);
      for (int i = 0; i < kLaunches; ++i) executor.run(inputs, nullptr, outputs);
      BRAZE_CU(eventRecord, stop, nullptr);
      BRAZE_CU(eventSynchronize, stop);
      float ms = 0.0f;
      BRAZE_CU(eventElapsedTime, &ms, start, stop);
      const double seconds = static_cast<double>(ms) / 1e3 / kLaunches;
      const double bytes = static_cast<double>(m * n + m) * static_cast<double>(sizeInBytes(dtype));
      std::cout << "row sum " << dtype << " " << m << " x " << n << ": " << seconds * 1e6 << " us, "
                << bytes / seconds / 1e12 << " TB/s  " << reduction::toString(params) << "\n";
      BRAZE_CU(eventDestroy, start);
      BRAZE_CU(eventDestroy, stop);
    }
  }
}

}  // namespace
}  // namespace braze
