// KernelExecutor without a GPU: the contract checks, input validation, launch extents,
// launch-time checks, parameter packing and alignment, and the error a launch gives where
// there is no driver. The same executor on a GPU: kernel_executor_gpu_test.cpp.

#include <gtest/gtest.h>

#include <cstring>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/runtime/kernel_executor.h"
#include "runtime/hand_written_kernels.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::throwsError;

CompiledKernel compileForH100(const GeneratedKernel& kernel) {
  return CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                 {.arch = driver::GpuArch{9, 0}});
}

// A device tensor at a made-up address: enough for everything but a launch.
DeviceTensor fakeDevice(DataType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                        CUdeviceptr data = 0x7f0000000000, int device = 0) {
  return DeviceTensor::borrow(dtype, std::move(sizes), std::move(strides), data, device, nullptr);
}

template <typename T>
T read(std::span<const std::byte> bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

TEST(KernelExecutorTest, PlanEvaluatesLaunchExtentsFromActualSizes) {
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  // 37 x 45 with the inner dim strided by 2 and the outer one padded.
  const DeviceTensor a = fakeDevice(DataType::Float32, {37, 45}, {100, 2});
  const DeviceTensor b = fakeDevice(DataType::Float32, {37, 45}, {1, 37}, 0x7f0000100000);
  const LaunchPlan plan = executor.plan({a, b});
  EXPECT_EQ(plan.device, 0);
  EXPECT_EQ(plan.launch.grid, (std::array<int64_t, 3>{(37 * 45 + 127) / 128, 1, 1}));
  EXPECT_EQ(plan.launch.block, (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(plan.launch.dynamic_shared_memory_bytes, 0);
  ASSERT_EQ(plan.parameters.size(), 3u);
  EXPECT_EQ(plan.parameters[2].sizes, (std::vector<int64_t>{37, 45}));
  EXPECT_TRUE(plan.parameters[0].sizes.empty());
}

TEST(KernelExecutorTest, PackedParametersAreTheTensorStructs) {
  for (const DataType index_type : {DataType::Int32, DataType::Int64}) {
    test::HandWrittenKernel add = test::stridedAdd(index_type);
    KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
    const DeviceTensor a = fakeDevice(DataType::Float32, {3, 5}, {10, 2}, 0x1000);
    const DeviceTensor b = fakeDevice(DataType::Float32, {3, 5}, {1, 3}, 0x2000);
    const DeviceTensor out = fakeDevice(DataType::Float32, {3, 5}, {5, 1}, 0x3000);
    const std::vector<ExecutorArgument> inputs = {a, b};
    const LaunchPlan plan = executor.plan(inputs);
    KernelArguments arguments = executor.packArguments(plan, inputs, {out}, {0, 0, 0});
    ASSERT_EQ(arguments.size(), 3u);
    EXPECT_EQ(arguments.indexType(), index_type);
    const size_t index_bytes = index_type == DataType::Int32 ? 4 : 8;
    const auto index = [&](std::span<const std::byte> bytes, size_t slot) -> int64_t {
      const size_t offset = 8 + slot * index_bytes;
      return index_type == DataType::Int32 ? read<int32_t>(bytes, offset)
                                           : read<int64_t>(bytes, offset);
    };
    const std::vector<std::tuple<uint64_t, std::vector<int64_t>>> expected = {
        {0x1000, {3, 5, 10, 2}}, {0x2000, {3, 5, 1, 3}}, {0x3000, {3, 5, 5, 1}}};
    for (size_t i = 0; i < 3; ++i) {
      const auto bytes = arguments.bytes(i);
      EXPECT_EQ(bytes.size(), 8 + 4 * index_bytes) << i;
      EXPECT_EQ(read<uint64_t>(bytes, 0), std::get<0>(expected[i])) << i;
      for (size_t slot = 0; slot < 4; ++slot) {
        EXPECT_EQ(index(bytes, slot), std::get<1>(expected[i])[slot]) << i << " " << slot;
      }
    }
  }
}

TEST(KernelExecutorTest, ScalarsAndWorkspacesArePacked) {
  test::HandWrittenKernel scale = test::scaleThroughWorkspace();
  KernelExecutor executor(*scale.fusion, scale.kernel, compileForH100(scale.kernel));
  const std::vector<ExecutorArgument> inputs = {fakeDevice(DataType::Float32, {1000}, {1}),
                                                ScalarValue{0.1}};
  const LaunchPlan plan = executor.plan(inputs);
  EXPECT_EQ(plan.launch.grid[0], 16);
  EXPECT_EQ(plan.launch.block[0], 64);
  EXPECT_EQ(plan.parameters[3].workspace_bytes, 4000);
  // A float32 scalar reaches the kernel as the float it rounds to.
  EXPECT_EQ(std::get<double>(plan.parameters[1].scalar), static_cast<double>(0.1f));
  KernelArguments arguments = executor.packArguments(
      plan, inputs, {fakeDevice(DataType::Float32, {1000}, {1}, 0x5000)}, {0, 0, 0, 0xabc00});
  ASSERT_EQ(arguments.size(), 4u);
  EXPECT_EQ(arguments.bytes(1).size(), 4u);
  EXPECT_EQ(read<float>(arguments.bytes(1), 0), 0.1f);
  EXPECT_EQ(arguments.bytes(3).size(), 8u);
  EXPECT_EQ(read<uint64_t>(arguments.bytes(3), 0), 0xabc00u);
}

TEST(KernelExecutorTest, GlobalBuffersArePlannedContiguous) {
  test::HandWrittenKernel twice = test::doubleThroughGlobalBuffer();
  KernelExecutor executor(*twice.fusion, twice.kernel, compileForH100(twice.kernel));
  const std::vector<ExecutorArgument> inputs = {fakeDevice(DataType::Float64, {300}, {1})};
  const LaunchPlan plan = executor.plan(inputs);
  EXPECT_EQ(plan.parameters[1].sizes, (std::vector<int64_t>{300}));
  KernelArguments arguments = executor.packArguments(
      plan, inputs, {fakeDevice(DataType::Float64, {300}, {1}, 0x9000)}, {0, 0x8000, 0});
  EXPECT_EQ(read<uint64_t>(arguments.bytes(1), 0), 0x8000u);
  EXPECT_EQ(read<int32_t>(arguments.bytes(1), 8), 300);
  EXPECT_EQ(read<int32_t>(arguments.bytes(1), 12), 1);
}

TEST(KernelExecutorTest, InputsAreValidatedLikeTheReferenceEvaluator) {
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  const DeviceTensor a = fakeDevice(DataType::Float32, {4, 6}, {6, 1});
  EXPECT_TRUE(throwsError(
      [&] { executor.plan({a}); },
      {"KernelExecutor::run: the fusion has 2 inputs (T0, T1)", "1 argument was given"}));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({a, fakeDevice(DataType::Float16, {4, 6}, {6, 1})});
      },
      {"input 1 (T1)", "expected dtype float32 but got float16", "on cuda:0"}));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({a, fakeDevice(DataType::Float32, {4}, {1})});
      },
      {"input 1 (T1)", "expected rank 2 but got rank 1"}));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({a, ScalarValue{1.0}});
      },
      {"input 1 (T1)", "expected a float32 tensor of rank 2", "the float64 scalar 1"}));
}

