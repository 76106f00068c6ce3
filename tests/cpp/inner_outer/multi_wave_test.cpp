// The inner-outer scheduler's multi-wave shape (rows too long for registers): values read again
// after a reduction are recomputed from the inputs in each wave loop instead of written to
// global memory, and a wave iteration loads wave_unroll vectors per thread before using them.
// CPU tier: decisions and the generated kernel's structure, compiled with NVRTC for sm_90. GPU
// tier: arrangements other than the heuristics' (partial waves, odd rows, other unrolls and
// block sizes) against the reference evaluator; skipped without a GPU.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_properties.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "inner_outer/inner_outer_cases.h"
#include "support/gpu_run.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using inner_outer::InnerOuterParams;
using inner_outer::Persistence;
using test::Normalization;
using test::NormalizationCase;
using ::testing::HasSubstr;

using test::heuristicsFor;
using test::kRowKinds;

size_t countMatches(const std::string& text, const std::regex& pattern) {
  return static_cast<size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), {}));
}

// Loops over the row: the kernel body's top-level loops (everything else is inside them).
size_t rowLoops(const std::string& source) {
  return countMatches(source, std::regex("\n  for \\(IndexT "));
}

// Loops over the row per kind: one per row reduction, one for the results.
size_t expectedRowLoops(Normalization kind) {
  return kind == Normalization::RmsNorm || kind == Normalization::SoftmaxBackward ? 2 : 3;
}

// Rows too long for registers, including lengths that leave a partial wave (70000 floats:
// 17500 vectors) and odd ones (no vectors). RMS norm's 2-byte rows of 65536 are held packed in
// registers instead (InnerOuterDecisionTest), so its bf16 rows start at 131072.
std::vector<NormalizationCase> multiWaveSweep() {
  std::vector<NormalizationCase> cases;
  for (Normalization kind : kRowKinds) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      const bool packed = dtype == DataType::BFloat16 && kind == Normalization::RmsNorm;
      for (int64_t n : {packed ? 131072 : 65536, 262144}) cases.push_back({kind, dtype, 2048, n});
    }
  }
  cases.push_back({Normalization::Softmax, DataType::Float32, 5, 70000});
  cases.push_back({Normalization::LayerNorm, DataType::BFloat16, 5, 100003});
  return cases;
}

class InnerOuterMultiWaveTest : public ::testing::TestWithParam<NormalizationCase> {};

// The kernel takes only the fusion's inputs and outputs (no global intermediate), reads each
// [rows, row] input once per loop over the row, vectorized where the row allows, and keeps a
// wave iteration's vectors in one register array, loaded before their first use.
TEST_P(InnerOuterMultiWaveTest, RecomputesFromTheInputsInsteadOfSpilling) {
  const NormalizationCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  ASSERT_EQ(params.persistence, Persistence::MultiWave) << params;
  EXPECT_EQ(params.persistent_batch, 1) << params;
  EXPECT_EQ(params.rows_per_block, 1) << params;
  EXPECT_GE(params.wave_unroll, 1) << params;
  // A wave iteration stays within the row.
  EXPECT_LE(params.wave_unroll * params.threads_x * params.vector_width, c.n) << params;
  inner_outer::schedule(*fusion, params);
  const GeneratedKernel kernel = generateCuda(*fusion);
  for (const KernelParameter& p : kernel.parameters) {
    EXPECT_TRUE(p.kind == KernelParameter::Kind::InputTensor ||
                p.kind == KernelParameter::Kind::OutputTensor)
        << "a global intermediate or workspace: " << (p.val ? p.val->name() : "") << "\n"
        << kernel.source;
  }
  const size_t loops = expectedRowLoops(c.kind);
  EXPECT_EQ(rowLoops(kernel.source), loops) << kernel.source;
  // Each loop after a reduction runs the other way from the one before (alternateWaveDirections).
  const std::regex loop_start(R"(\n  for \(IndexT i\d+ = ([^;]*);)");
  size_t k = 0;
  for (auto it = std::sregex_iterator(kernel.source.begin(), kernel.source.end(), loop_start);
       it != std::sregex_iterator(); ++it, ++k) {
    const bool reversed = (*it)[1].str() != "0";
    EXPECT_EQ(reversed, k % 2 == 1) << "loop " << k << " starts at " << (*it)[1].str() << "\n"
                                    << kernel.source;
  }
  if (params.vector_width > 1) {
    // Loads from a [rows, row] input (indexed by the block's row) into a register array.
    const size_t row_inputs = c.kind == Normalization::SoftmaxBackward ? 2 : 1;
    const std::regex row_load(R"(vectorCopy<[^>]*>\(&T\d+\[[^\]]*\], &T\d+\.data\[bidx)");
    EXPECT_EQ(countMatches(kernel.source, row_load), loops * row_inputs) << kernel.source;
    const std::string array = "[" + std::to_string(params.wave_unroll * params.vector_width) + "];";
    EXPECT_THAT(kernel.source, HasSubstr(array)) << kernel.source;
  }
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  const KernelResources& resources = compiled.resources();
  if (resources.reported) {
    EXPECT_EQ(resources.spill_store_bytes, 0) << params;
    EXPECT_EQ(resources.stack_frame_bytes, 0) << params;
    EXPECT_LE(resources.registers * params.threads_x, 65536) << params;
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, InnerOuterMultiWaveTest, ::testing::ValuesIn(multiWaveSweep()),
                         [](const auto& info) { return info.param.name(); });

TEST(InnerOuterMultiWaveDecisionTest, ParamsOtherThanTheHeuristicsAlsoSchedule) {
  // No unroll, an unroll that leaves a partial wave, and 1024 threads: each still recomputes.
  const NormalizationCase c{Normalization::LayerNorm, DataType::BFloat16, 8, 65536};
  for (const auto& [unroll, threads] : {std::pair{1, 512}, std::pair{3, 512}, std::pair{2, 1024}}) {
    const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
    InnerOuterParams params = heuristicsFor(c, *fusion);
    params.wave_unroll = unroll;
    params.threads_x = threads;
    inner_outer::schedule(*fusion, params);
    const GeneratedKernel kernel = generateCuda(*fusion);
    EXPECT_EQ(rowLoops(kernel.source), 3u) << kernel.source;
    EXPECT_THAT(kernel.source, HasSubstr("__launch_bounds__(" + std::to_string(threads) + ")"));
    EXPECT_NO_THROW(CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                            {.arch = driver::GpuArch{9, 0, false}}));
  }
}

