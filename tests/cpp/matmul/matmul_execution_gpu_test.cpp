// Linear through the executor cache on an sm_90 GPU (skipped elsewhere): the matmul
// scheduler's kernel against the reference evaluator on fresh random inputs, with tails in
// every dim, in bf16 and fp16, with every fused epilogue (epilogue_cases.h), and replayed as a
// CUDA graph on moved inputs (whose tensor maps are re-addressed).

#include <gtest/gtest.h>

#include <array>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_properties.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/kernel_executor.h"
#include "epilogue_cases.h"
#include "gemm_template.h"
#include "layout_cases.h"
#include "matmul_scheduler.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

class MatmulExecutionGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA device: " << reason;
    const driver::GpuArch arch = driver::deviceProperties(0).arch;
    if (!(arch.major == 9 && arch.minor == 0))
      GTEST_SKIP() << "needs an sm_90 GPU; device 0 is " << arch.toString();
  }
};

using test::linearFusion;

ExecutorCacheOptions shipped() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

// A fusion scheduled with forced params, compiled and launched directly on `inputs` (x, w).
std::vector<DeviceTensor> launchScheduled(const Fusion& fusion,
                                          const std::vector<HostTensor>& inputs) {
  GeneratedKernel kernel = generateCuda(fusion);
  CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                    {.arch = driver::GpuArch{9, 0, true}});
  KernelExecutor executor(fusion, std::move(kernel), std::move(compiled));
  return executor.run({DeviceTensor::fromHost(inputs[0]), DeviceTensor::fromHost(inputs[1])});
}

TEST_F(MatmulExecutionGpuTest, LinearMatchesTheReferenceWithTails) {
  for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
    FusionExecutorCache cache(linearFusion(dtype), shipped());
    test::RandomTensors random(dtype == DataType::BFloat16 ? 51 : 52);
    for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {128, 256, 64},
             {200, 328, 136},
             {300, 514, 1000},
             {1, 2, 8},
             {1024, 1024, 512},
             {200, 327, 136},  // an odd N: one column per epilogue call
             {1, 1, 8}}) {
      const HostTensor x = random.uniform(dtype, {m, k}, -1.0, 1.0);
      const HostTensor w = random.uniform(dtype, {n, k}, -1.0, 1.0);
      const std::vector<FusionArgument> outputs =
          cache.run({DeviceTensor::fromHost(x), DeviceTensor::fromHost(w)});
      BRAZE_CU(ctxSynchronize);
      EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(),
                                evaluateFusionTensors(cache.fusion(), {x, w})[0],
                                test::toleranceFor(dtype)))
          << dtype << " " << m << " x " << n << " x " << k;
      const std::string described = cache.lastRuntime()->describe();
      EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
    }
  }
}

TEST_F(MatmulExecutionGpuTest, FusedEpiloguesMatchTheReference) {
  for (const test::EpilogueCase& epilogue : test::epilogueCases()) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
      FusionExecutorCache cache(epilogue.build(dtype), shipped());
      test::RandomTensors random(dtype == DataType::BFloat16 ? 54 : 55);
      for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{
               {128, 256, 64}, {200, 328, 136}, {300, 514, 1000}, {1, 2, 8}, {200, 327, 136}}) {
        std::vector<EvaluatorArgument> inputs = {test::exactOperand(random, dtype, {m, k}),
                                                 test::exactOperand(random, dtype, {n, k})};
        for (EvaluatorArgument& extra : epilogue.extra_inputs(random, dtype, m, n))
          inputs.push_back(std::move(extra));
        std::vector<FusionArgument> arguments;
        for (const EvaluatorArgument& input : inputs) {
          if (const auto* tensor = std::get_if<HostTensor>(&input)) {
            arguments.push_back(DeviceTensor::fromHost(*tensor));
          } else {
            arguments.push_back(std::get<ScalarValue>(input));
          }
        }
        const std::vector<FusionArgument> outputs = cache.run(arguments);
        BRAZE_CU(ctxSynchronize);
        const std::vector<EvaluatorArgument> expected = evaluateFusion(cache.fusion(), inputs);
        ASSERT_EQ(outputs.size(), expected.size());
        for (size_t i = 0; i < outputs.size(); ++i) {
          const HostTensor& want = std::get<HostTensor>(expected[i]);
          EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[i]).toHost(), want,
                                    test::toleranceFor(want.dtype())))
              << epilogue.name << " output " << i << " in " << dtype << ", " << m << " x " << n
              << " x " << k;
        }
        const std::string described = cache.lastRuntime()->describe();
        EXPECT_NE(described.find("braze::matmul"), std::string::npos)
            << epilogue.name << ": " << described;
        EXPECT_EQ(described.find("braze::pointwise"), std::string::npos)
            << epilogue.name << " took a second kernel: " << described;
      }
    }
  }
}