TEST(KernelExecutorTest, SizesSharedBetweenInputsMustAgree) {
  // Two inputs whose dim 0 is the same extent Val, as when a frontend knows two sizes agree.
  Fusion fusion;
  Scalar* extent = fusion.create<Scalar>(DataType::Index);
  auto* a = fusion.create<TensorView>(
      DataType::Float32,
      std::vector<IterDomain*>{fusion.create<IterDomain>(extent, IterType::Iteration)});
  auto* b = fusion.create<TensorView>(
      DataType::Float32,
      std::vector<IterDomain*>{fusion.create<IterDomain>(extent, IterType::Iteration)});
  fusion.addInput(a);
  fusion.addInput(b);
  TensorView* out = add(a, b);
  fusion.addOutput(out);
  GeneratedKernel kernel;
  kernel.kernel_name = "k";
  kernel.source = "extern \"C\" __global__ void k() {}";
  kernel.parameters = {
      {.kind = test::Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 0},
      {.kind = test::Kind::InputTensor,
       .val = b,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 1},
      {.kind = test::Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 0},
  };
  KernelExecutor executor(fusion, kernel, compileForH100(kernel));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan(
            {fakeDevice(DataType::Float32, {5}, {1}), fakeDevice(DataType::Float32, {6}, {1})});
      },
      {"input 1 (T1): dim 0 has size 6", "(input 0) dim 0 has size 5"}));
  // A contiguous input given with a stride: refused, since the kernel may fold its indexing.
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan(
            {fakeDevice(DataType::Float32, {5}, {2}), fakeDevice(DataType::Float32, {5}, {1})});
      },
      {"input 0 (T0): dim 0 has stride 2", "needs stride 1"}));
}