// Fusions other than the normalization table's: rows merged from three dims, a row-sized
// output that the fusion also reads after the reduction, and a scalar input in the recomputed
// chain.
struct CustomCase {
  std::string name;
  std::unique_ptr<Fusion> (*define)();
  std::vector<std::vector<int64_t>> sizes;
  std::vector<ScalarValue> scalars;
};

std::vector<CustomCase> customCases() {
  std::vector<CustomCase> cases;
  cases.push_back({"softmax_of_3d_rows",
                   [] {
                     auto fusion = std::make_unique<Fusion>();
                     TensorView* x = makeSymbolicTensor(*fusion, 3, DataType::BFloat16);
                     TensorView* xf = cast(x, DataType::Float32);
                     TensorView* e = exp(sub(xf, max(xf, {2}, /*keepdim=*/true)));
                     fusion->addOutput(
                         cast(div(e, sum(e, {2}, /*keepdim=*/true)), DataType::BFloat16));
                     return fusion;
                   },
                   {{2, 3, 65536}},
                   {}});
  cases.push_back({"output_read_again",
                   [] {
                     // y = exp(x) is an output and the reference; y / sum(y) reads it again.
                     auto fusion = std::make_unique<Fusion>();
                     TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::Float32);
                     TensorView* y = exp(x);
                     fusion->addOutput(y);
                     fusion->addOutput(div(y, sum(y, {1}, /*keepdim=*/true)));
                     return fusion;
                   },
                   {{3, 65536}},
                   {}});
  cases.push_back(
      {"weighted_row_recomputed",
       [] {
         // A weight inside the recomputed chain: y = x * w is read by the row
         // sum and again after it, so each wave loop loads w too.
         auto fusion = std::make_unique<Fusion>();
         TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
         TensorView* w = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
         TensorView* y =
             mul(cast(x, DataType::Float32), broadcast(cast(w, DataType::Float32), {true, false}));
         fusion->addOutput(cast(div(y, sum(y, {1}, /*keepdim=*/true)), DataType::BFloat16));
         return fusion;
       },
       {{3, 262144}, {262144}},
       {}});
  cases.push_back({"scaled_softmax",
                   [] {
                     auto fusion = std::make_unique<Fusion>();
                     TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
                     Scalar* scale = makeInputScalar(*fusion, DataType::Float32);
                     TensorView* xs = mul(cast(x, DataType::Float32), scale);
                     TensorView* e = exp(sub(xs, max(xs, {1}, /*keepdim=*/true)));
                     fusion->addOutput(
                         cast(div(e, sum(e, {1}, /*keepdim=*/true)), DataType::BFloat16));
                     return fusion;
                   },
                   {{3, 65536}},
                   {0.75}});
  return cases;
}