// Runs one product of `layout` through `cache` on fresh exact operands and checks it against
// the reference and that the matmul kernel ran it.
void expectLayoutMatches(FusionExecutorCache& cache, const test::LayoutCase& layout, DataType dtype,
                         test::RandomTensors& random, int64_t batches, int64_t m, int64_t n,
                         int64_t k) {
  const std::vector<HostTensor> inputs = layout.inputs(random, dtype, batches, m, n, k);
  const std::vector<FusionArgument> outputs =
      cache.run({DeviceTensor::fromHost(inputs[0]), DeviceTensor::fromHost(inputs[1])});
  BRAZE_CU(ctxSynchronize);
  EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(),
                            evaluateFusionTensors(cache.fusion(), inputs)[0],
                            test::toleranceFor(dtype)))
      << layout.name << " in " << dtype << ", " << batches << " x " << m << " x " << n << " x "
      << k;
  const std::string described = cache.lastRuntime()->describe();
  EXPECT_NE(described.find("braze::matmul"), std::string::npos) << layout.name << ": " << described;
}

// Every layout and batch (layout_cases.h), in bf16 and fp16, at sizes with tails in every dim
// the layout allows, against the reference on exact operands.
TEST_F(MatmulExecutionGpuTest, EveryLayoutAndBatchMatchesTheReference) {
  for (const test::LayoutCase& layout : test::layoutCases()) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
      FusionExecutorCache cache(layout.build(dtype), shipped());
      test::RandomTensors random(dtype == DataType::BFloat16 ? 56 : 57);
      for (const auto& [batches, m, n, k] : std::vector<std::array<int64_t, 4>>{
               {2, 200, 328, 136}, {3, 72, 520, 1000}, {1, 128, 256, 64}, {2, 300, 514, 264}}) {
        if (!layout.accepts(m, n)) continue;
        expectLayoutMatches(cache, layout, dtype, random, batches, m, n, k);
      }
    }
  }
}