TEST(KernelExecutorTest, DimsAnOpPairsMustHaveEqualSizes) {
  // Two inputs with their own symbolic sizes: the kernel computes them with one loop.
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2);
  TensorView* b = makeSymbolicTensor(fusion, 2);
  TensorView* out = add(a, b);
  fusion.addOutput(out);
  GeneratedKernel kernel;
  kernel.kernel_name = "k";
  kernel.source = "extern \"C\" __global__ void k() {}";
  kernel.parameters = {
      {.kind = test::Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 0},
      {.kind = test::Kind::InputTensor,
       .val = b,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 1},
      {.kind = test::Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 0},
  };
  KernelExecutor executor(fusion, kernel, compileForH100(kernel));
  executor.plan({fakeDevice(DataType::Float32, {3, 5}, {5, 1}),
                 fakeDevice(DataType::Float32, {3, 5}, {5, 1})});
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({fakeDevice(DataType::Float32, {3, 5}, {5, 1}),
                       fakeDevice(DataType::Float32, {3, 6}, {6, 1})});
      },
      {"kernel k cannot run with these inputs", "add T2 = f(T0, T1)", "dim 1 of T1", "dim 1 of T2",
       "same size, but they are 6 and 5"}));
  // A size-1 dim not declared broadcast is no exception: the kernel would index past it.
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({fakeDevice(DataType::Float32, {3, 5}, {5, 1}),
                       fakeDevice(DataType::Float32, {1, 5}, {5, 1})});
      },
      {"dim 0 of T1", "only dims declared broadcast"}));
}

TEST(KernelExecutorTest, BroadcastDimsPairWithAnySize) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2);
  TensorView* row = makeInputTensor(fusion, {.sizes = {1, -1}});
  TensorView* out = add(a, row);
  fusion.addOutput(out);
  GeneratedKernel kernel;
  kernel.kernel_name = "k";
  kernel.source = "extern \"C\" __global__ void k() {}";
  kernel.parameters = {
      {.kind = test::Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 0},
      {.kind = test::Kind::InputTensor,
       .val = row,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 1},
      {.kind = test::Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 0},
  };
  KernelExecutor executor(fusion, kernel, compileForH100(kernel));
  const LaunchPlan plan = executor.plan({fakeDevice(DataType::Float32, {7, 5}, {5, 1}),
                                         fakeDevice(DataType::Float32, {1, 5}, {5, 1})});
  EXPECT_EQ(plan.parameters[2].sizes, (std::vector<int64_t>{7, 5}));
}

// A kernel compiled for an extent (Fusion::assumeExtent) launches the block that follows from
// it, and refuses inputs of another extent with a reason.
TEST(KernelExecutorTest, AKernelCompiledForARowLengthRefusesOthers) {
  const auto fusion = test::findScheduledCase("inner_reduction_for_rows_of_512").build();
  const GeneratedKernel kernel = generateCuda(*fusion);
  KernelExecutor executor(*fusion, kernel, compileForH100(kernel));
  const LaunchPlan plan = executor.plan({fakeDevice(DataType::Float32, {37, 512}, {512, 1})});
  EXPECT_EQ(plan.launch.block[0], 128);
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({fakeDevice(DataType::Float32, {37, 1000}, {1000, 1})});
      },
      {"cannot run with these inputs", "compiled for", "= 512", "schedule of their own"}));
}

TEST(KernelExecutorTest, InputsOnDifferentDevicesAreRefused) {
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.plan({fakeDevice(DataType::Float32, {2, 2}, {2, 1}, 0x1000, 0),
                       fakeDevice(DataType::Float32, {2, 2}, {2, 1}, 0x2000, 1)});
      },
      {"input 1 (T1) is on cuda:1 but input 0 (T0) is on cuda:0", "same device"}));
  const LaunchPlan plan = executor.plan({fakeDevice(DataType::Float32, {2, 2}, {2, 1}, 0x1000, 1),
                                         fakeDevice(DataType::Float32, {2, 2}, {2, 1}, 0x2000, 1)});
  EXPECT_EQ(plan.device, 1);
}