TEST(InnerOuterMultiWaveCustomTest, RecomputesWithoutGlobalIntermediates) {
  for (const CustomCase& c : customCases()) {
    const std::unique_ptr<Fusion> fusion = c.define();
    ASSERT_EQ(inner_outer::canScheduleCompileTime(*fusion), std::nullopt) << c.name;
    const SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, c.sizes, c.scalars);
    ASSERT_EQ(inner_outer::canScheduleRunTime(*fusion, info), std::nullopt) << c.name;
    const InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
    ASSERT_EQ(params.persistence, Persistence::MultiWave) << c.name << " " << params;
    inner_outer::schedule(*fusion, params);
    const GeneratedKernel kernel = generateCuda(*fusion);
    for (const KernelParameter& p : kernel.parameters) {
      EXPECT_NE(p.kind, KernelParameter::Kind::GlobalBuffer) << c.name << "\n" << kernel.source;
    }
    const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                            {.arch = driver::GpuArch{9, 0, false}});
    const KernelResources& resources = compiled.resources();
    if (resources.reported) {
      EXPECT_EQ(resources.spill_store_bytes, 0) << c.name << " " << params;
      EXPECT_LE(resources.registers * params.threads_x, 65536) << c.name << " " << params;
    }
  }
}

// ---- GPU tier

// Runs `c` scheduled with the heuristics' params, changed by `adjust`, on fresh inputs and
// compares every output with the reference evaluator.
void expectMatchesReference(const NormalizationCase& c, int64_t wave_unroll = 0,
                            int64_t threads_x = 0) {
  const std::vector<EvaluatorArgument> host = test::makeNormalizationArguments(c, 303);
  std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  SchedulerRuntimeInfo info = test::runtimeInfoOf(c);
  info.device = driver::deviceProperties();
  InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
  ASSERT_EQ(params.persistence, Persistence::MultiWave) << params;
  if (wave_unroll > 0) params.wave_unroll = wave_unroll;
  if (threads_x > 0) params.threads_x = threads_x;
  inner_outer::schedule(*fusion, params);
  const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
  const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
  const std::vector<EvaluatorArgument> expected =
      evaluateFusion(*test::makeNormalization(c.kind, c.dtype), host);
  ASSERT_EQ(run.outputs.size(), expected.size());
  for (size_t j = 0; j < run.outputs.size(); ++j) {
    const HostTensor& reference = std::get<HostTensor>(expected[j]);
    test::Tolerance tolerance = test::toleranceFor(reference.dtype());
    // softmax backward's row sum cancels (see the inner-outer execution test).
    if (c.kind == Normalization::SoftmaxBackward && reference.dtype() == DataType::Float32)
      tolerance = {1e-4, 1e-4};
    EXPECT_TRUE(test::isClose(run.outputs[j], reference, tolerance))
        << c.name() << ", output " << j << " " << params
        << "\nlaunch: " << run.plan.launch.toString();
  }
}

TEST(InnerOuterMultiWaveExecutionTest, PartialWavesOddRowsAndOtherUnrollsOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  // 17500 vectors: the last wave iteration is partial.
  expectMatchesReference({Normalization::Softmax, DataType::Float32, 5, 70000});
  // Odd rows: one element per access.
  expectMatchesReference({Normalization::LayerNorm, DataType::BFloat16, 5, 100003});
  expectMatchesReference({Normalization::LogSoftmax, DataType::BFloat16, 3, 65537});
  // Other unrolls and block sizes than the heuristics'.
  expectMatchesReference({Normalization::SoftmaxBackward, DataType::BFloat16, 3, 65536}, 1);
  expectMatchesReference({Normalization::LayerNorm, DataType::Float32, 3, 65536}, 3);
  expectMatchesReference({Normalization::RmsNorm, DataType::BFloat16, 3, 262144}, 8, 1024);
}

TEST(InnerOuterMultiWaveCustomExecutionTest, MatchesTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  for (const CustomCase& c : customCases()) {
    std::unique_ptr<Fusion> fusion = c.define();
    test::RandomTensors random(404);
    std::vector<EvaluatorArgument> host;
    size_t tensors = 0;
    size_t scalars = 0;
    for (Val* input : fusion->inputs()) {
      if (auto* tv = input->dynCast<TensorView>()) {
        host.emplace_back(random.uniform(tv->dtype(), c.sizes[tensors++]));
      } else {
        host.emplace_back(c.scalars[scalars++]);
      }
    }
    SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, c.sizes, c.scalars);
    info.device = driver::deviceProperties();
    const InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
    inner_outer::schedule(*fusion, params);
    const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
    const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
    const std::vector<EvaluatorArgument> expected = evaluateFusion(*c.define(), host);
    ASSERT_EQ(run.outputs.size(), expected.size());
    for (size_t j = 0; j < run.outputs.size(); ++j) {
      const HostTensor& reference = std::get<HostTensor>(expected[j]);
      EXPECT_TRUE(test::isClose(run.outputs[j], reference, test::toleranceFor(reference.dtype())))
          << c.name << ", output " << j << " " << params;
    }
  }
}

}  // namespace
}  // namespace braze