// Operands whose rows the copy engine cannot read (K of 37 or 1001, MN-major operands of 36 or
// 42 rows, a start 2 bytes past a 16-byte boundary) are copied K-innermost and padded first; the
// result is the same.
TEST_F(MatmulExecutionGpuTest, UnalignedOperandsAreCopiedFirstAndMatchTheReference) {
  for (const test::LayoutCase& layout : test::layoutCases()) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
      FusionExecutorCache cache(layout.build(dtype), shipped());
      test::RandomTensors random(dtype == DataType::BFloat16 ? 58 : 59);
      for (const auto& [batches, m, n, k] : std::vector<std::array<int64_t, 4>>{
               {2, 36, 42, 37}, {3, 136, 130, 1001}, {2, 36, 42, 64}, {1, 1, 1, 1}}) {
        expectLayoutMatches(cache, layout, dtype, random, batches, m, n, k);
      }
    }
  }
  // A column view of a wider tensor: its data starts 2 bytes past the allocation.
  auto fusion = std::make_unique<Fusion>();
  TensorView* columns = makeInputTensor(
      *fusion, {.dtype = DataType::BFloat16, .sizes = {-1, -1}, .contiguity = {false, true}});
  TensorView* weight = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* bias = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
  fusion->addOutput(linear(columns, weight, bias));
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(60);
  const HostTensor wide = random.uniform(DataType::BFloat16, {72, 1002}, -1.0, 1.0);
  const HostTensor x = wide.strided(1, 1, 1);
  const HostTensor w = random.uniform(DataType::BFloat16, {40, 1001}, -1.0, 1.0);
  const HostTensor b = random.uniform(DataType::BFloat16, {40}, -1.0, 1.0);
  const DeviceTensor wide_device = DeviceTensor::fromHost(wide);
  const DeviceTensor x_device = DeviceTensor::borrow(DataType::BFloat16, {72, 1001}, {1002, 1},
                                                     wide_device.data() + 2, 0, nullptr);
  const std::vector<FusionArgument> outputs =
      cache.run({x_device, DeviceTensor::fromHost(w), DeviceTensor::fromHost(b)});
  BRAZE_CU(ctxSynchronize);
  EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(),
                            evaluateFusionTensors(cache.fusion(), {x, w, b})[0],
                            test::toleranceFor(DataType::BFloat16)));
  const std::string described = cache.lastRuntime()->describe();
  EXPECT_NE(described.find("braze::pointwise"), std::string::npos) << described;
}

// A batched linear with its bias, GELU and a residual of the batched result's shape, with one
// and with two batch dims.
TEST_F(MatmulExecutionGpuTest, BatchedEpilogueMatchesTheReference) {
  for (const std::vector<int64_t>& batch : std::vector<std::vector<int64_t>>{{3}, {2, 3}}) {
    const auto rank = static_cast<int64_t>(batch.size()) + 2;
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, rank, DataType::BFloat16);
    TensorView* w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* bias = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
    TensorView* residual = makeSymbolicTensor(*fusion, rank, DataType::BFloat16);
    fusion->addOutput(add(gelu(linear(x, w, bias), GeluApproximation::Tanh), residual));
    FusionExecutorCache cache(std::move(fusion), shipped());
    test::RandomTensors random(58);
    std::vector<int64_t> x_sizes = batch, result_sizes = batch;
    x_sizes.insert(x_sizes.end(), {200, 136});
    result_sizes.insert(result_sizes.end(), {200, 328});
    const std::vector<HostTensor> inputs = {
        test::exactOperand(random, DataType::BFloat16, x_sizes),
        test::exactOperand(random, DataType::BFloat16, {328, 136}),
        random.uniform(DataType::BFloat16, {328}),
        random.uniform(DataType::BFloat16, result_sizes)};
    std::vector<FusionArgument> arguments;
    for (const HostTensor& input : inputs) arguments.push_back(DeviceTensor::fromHost(input));
    const std::vector<FusionArgument> outputs = cache.run(arguments);
    BRAZE_CU(ctxSynchronize);
    EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(),
                              evaluateFusionTensors(cache.fusion(), inputs)[0],
                              test::toleranceFor(DataType::BFloat16)))
        << batch.size() << " batch dims";
    const std::string described = cache.lastRuntime()->describe();
    EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
    EXPECT_EQ(described.find("braze::pointwise"), std::string::npos) << described;
  }
}

