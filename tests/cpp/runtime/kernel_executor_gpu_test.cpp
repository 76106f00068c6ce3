// KernelExecutor on a GPU (every test skips itself without one): hand-written kernels against
// the reference evaluator, on fresh random inputs, with outputs poisoned before the launch so
// that an element the kernel never writes shows as a mismatch.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "runtime/hand_written_kernels.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;

class KernelExecutorGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  }
};

// Contiguous outputs for `plan`, every byte 0xFF (NaN for floats).
std::vector<DeviceTensor> poisonedOutputs(const KernelExecutor& executor, const LaunchPlan& plan) {
  std::vector<DeviceTensor> outputs;
  const GeneratedKernel& kernel = executor.generatedKernel();
  for (size_t j = 0; j < executor.fusion().outputs().size(); ++j) {
    for (size_t i = 0; i < kernel.parameters.size(); ++i) {
      const KernelParameter& p = kernel.parameters[i];
      if (p.kind != KernelParameter::Kind::OutputTensor ||
          p.fusion_position != static_cast<int64_t>(j)) {
        continue;
      }
      outputs.push_back(DeviceTensor::empty(p.dtype, plan.parameters[i].sizes, plan.device));
      outputs.back().fillBytes(0xFF);
    }
  }
  return outputs;
}

void synchronize() {
  BRAZE_CU(ctxSynchronize);
}

TEST_F(KernelExecutorGpuTest, StridedAddMatchesTheReference) {
  for (const DataType index_type : {DataType::Int32, DataType::Int64}) {
    test::HandWrittenKernel add = test::stridedAdd(index_type);
    KernelExecutor executor(*add.fusion, add.kernel,
                            CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name));
    test::RandomTensors random(index_type == DataType::Int32 ? 11 : 12);
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{1, 1}, {37, 45}, {128, 3}, {5, 1000}, {300, 257}}) {
      const HostTensor a = random.uniform(DataType::Float32, sizes);
      const HostTensor b = random.uniform(DataType::Float32, sizes);
      // Non-contiguous on the device: a transposed layout and a gapped one.
      const HostTensor a_layout = test::withAllocationOrder(a, {1, 0});
      const HostTensor b_layout = test::withGaps(b, 1, 3);
      const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a_layout),
                                                    DeviceTensor::fromHost(b_layout)};
      const LaunchPlan plan = executor.plan(inputs);
      std::vector<DeviceTensor> outputs =
          executor.run(inputs, nullptr, poisonedOutputs(executor, plan));
      synchronize();
      const std::vector<HostTensor> expected =
          evaluateFusionTensors(*add.fusion, {a_layout, b_layout});
      test::expectClose(outputs[0].toHost(), expected[0]);
      // And independently of the evaluator.
      const std::vector<double> x = test::valuesOf(a);
      const std::vector<double> y = test::valuesOf(b);
      const std::vector<double> got = test::valuesOf(outputs[0].toHost());
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(got[i], static_cast<double>(static_cast<float>(x[i]) + static_cast<float>(y[i])))
            << "element " << i << " of " << sizes[0] << "x" << sizes[1];
      }
    }
  }
}

// run() reuses its last launch plan only for arguments of the same signature: alternating
// shapes and layouts on one executor, each launch on fresh values matches the reference.
TEST_F(KernelExecutorGpuTest, ReusesItsPlanOnlyForTheSameArgumentSignature) {
  test::HandWrittenKernel add = test::stridedAdd(DataType::Int64);
  KernelExecutor executor(*add.fusion, add.kernel,
                          CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name));
  test::RandomTensors random(21);
  const std::vector<std::vector<int64_t>> shapes = {{37, 45}, {37, 45}, {300, 257}, {37, 45}};
  for (size_t step = 0; step < shapes.size() * 2; ++step) {
    const std::vector<int64_t>& sizes = shapes[step % shapes.size()];
    const HostTensor a = random.uniform(DataType::Float32, sizes);
    const HostTensor b = random.uniform(DataType::Float32, sizes);
    // The second round transposes a: same sizes, other strides.
    const HostTensor a_layout = step < shapes.size() ? a : test::withAllocationOrder(a, {1, 0});
    const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a_layout),
                                                  DeviceTensor::fromHost(b)};
    std::vector<DeviceTensor> outputs =
        executor.run(inputs, nullptr, poisonedOutputs(executor, executor.plan(inputs)));
    synchronize();
    const std::vector<HostTensor> expected = evaluateFusionTensors(*add.fusion, {a_layout, b});
    test::expectClose(outputs[0].toHost(), expected[0]);
  }
}