TEST(KernelExecutorTest, LaunchChecksRefuseInputsTheKernelCannotTake) {
  test::HandWrittenKernel negate = test::negateThroughSharedMemory(64 * 1024);
  KernelExecutor executor(*negate.fusion, negate.kernel, compileForH100(negate.kernel));
  const LaunchPlan plan = executor.plan({fakeDevice(DataType::Float32, {512}, {1})});
  EXPECT_EQ(plan.launch.dynamic_shared_memory_bytes, 64 * 1024);
  EXPECT_EQ(plan.launch.grid[0], 2);
  EXPECT_TRUE(throwsError([&] { executor.plan({fakeDevice(DataType::Float32, {500}, {1})}); },
                          {"kernel negate_through_shared_memory cannot run with these inputs",
                           "the size of T0 must be a multiple of 256"}));
}

TEST(KernelExecutorTest, MisalignedVectorAccessesAreRefused) {
  test::HandWrittenKernel add = test::stridedAdd();
  add.kernel.alignments.push_back({.parameter = 1, .bytes = 16});
  add.kernel.alignments.push_back({.parameter = 2, .bytes = 16});
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  const DeviceTensor a = fakeDevice(DataType::Float32, {4, 8}, {8, 1}, 0x1004);
  const DeviceTensor aligned = fakeDevice(DataType::Float32, {4, 8}, {8, 1}, 0x2000);
  const DeviceTensor misaligned = fakeDevice(DataType::Float32, {4, 8}, {8, 1}, 0x2008);
  const std::vector<ExecutorArgument> good = {a, aligned};
  const LaunchPlan plan = executor.plan(good);
  // Parameter 0 has no alignment requirement, so its odd address is fine.
  executor.packArguments(plan, good, {aligned}, {0, 0, 0});
  const std::vector<ExecutorArgument> bad = {a, misaligned};
  EXPECT_TRUE(throwsError(
      [&] {
        executor.packArguments(plan, bad, {aligned}, {0, 0, 0});
      },
      {"parameter 1 (input 1, T1)", "16-byte vector loads or stores",
       "0x2008 is not a multiple of 16", "fresh contiguous copy"}));
  EXPECT_TRUE(throwsError(
      [&] {
        executor.packArguments(plan, good, {misaligned}, {0, 0, 0});
      },
      {"parameter 2 (output 0, T2)", "0x2008"}));
  // An empty tensor is never accessed.
  const std::vector<ExecutorArgument> empty = {fakeDevice(DataType::Float32, {0, 8}, {8, 1}),
                                               fakeDevice(DataType::Float32, {0, 8}, {8, 1}, 0x3)};
  executor.packArguments(executor.plan(empty), empty,
                         {fakeDevice(DataType::Float32, {0, 8}, {8, 1}, 0x5)}, {0, 0, 0});
}

TEST(KernelExecutorTest, StridesAVectorAccessStepsOverMustBeAligned) {
  test::HandWrittenKernel add = test::stridedAdd();
  add.kernel.alignments.push_back({.parameter = 0, .bytes = 16, .stride_dims = {0}});
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  const DeviceTensor out = fakeDevice(DataType::Float32, {4, 6}, {6, 1}, 0x3000);
  // Rows 8 floats apart: 32 bytes, a multiple of 16.
  const std::vector<ExecutorArgument> good = {fakeDevice(DataType::Float32, {4, 6}, {8, 1}, 0x1000),
                                              out};
  executor.packArguments(executor.plan(good), good, {out}, {0, 0, 0});
  // Rows 6 floats apart: 24 bytes.
  const std::vector<ExecutorArgument> bad = {fakeDevice(DataType::Float32, {4, 6}, {6, 1}, 0x1000),
                                             out};
  EXPECT_TRUE(throwsError(
      [&] {
        executor.packArguments(executor.plan(bad), bad, {out}, {0, 0, 0});
      },
      {"parameter 0 (input 0, T0)",
       "the stride of its dim 0 (6 elements of "
       "float32) is not a multiple of 16 bytes"}));
  // A single row is never stepped over.
  const std::vector<ExecutorArgument> one_row = {
      fakeDevice(DataType::Float32, {1, 6}, {6, 1}, 0x1000),
      fakeDevice(DataType::Float32, {1, 6}, {6, 1}, 0x3000)};
  executor.packArguments(executor.plan(one_row), one_row,
                         {fakeDevice(DataType::Float32, {1, 6}, {6, 1}, 0x5000)}, {0, 0, 0});
  test::HandWrittenKernel wrong = test::stridedAdd();
  wrong.kernel.alignments.push_back({.parameter = 0, .bytes = 16, .stride_dims = {2}});
  EXPECT_TRUE(throwsError(
      [&] { KernelExecutor(*wrong.fusion, wrong.kernel, compileForH100(wrong.kernel)); },
      {"stride alignment of dim 2 of parameter 0, which has rank 2", "please report"}));
}