// Every tile width, K split, pair sharing B and way of storing C the heuristics can choose,
// forced on a few layouts with an uneven split of K (29 steps), an odd number of tile rows (a
// pair's second tile outside C) and C's tails clipped by the bulk-copy store, launched
// directly, against the reference.
TEST_F(MatmulExecutionGpuTest, EveryTileWidthAndSplitMatchesTheReference) {
  const std::vector<test::LayoutCase> layouts = test::layoutCases();
  test::RandomTensors random(59);
  for (const size_t which : {size_t(0), size_t(4), size_t(6)}) {
    const test::LayoutCase& layout = layouts[which];
    const std::vector<HostTensor> inputs =
        layout.inputs(random, DataType::BFloat16, 2, 304, 328, 1800);
    for (const auto& [tile_n, split_k, cluster_m, tma_store] :
         std::vector<std::array<int64_t, 4>>{{256, 1, 1, 1},
                                             {256, 1, 1, 0},
                                             {192, 1, 1, 1},
                                             {128, 1, 1, 0},
                                             {64, 1, 1, 1},
                                             {128, 2, 1, 0},
                                             {64, 4, 1, 0},
                                             {256, 8, 1, 0},
                                             {192, 2, 1, 0},
                                             {256, 1, 2, 1},
                                             {128, 1, 2, 0}}) {
      auto fusion = layout.build(DataType::BFloat16);
      matmul_scheduler::MatmulParams params;
      params.tile_n = tile_n;
      params.split_k = split_k;
      params.cluster_m = cluster_m;
      params.tma_store = tma_store;
      params.stages = matmul_scheduler::maxGemmStages(tile_n, tma_store != 0);
      params.ctas = split_k > 1 ? 0 : 6;  // persistent blocks walk several tiles each
      matmul_scheduler::schedule(*fusion, params);
      const std::vector<DeviceTensor> outputs = launchScheduled(*fusion, inputs);
      BRAZE_CU(ctxSynchronize);
      EXPECT_TRUE(test::isClose(outputs[0].toHost(), evaluateFusionTensors(*fusion, inputs)[0],
                                test::toleranceFor(DataType::BFloat16)))
          << layout.name << " with " << matmul_scheduler::toString(params);
    }
  }
}