TEST_F(KernelExecutorGpuTest, AllocatedOutputsAreContiguousOnTheInputsDevice) {
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel,
                          CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name));
  test::RandomTensors random(13);
  const HostTensor a = random.uniform(DataType::Float32, {20, 30});
  const HostTensor b = random.uniform(DataType::Float32, {20, 30});
  const std::vector<DeviceTensor> outputs =
      executor.run({DeviceTensor::fromHost(a), DeviceTensor::fromHost(b)});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(outputs[0].isContiguous());
  EXPECT_EQ(outputs[0].sizes(), (std::vector<int64_t>{20, 30}));
  EXPECT_EQ(outputs[0].device(), 0);
  synchronize();
  test::expectClose(outputs[0].toHost(), evaluateFusionTensors(*add.fusion, {a, b})[0]);
}

TEST_F(KernelExecutorGpuTest, RunsOnTheGivenStream) {
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel,
                          CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name));
  CUstream stream = nullptr;
  // A stream belongs to the current context: make the one the executor uses current first.
  driver::makePrimaryContextCurrent(0);
  BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  test::RandomTensors random(14);
  const HostTensor a = random.uniform(DataType::Float32, {64, 64});
  const HostTensor b = random.uniform(DataType::Float32, {64, 64});
  const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a),
                                                DeviceTensor::fromHost(b)};
  std::vector<DeviceTensor> outputs = poisonedOutputs(executor, executor.plan(inputs));
  synchronize();
  outputs = executor.run(inputs, stream, outputs);
  BRAZE_CU(streamSynchronize, stream);
  test::expectClose(outputs[0].toHost(), evaluateFusionTensors(*add.fusion, {a, b})[0]);
  BRAZE_CU(streamDestroy, stream);
}

TEST_F(KernelExecutorGpuTest, ScalarInputsAndZeroedWorkspaces) {
  test::HandWrittenKernel scale = test::scaleThroughWorkspace();
  KernelExecutor executor(*scale.fusion, scale.kernel,
                          CompiledKernel::compile(scale.kernel.source, scale.kernel.kernel_name));
  test::RandomTensors random(15);
  // Several runs: a workspace reused from the pool must be zeroed again each time.
  for (int run = 0; run < 4; ++run) {
    const HostTensor a = random.uniform(DataType::Float32, {1000 + run * 77});
    const double s = random.value(-3.0, 3.0);
    const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a), ScalarValue{s}};
    const LaunchPlan plan = executor.plan(inputs);
    const std::vector<DeviceTensor> outputs =
        executor.run(inputs, nullptr, poisonedOutputs(executor, plan));
    synchronize();
    const std::vector<EvaluatorArgument> reference =
        evaluateFusion(*scale.fusion, {a, ScalarValue{s}});
    test::expectClose(outputs[0].toHost(), std::get<HostTensor>(reference[0]));
  }
}