TEST(KernelExecutorTest, IndexTypeOverflowIsRefusedBeforeLaunch) {
  test::HandWrittenKernel add = test::stridedAdd(DataType::Int32);
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  const int64_t big = int64_t{1} << 16;
  const DeviceTensor a = fakeDevice(DataType::Float32, {big, big}, {big, 1});
  const std::vector<ExecutorArgument> inputs = {a, a};
  const LaunchPlan plan = executor.plan(inputs);
  EXPECT_TRUE(throwsError(
      [&] {
        executor.packArguments(plan, inputs, {a}, {0, 0, 0});
      },
      {"parameter 0 (input 0, T0)", "int32 index type", "int64 indexing"}));
}

TEST(KernelExecutorTest, ContradictionsBetweenKernelAndFusionAreInternalErrors) {
  {
    test::HandWrittenKernel add = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    add.kernel.kernel_name = "another_name";
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*add.fusion, add.kernel, compiled); },
                            {"the generated kernel is another_name but the compiled one is "
                             "strided_add_i32",
                             "please report"}));
  }
  {
    test::HandWrittenKernel add = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    add.kernel.parameters.pop_back();
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*add.fusion, add.kernel, compiled); },
                            {"0 parameters for fusion output 0 (T2)", "please report"}));
  }
  {
    test::HandWrittenKernel add = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    add.kernel.parameters[1].fusion_position = 0;
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*add.fusion, add.kernel, compiled); },
                            {"parameter 1 (input 0, T1) is not input 0 of the fusion"}));
  }
  {
    test::HandWrittenKernel add = test::stridedAdd();
    test::HandWrittenKernel other = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*other.fusion, add.kernel, compiled); },
                            {"belongs to another fusion"}));
  }
  {
    test::HandWrittenKernel add = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    add.kernel.parameters[0].rank = 3;
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*add.fusion, add.kernel, compiled); },
                            {"has rank 3 but T0 has rank 2"}));
  }
  {
    test::HandWrittenKernel add = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    add.kernel.index_type = DataType::Float32;
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*add.fusion, add.kernel, compiled); },
                            {"index type float32", "int32 or int64"}));
  }
  {
    test::HandWrittenKernel add = test::stridedAdd();
    const CompiledKernel compiled = compileForH100(add.kernel);
    add.kernel.alignments.push_back({.parameter = 0, .bytes = 12});
    EXPECT_TRUE(throwsError([&] { KernelExecutor(*add.fusion, add.kernel, compiled); },
                            {"12 bytes, which is not a power of two"}));
  }
}

TEST(KernelExecutorTest, RunWithoutAGpuSaysSo) {
  if (driver::isDriverAvailable()) GTEST_SKIP() << "a CUDA driver and device are present";
  test::HandWrittenKernel add = test::stridedAdd();
  KernelExecutor executor(*add.fusion, add.kernel, compileForH100(add.kernel));
  const DeviceTensor a = fakeDevice(DataType::Float32, {4, 6}, {6, 1});
  EXPECT_TRUE(throwsError([&] { executor.run({a, a}); }, {"no CUDA driver or device: "}));
  // Bad inputs are still reported as such first.
  EXPECT_TRUE(throwsError([&] { executor.run({a}); }, {"1 argument was given"}));
}

}  // namespace
}  // namespace braze
