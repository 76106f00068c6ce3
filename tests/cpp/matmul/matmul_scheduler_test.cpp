// The matmul scheduler without a GPU: what it accepts and why it refuses the rest, the kernel
// its template becomes (parameters, launch, the sm_90a code it compiles to), and a linear run
// through the executor cache on the CPU tier with that kernel compiled.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "matmul_scheduler.h"
#include "support/random_tensor.h"
#include "support/sass_listing.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

std::unique_ptr<Fusion> linearFusion(DataType dtype, bool bias = false) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* w = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* b = bias ? makeSymbolicTensor(*fusion, 1, dtype) : nullptr;
  fusion->addOutput(linear(x, w, b));
  return fusion;
}

SchedulerRuntimeInfo infoFor(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::BFloat16) {
  SchedulerRuntimeInfo info;
  info.device = driver::h100Properties();
  info.arguments = {TensorArgumentInfo{dtype, {m, k}, {k, 1}, true, ""},
                    TensorArgumentInfo{dtype, {n, k}, {k, 1}, true, ""}};
  info.data_alignments = {256, 256};
  return info;
}

TEST(MatmulSchedulerTest, AcceptsLinearInBf16AndFp16) {
  for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
    const auto fusion = linearFusion(dtype);
    EXPECT_EQ(matmul_scheduler::canScheduleCompileTime(*fusion), std::nullopt);
    EXPECT_EQ(matmul_scheduler::canScheduleRunTime(*fusion, infoFor(300, 514, 1000, dtype)),
              std::nullopt);
  }
}

TEST(MatmulSchedulerTest, RefusalsSayWhy) {
  auto has = [](const std::optional<std::string>& why, const std::string& text) {
    return why.has_value() && why->find(text) != std::string::npos;
  };
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*linearFusion(DataType::BFloat16, true)),
                  "bias"));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*linearFusion(DataType::Float32)),
                  "bf16 or fp16"));
  auto epilogue = linearFusion(DataType::BFloat16);
  epilogue->replaceOutput(epilogue->outputs()[0], relu(epilogue->outputs()[0]->as<TensorView>()));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*epilogue), "single linear"));
  auto transposed = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(
      *transposed, {.dtype = DataType::BFloat16, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  transposed->addOutput(linear(x, makeSymbolicTensor(*transposed, 2, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*transposed), "row-major"));

  const auto fusion = linearFusion(DataType::BFloat16);
  EXPECT_TRUE(
      has(matmul_scheduler::canScheduleRunTime(*fusion, infoFor(64, 64, 36)), "multiple of 8"));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleRunTime(*fusion, infoFor(64, 63, 64)), "odd"));
  SchedulerRuntimeInfo ampere = infoFor(64, 64, 64);
  ampere.device.arch = driver::GpuArch{8, 0};
  EXPECT_TRUE(has(matmul_scheduler::canScheduleRunTime(*fusion, ampere), "sm_90a"));
  SchedulerRuntimeInfo unaligned = infoFor(64, 64, 64);
  unaligned.data_alignments = {256, 8};
  EXPECT_TRUE(has(matmul_scheduler::canScheduleRunTime(*fusion, unaligned), "16-byte"));
}

TEST(MatmulSchedulerTest, TheTemplateBecomesAnSm90aKernelWithTensorMaps) {
  for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
    auto fusion = linearFusion(dtype);
    matmul_scheduler::schedule(
        *fusion, matmul_scheduler::computeHeuristics(*fusion, infoFor(256, 256, 256, dtype)));
    ASSERT_NE(fusion->kernelTemplate(), nullptr);
    const GeneratedKernel kernel = generateCuda(*fusion);
    using Kind = KernelParameter::Kind;
    ASSERT_EQ(kernel.parameters.size(), 4u);
    EXPECT_EQ(kernel.parameters[0].kind, Kind::InputTensorMap);
    EXPECT_EQ(kernel.parameters[1].kind, Kind::InputTensorMap);
    EXPECT_EQ(kernel.parameters[1].fusion_position, 1);
    EXPECT_EQ(kernel.parameters[3].kind, Kind::OutputTensor);
    EXPECT_TRUE(kernel.arch_specific);
    EXPECT_EQ(kernel.source.find("BRAZE_KERNEL_NAME"), std::string::npos);
    // A clone keeps the template, on its own tensors.
    const std::unique_ptr<Fusion> copy = fusion->clone();
    ASSERT_NE(copy->kernelTemplate(), nullptr);
    EXPECT_EQ(copy->kernelTemplate()->parameters[0].tensor, copy->inputs()[0]);
    EXPECT_EQ(generateCuda(*copy).kernel_name, kernel.kernel_name);

    const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                            {.arch = driver::GpuArch{9, 0, true}});
    EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << compiled.compileLog();
    if (const std::optional<std::string> nvdisasm = test::findNvdisasm()) {
      const std::string sass = test::disassemble(*nvdisasm, compiled.cubin());
      EXPECT_NE(sass.find(dtype == DataType::BFloat16 ? "HGMMA.64x256x16.F32.BF16"
                                                      : "HGMMA.64x256x16.F32 "),
                std::string::npos)
          << sass;
      EXPECT_EQ(test::countInstructions(sass, "UTMALDG"), 2) << sass;
    }
  }
}

TEST(MatmulSchedulerTest, TheExecutorCacheRunsLinearWithTheMatmulKernel) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  FusionExecutorCache cache(linearFusion(DataType::BFloat16), options);
  test::RandomTensors random(3);
  const HostTensor x = random.uniform(DataType::BFloat16, {200, 136}, -1.0, 1.0);
  const HostTensor w = random.uniform(DataType::BFloat16, {328, 136}, -1.0, 1.0);
  const std::vector<FusionArgument> outputs = cache.run({x, w});
  test::expectClose(std::get<HostTensor>(outputs[0]),
                    evaluateFusionTensors(cache.fusion(), {x, w})[0],
                    test::toleranceFor(DataType::BFloat16));
  const std::string described = cache.lastRuntime()->describe();
  EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
}

}  // namespace
}  // namespace braze