TEST_F(KernelExecutorGpuTest, GlobalBuffersAreAllocatedPerLaunch) {
  test::HandWrittenKernel twice = test::doubleThroughGlobalBuffer();
  KernelExecutor executor(*twice.fusion, twice.kernel,
                          CompiledKernel::compile(twice.kernel.source, twice.kernel.kernel_name));
  test::RandomTensors random(16);
  for (const int64_t size : {1, 255, 256, 100000}) {
    const HostTensor a = random.uniform(DataType::Float64, {size});
    const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a)};
    const std::vector<DeviceTensor> outputs =
        executor.run(inputs, nullptr, poisonedOutputs(executor, executor.plan(inputs)));
    synchronize();
    test::expectClose(outputs[0].toHost(), evaluateFusionTensors(*twice.fusion, {a})[0]);
  }
}

TEST_F(KernelExecutorGpuTest, DynamicSharedMemoryAbove48KiBIsRequested) {
  const driver::DeviceProperties& device = driver::deviceProperties(0);
  // The most a block may have, less what the kernel declares statically (nothing here).
  const int64_t bytes = device.max_shared_memory_per_block_optin / 1024 * 1024;
  ASSERT_GT(bytes, 48 * 1024);
  test::HandWrittenKernel negate = test::negateThroughSharedMemory(bytes);
  KernelExecutor executor(*negate.fusion, negate.kernel,
                          CompiledKernel::compile(negate.kernel.source, negate.kernel.kernel_name));
  test::RandomTensors random(17);
  const HostTensor a = random.uniform(DataType::Float32, {256 * 40});
  const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a)};
  const std::vector<DeviceTensor> outputs =
      executor.run(inputs, nullptr, poisonedOutputs(executor, executor.plan(inputs)));
  synchronize();
  test::expectClose(outputs[0].toHost(), evaluateFusionTensors(*negate.fusion, {a})[0]);

  test::HandWrittenKernel too_much = test::negateThroughSharedMemory(bytes + 1024);
  KernelExecutor refused(
      *too_much.fusion, too_much.kernel,
      CompiledKernel::compile(too_much.kernel.source, too_much.kernel.kernel_name));
  EXPECT_TRUE(throwsError([&] { refused.run(inputs); },
                          {"bytes of dynamic and 0 bytes of static shared memory exceed"}));
}

TEST_F(KernelExecutorGpuTest, ZeroSizeInputsLaunchNothing) {
  test::HandWrittenKernel add = test::stridedAdd();
  std::ostringstream dump;
  ExecutorOptions options;
  options.dump.launch_params = true;
  options.dump.stream = &dump;
  KernelExecutor executor(*add.fusion, add.kernel,
                          CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name),
                          options);
  const DeviceTensor empty = DeviceTensor::empty(DataType::Float32, {0, 7});
  const std::vector<DeviceTensor> outputs = executor.run({empty, empty});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].sizes(), (std::vector<int64_t>{0, 7}));
  EXPECT_NE(dump.str().find("(empty: not launched)"), std::string::npos) << dump.str();
}

TEST_F(KernelExecutorGpuTest, AnEmptyLaunchWithOutputsToWriteIsRefused) {
  test::HandWrittenKernel add = test::stridedAdd();
  add.kernel.launch.grid[0] = add.fusion->constantIndex(0);
  KernelExecutor executor(*add.fusion, add.kernel,
                          CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name));
  const DeviceTensor a = DeviceTensor::empty(DataType::Float32, {4, 6});
  EXPECT_TRUE(throwsError(
      [&] {
        executor.run({a, a});
      },
      {"launches no threads for these inputs (grid (0, 1, 1)",
       "output 0 (T2) has 24 elements it would leave unwritten"}));
}