// x, the weight or both cast from fp32 inside the kernel: through the executor cache with tails,
// a batch dim and fp16, plain (arbitrary fp32 values: the conversion's rounding) and with bias
// and GELU (exact operands); then forced tile widths, a K split and block counts, launched
// directly.
TEST_F(MatmulExecutionGpuTest, PrologueCastsMatchTheReference) {
  test::RandomTensors random(61);
  const auto operand = [&](bool fp32, bool exact, DataType dtype, std::vector<int64_t> sizes) {
    const DataType type = fp32 ? DataType::Float32 : dtype;
    return exact ? test::exactOperand(random, type, std::move(sizes))
                 : random.uniform(type, std::move(sizes), -1.0, 1.0);
  };
  const auto check = [&](const Fusion& fusion, const std::vector<HostTensor>& inputs,
                         const std::vector<FusionArgument>& outputs, const std::string& what) {
    BRAZE_CU(ctxSynchronize);
    const HostTensor expected = evaluateFusionTensors(fusion, inputs)[0];
    EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(), expected,
                              test::toleranceFor(expected.dtype())))
        << what;
  };
  for (const auto& [convert_x, convert_w] :
       std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
      for (const bool epilogue : {false, true}) {
        for (const int64_t batch_dims : {0, 1}) {
          if (batch_dims == 1 && (dtype == DataType::Float16 || !epilogue)) continue;
          FusionExecutorCache cache(
              test::castPrologueFusion(convert_x, convert_w, dtype, batch_dims, epilogue),
              shipped());
          // Shapes where the kernel converts (each fp32 tile read once), with tails; ones where it
          // would read them more often and the cast runs first; a K the copy engine cannot read
          // (both padded).
          for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{100, 200, 136},
                                                                           {128, 256, 1000},
                                                                           {1, 2, 8},
                                                                           {200, 328, 136},
                                                                           {1024, 1024, 512},
                                                                           {40, 56, 4}}) {
            std::vector<int64_t> x_sizes = {m, k};
            if (batch_dims == 1) x_sizes.insert(x_sizes.begin(), 3);
            std::vector<HostTensor> inputs = {operand(convert_x, epilogue, dtype, x_sizes),
                                              operand(convert_w, epilogue, dtype, {n, k})};
            if (epilogue) inputs.push_back(random.uniform(dtype, {n}, -1.0, 1.0));
            std::vector<FusionArgument> arguments;
            for (const HostTensor& input : inputs)
              arguments.push_back(DeviceTensor::fromHost(input));
            const std::string what =
                std::string("x ") + (convert_x ? "fp32" : "16-bit") + ", w " +
                (convert_w ? "fp32" : "16-bit") + ", " + std::string(toString(dtype)) +
                (epilogue ? ", bias+gelu" : "") + ", " + std::to_string(batch_dims) +
                " batch dims, " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                std::to_string(k);
            check(cache.fusion(), inputs, cache.run(arguments), what);
            const std::string described = cache.lastRuntime()->describe();
            EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
            const int64_t batches = batch_dims == 1 ? 3 : 1;
            const bool converted = !(convert_x && convert_w) &&
                                   (!convert_w || batches * ((m + 127) / 128) <= 1) &&
                                   (!convert_x || (n + 255) / 256 <= 1) && k % 8 == 0;
            EXPECT_EQ(described.find("braze::pointwise") == std::string::npos, converted)
                << what << ": " << described;
          }
        }
      }
    }
  }
  // Forced params: the widths the staging ring leaves room for, a split of K (29 steps, uneven)
  // and persistent blocks that walk several tiles.
  for (const auto& [convert_x, convert_w] :
       std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
    const std::vector<HostTensor> inputs = {
        operand(convert_x, false, DataType::BFloat16, {304, 1800}),
        operand(convert_w, false, DataType::BFloat16, {328, 1800})};
    for (const auto& [tile_n, split_k] : std::vector<std::pair<int64_t, int64_t>>{
             {256, 1}, {192, 1}, {128, 1}, {64, 1}, {128, 2}}) {
      auto fusion = test::castPrologueFusion(convert_x, convert_w, DataType::BFloat16, 0, false);
      matmul_scheduler::GemmLayout layout;
      layout.a_convert = convert_x;
      layout.b_convert = convert_w;
      matmul_scheduler::MatmulParams params;
      params.tile_n = tile_n;
      params.split_k = split_k;
      params.tma_store = 0;
      params.stages = std::min<int64_t>(4, matmul_scheduler::maxGemmStages(tile_n, false, layout));
      if (params.stages < 2) continue;
      params.ctas = split_k > 1 ? 0 : 6;
      matmul_scheduler::schedule(*fusion, params);
      const std::vector<DeviceTensor> outputs = launchScheduled(*fusion, inputs);
      check(*fusion, inputs, {outputs[0]},
            std::string("forced ") + matmul_scheduler::toString(params) + ", x " +
                (convert_x ? "fp32" : "bf16") + ", w " + (convert_w ? "fp32" : "bf16"));
    }
  }
}

TEST_F(MatmulExecutionGpuTest, AGraphReplaysOnMovedInputs) {
  FusionExecutorCache cache(linearFusion(DataType::BFloat16), shipped());
  test::RandomTensors random(53);
  RunOptions graph;
  graph.cuda_graph = true;
  for (int round = 0; round < 3; ++round) {
    // Fresh tensors every round: new addresses for the maps of both operands.
    const HostTensor x = random.uniform(DataType::BFloat16, {384, 200}, -1.0, 1.0);
    const HostTensor w = random.uniform(DataType::BFloat16, {512, 200}, -1.0, 1.0);
    const std::vector<FusionArgument> outputs =
        cache.run({DeviceTensor::fromHost(x), DeviceTensor::fromHost(w)}, graph);
    BRAZE_CU(ctxSynchronize);
    EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(),
                              evaluateFusionTensors(cache.fusion(), {x, w})[0],
                              test::toleranceFor(DataType::BFloat16)))
        << "round " << round;
  }
  EXPECT_EQ(cache.counters().misses, 1);
}

}  // namespace
}  // namespace braze
