// Every case of the hand-scheduled suite through generateCuda -> CompiledKernel ->
// KernelExecutor. Without a GPU: the executor accepts each generated kernel and plans and packs
// a launch for the case's inputs. With one: each case runs on fresh random inputs, with outputs
// poisoned first, and matches the reference evaluator within the tolerance of its dtype.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "support/gpu_run.h"
#include "support/scheduled_suite.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

std::vector<std::string> suiteNames() {
  std::vector<std::string> names;
  for (const test::ScheduledCase& c : test::scheduledSuite()) names.push_back(c.name);
  return names;
}

/// A kernel of the suite, generated and compiled, with the fusion it came from.
struct SuiteKernel {
  std::unique_ptr<Fusion> fusion;
  std::unique_ptr<KernelExecutor> executor;
};

// BRAZE_DUMP works here as everywhere: the test program is the edge that reads it.
SuiteKernel buildKernel(const test::ScheduledCase& c, CompileOptions options) {
  static const DumpOptions dump = DumpOptions::fromEnvironment();
  SuiteKernel kernel;
  kernel.fusion = c.build();
  LowerOptions lower_options;
  lower_options.dump_lowering = dump.lowering;
  GeneratedKernel generated = generateCuda(*kernel.fusion, lower_options);
  if (dump.cuda_kernel) dump.out() << "=== CUDA of " << c.name << "\n" << generated.source << "\n";
  options.dump = dump;
  CompiledKernel compiled =
      CompiledKernel::compile(generated.source, generated.kernel_name, options);
  kernel.executor = std::make_unique<KernelExecutor>(
      *kernel.fusion, std::move(generated), std::move(compiled), ExecutorOptions{.dump = dump});
  return kernel;
}

// Contiguous outputs for `plan`, every byte 0xFF (NaN for floats, -1 for integers, true for
// bools), so that an element the kernel never writes shows.
std::vector<DeviceTensor> poisonedOutputs(const KernelExecutor& executor, const LaunchPlan& plan,
                                          bool allocate) {
  const GeneratedKernel& kernel = executor.generatedKernel();
  std::vector<DeviceTensor> outputs(executor.fusion().outputs().size());
  for (size_t i = 0; i < kernel.parameters.size(); ++i) {
    const KernelParameter& p = kernel.parameters[i];
    if (p.kind != KernelParameter::Kind::OutputTensor) continue;
    const std::vector<int64_t>& sizes = plan.parameters[i].sizes;
    DeviceTensor& output = outputs[static_cast<size_t>(p.fusion_position)];
    if (allocate) {
      output = DeviceTensor::empty(p.dtype, sizes, plan.device);
      output.fillBytes(0xFF);
    } else {
      std::vector<int64_t> strides(sizes.size(), 1);
      for (size_t d = sizes.size(); d-- > 1;)
        strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
      output = DeviceTensor::borrow(p.dtype, sizes, strides, 0x7f0000000000, plan.device, nullptr);
    }
  }
  return outputs;
}

class ScheduledSuiteExecutionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduledSuiteExecutionTest, ExecutorPlansAndPacksWithoutAGpu) {
  const test::ScheduledCase& c = test::findScheduledCase(GetParam());
  SuiteKernel kernel = buildKernel(c, {.arch = driver::GpuArch{9, 0}});
  const std::vector<EvaluatorArgument> host = test::makeSuiteArguments(c, 1);
  // Device tensors with the inputs' layouts at made-up, well-aligned addresses.
  std::vector<ExecutorArgument> inputs;
  CUdeviceptr address = 0x7e0000000000;
  for (const EvaluatorArgument& argument : host) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      inputs.emplace_back(DeviceTensor::borrow(tensor->dtype(), tensor->sizes(), tensor->strides(),
                                               address, 0, nullptr));
      address += 0x100000000;
    } else {
      inputs.emplace_back(std::get<ScalarValue>(argument));
    }
  }
  const LaunchPlan plan = kernel.executor->plan(inputs);
  EXPECT_GE(plan.launch.threadsPerBlock(), 1);
  const std::vector<CUdeviceptr> allocations(plan.parameters.size(), 0x7d0000000000);
  const KernelArguments arguments = kernel.executor->packArguments(
      plan, inputs, poisonedOutputs(*kernel.executor, plan, /*allocate=*/false), allocations);
  EXPECT_EQ(arguments.size(), kernel.executor->generatedKernel().parameters.size());
}

TEST_P(ScheduledSuiteExecutionTest, MatchesTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const test::ScheduledCase& c = test::findScheduledCase(GetParam());
  SuiteKernel kernel = buildKernel(c, {});
  // Two runs on fresh inputs: the second must not pass on what the first left behind.
  for (const uint64_t seed : {uint64_t{101}, uint64_t{202}}) {
    const std::vector<EvaluatorArgument> host = test::makeSuiteArguments(c, seed);
    const std::vector<ExecutorArgument> inputs = test::deviceArguments(host);
    const LaunchPlan plan = kernel.executor->plan(inputs);
    const std::vector<DeviceTensor> outputs =
        kernel.executor->run(inputs, nullptr, poisonedOutputs(*kernel.executor, plan, true));
    BRAZE_CU(ctxSynchronize);
    // The oracle evaluates a fresh, equivalent fusion.
    const std::vector<EvaluatorArgument> expected = evaluateFusion(*c.build(), host);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      const HostTensor& reference = std::get<HostTensor>(expected[j]);
      EXPECT_TRUE(test::isClose(outputs[j].toHost(), reference, c.tolerance))
          << c.name << " (" << c.description << "), output " << j << ", seed " << seed
          << "\nlaunch: " << plan.launch.toString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, ScheduledSuiteExecutionTest, ::testing::ValuesIn(suiteNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace braze