TEST_F(KernelExecutorGpuTest, LaunchParamsDumpNamesEveryParameter) {
  test::HandWrittenKernel scale = test::scaleThroughWorkspace();
  std::ostringstream dump;
  ExecutorOptions options;
  options.dump.launch_params = true;
  options.dump.stream = &dump;
  KernelExecutor executor(*scale.fusion, scale.kernel,
                          CompiledKernel::compile(scale.kernel.source, scale.kernel.kernel_name),
                          options);
  test::RandomTensors random(18);
  executor.run(
      {DeviceTensor::fromHost(random.uniform(DataType::Float32, {100})), ScalarValue{2.0}});
  synchronize();
  const std::string text = dump.str();
  for (const char* fragment :
       {"=== launch scale_through_workspace on cuda:0: grid (2, 1, 1) block (64, 1, 1) dynamic "
        "smem 0 bytes, index type int32",
        "parameter 0 (input 0, T0): float32[100] strides [1] on cuda:0 at 0x",
        "parameter 1 (scalar input 1, s", "float32 2", "parameter 2 (output 0, T1): float32[100]",
        "parameter 3 (workspace): 400 zeroed bytes at 0x"}) {
    EXPECT_NE(text.find(fragment), std::string::npos) << fragment << "\n" << text;
  }
}

TEST_F(KernelExecutorGpuTest, WrongOutputsAreRefused) {
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel,
                          CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name));
  const DeviceTensor a = DeviceTensor::empty(DataType::Float32, {4, 6});
  EXPECT_TRUE(throwsError(
      [&] {
        executor.run({a, a}, nullptr, {DeviceTensor::empty(DataType::Float32, {4, 5})});
      },
      {"output 0 (T2): expected a float32[4, 6] tensor but got float32[4, 5]"}));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.run({a, a}, nullptr, {DeviceTensor::empty(DataType::Float64, {4, 6})});
      },
      {"output 0 (T2): expected a float32[4, 6]"}));
  const DeviceTensor wide = DeviceTensor::empty(DataType::Float32, {4, 12});
  EXPECT_TRUE(throwsError(
      [&] {
        executor.run({a, a}, nullptr,
                     {DeviceTensor::borrow(DataType::Float32, {4, 6}, {12, 1}, wide.data(), 0,
                                           wide.owner())});
      },
      {"must be dense with storage and strides [6, 1]"}));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.run({a, a}, nullptr, {a, a});
      },
      {"the fusion has 1 output but 2 output tensors were given"}));
}

TEST_F(KernelExecutorGpuTest, AKernelForAnotherArchitectureIsRefused) {
  const driver::GpuArch device = driver::deviceProperties(0).arch;
  const driver::GpuArch other = device.major == 9 ? driver::GpuArch{10, 0} : driver::GpuArch{9, 0};
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(
      *add.fusion, add.kernel,
      CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name, {.arch = other}));
  const DeviceTensor a = DeviceTensor::empty(DataType::Float32, {4, 6});
  EXPECT_TRUE(throwsError(
      [&] {
        executor.run({a, a});
      },
      {"was compiled for " + other.toString(), "cannot run",
       "CompileOptions{.arch = driver::GpuArch{"}));
}

TEST_F(KernelExecutorGpuTest, PtxOnlyKernelsAreCompiledByTheDriver) {
  const driver::GpuArch device = driver::deviceProperties(0).arch;
  test::HandWrittenKernel add = test::stridedAdd();
  // A virtual target: NVRTC produces PTX only, which the driver compiles at load.
  const CompileOptions options{.arch = device, .ptx_only = true};
  const CompiledKernel compiled =
      CompiledKernel::compile(add.kernel.source, add.kernel.kernel_name, options);
  ASSERT_TRUE(compiled.cubin().empty());
  KernelExecutor executor(*add.fusion, add.kernel, compiled);
  test::RandomTensors random(19);
  const HostTensor a = random.uniform(DataType::Float32, {9, 9});
  const HostTensor b = random.uniform(DataType::Float32, {9, 9});
  const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(a),
                                                DeviceTensor::fromHost(b)};
  const std::vector<DeviceTensor> outputs =
      executor.run(inputs, nullptr, poisonedOutputs(executor, executor.plan(inputs)));
  synchronize();
  test::expectClose(outputs[0].toHost(), evaluateFusionTensors(*add.fusion, {a, b})[0]);
}

}  // namespace
}  // namespace braze
