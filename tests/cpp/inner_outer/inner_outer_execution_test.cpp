// The GPU tier: every normalization the inner-outer scheduler accepts, scheduled for its own
// arguments, runs through KernelExecutor on fresh random inputs (outputs poisoned first) and
// matches the reference evaluator within the tolerance of its dtype, for two seeds. Skipped
// without a GPU.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "inner_outer/inner_outer_cases.h"
#include "support/gpu_run.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using test::Normalization;
using test::NormalizationCase;

// Rows that leave remainders: not a multiple of the rows a block stacks, and few rows for the
// long ones so the CPU reference stays quick.
int64_t rowsFor(int64_t n) {
  if (n <= 4096) return 67;
  if (n <= 16384) return 9;
  return 3;
}

std::vector<NormalizationCase> cases() {
  std::vector<NormalizationCase> result;
  for (Normalization kind :
       {Normalization::Softmax, Normalization::LogSoftmax, Normalization::LayerNorm,
        Normalization::RmsNorm, Normalization::SoftmaxBackward}) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      for (int64_t n : test::kRowLengths) result.push_back({kind, dtype, rowsFor(n), n});
    }
  }
  // Backward with column sums: more rows than blocks, so blocks loop over several rows and
  // the last ones get fewer.
  for (Normalization kind : {Normalization::LayerNormBackward, Normalization::RmsNormBackward}) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      for (int64_t n : {256, 1000, 4096}) result.push_back({kind, dtype, n <= 1000 ? 600 : 300, n});
    }
  }
  // More rows than 132 blocks of stacked rows hold at once; fewer rows than blocks.
  result.push_back({Normalization::LayerNormBackward, DataType::BFloat16, 2000, 256});
  result.push_back({Normalization::RmsNormBackward, DataType::Float32, 5, 1024});
  // Long rows: two vectors per thread (bfloat16), four (float32).
  result.push_back({Normalization::RmsNormBackward, DataType::BFloat16, 37, 8192});
  result.push_back({Normalization::RmsNormBackward, DataType::Float32, 37, 8192});
  result.push_back({Normalization::LayerNormBackward, DataType::BFloat16, 37, 8192});
  result.push_back({Normalization::LayerNormBackward, DataType::Float32, 37, 8192});
  // Rows of 16384 with the column partials in shared memory: more rows than the 132 resident
  // blocks, and an odd row length (one element per vector, the last thread's tail predicated).
  result.push_back({Normalization::LayerNormBackward, DataType::BFloat16, 301, 16384});
  result.push_back({Normalization::LayerNormBackward, DataType::Float32, 139, 16384});
  result.push_back({Normalization::RmsNormBackward, DataType::Float32, 150, 16384});
  result.push_back({Normalization::LayerNormBackward, DataType::Float32, 140, 16383});
  result.push_back({Normalization::RmsNormBackward, DataType::Float16, 7, 1024});
  result.push_back({Normalization::LayerNorm, DataType::Float16, 33, 1000});
  result.push_back({Normalization::Softmax, DataType::Float16, 5, 32768});
  return result;
}

// Runs `c` scheduled with `params` (the heuristics' for its arguments when `adjust` leaves them)
// on fresh inputs for two seeds and compares every output with the reference evaluator.
void expectMatchesReference(const NormalizationCase& c,
                            void (*adjust)(inner_outer::InnerOuterParams&) = nullptr) {
  for (const uint64_t seed : {uint64_t{101}, uint64_t{202}}) {
    const std::vector<EvaluatorArgument> host = test::makeNormalizationArguments(c, seed);
    std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
    SchedulerRuntimeInfo info = test::runtimeInfoOf(c);
    info.device = driver::deviceProperties();
    inner_outer::InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
    if (adjust != nullptr) adjust(params);
    inner_outer::schedule(*fusion, params);

    const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
    const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
    const std::vector<HostTensor>& outputs = run.outputs;
    const LaunchPlan& plan = run.plan;
    // The oracle evaluates a fresh, unscheduled fusion.
    const std::vector<EvaluatorArgument> expected =
        evaluateFusion(*test::makeNormalization(c.kind, c.dtype), host);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      const HostTensor& reference = std::get<HostTensor>(expected[j]);
      test::Tolerance tolerance = test::toleranceFor(reference.dtype());
      const bool backward = c.kind == Normalization::SoftmaxBackward ||
                            c.kind == Normalization::LayerNormBackward ||
                            c.kind == Normalization::RmsNormBackward;
      if (backward && reference.dtype() == DataType::Float32) {
        // dx = y * (dy - sum(dy * y)) (and the norms' dx) cancels: a row sum of n products of
        // magnitude up to 4 is summed in another order than the reference's, so its float32
        // rounding (about sqrt(n) * 1e-7 * 4) lands in dx unscaled; the column sums add
        // hundreds of rows in another order too.
        tolerance = {1e-4, 1e-4};
      }
      EXPECT_TRUE(test::isClose(outputs[j], reference, tolerance))
          << c.name() << " seed " << seed << ", output " << j << " " << params
          << "\nlaunch: " << plan.launch.toString();
    }
  }
}

class InnerOuterExecutionTest : public ::testing::TestWithParam<NormalizationCase> {};

TEST_P(InnerOuterExecutionTest, MatchesTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  expectMatchesReference(GetParam());
}

// Backward kernels with rows stacked along threadIdx.y in other arrangements than the
// heuristics': rows that leave a remainder in the last group of a block, a stack that is not a
// power of two, fewer rows than blocks (blocks without rows still take part in the grid
// reduction), and blocks of 1024 threads.
TEST(InnerOuterBackwardExecutionTest, StackedRowsMatchTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  using Params = inner_outer::InnerOuterParams;
  // Several row groups per block, 1061 rows: not a multiple of 4.
  expectMatchesReference({Normalization::LayerNormBackward, DataType::BFloat16, 1061, 1024},
                         [](Params& p) {
                           p.rows_per_block = 4;
                           p.row_blocks = 132;
                           p.rows_per_thread = 1;
                         });
  // 1000 rows, a multiple of 8: 125 groups over 20 blocks of 7 (the last ones short or empty).
  expectMatchesReference({Normalization::RmsNormBackward, DataType::Float32, 1000, 256},
                         [](Params& p) {
                           p.rows_per_block = 8;
                           p.row_blocks = 20;
                           p.rows_per_thread = 1;
                         });
  // 3 rows per block, 50 rows over 132 blocks: most blocks have no rows.
  expectMatchesReference({Normalization::LayerNormBackward, DataType::Float32, 50, 1000},
                         [](Params& p) {
                           p.rows_per_block = 3;
                           p.row_blocks = 132;
                           p.rows_per_thread = 1;
                         });
  // 1024 threads: 4 rows of 256.
  expectMatchesReference({Normalization::RmsNormBackward, DataType::Float32, 301, 1024},
                         [](Params& p) {
                           p.rows_per_block = 4;
                           p.row_blocks = 64;
                           p.rows_per_thread = 1;
                         });
}

// Backward kernels with several rows per thread (their loads issued before the first row's
// reductions) in other arrangements than the heuristics': a count that is not a power of two
// with rows left over in the last iteration, unrolled and stacked rows together with fewer
// rows than the blocks hold, one row (every unrolled row but the first predicated off), and
// float16.
TEST(InnerOuterBackwardExecutionTest, RowsPerThreadMatchTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  using Params = inner_outer::InnerOuterParams;
  // 3 rows per thread, 1 per block: 1001 rows over 132 blocks, 3 at a time.
  expectMatchesReference({Normalization::LayerNormBackward, DataType::BFloat16, 1001, 1024},
                         [](Params& p) {
                           p.rows_per_block = 1;
                           p.rows_per_thread = 3;
                           p.row_blocks = 132;
                         });
  // 4 rows per thread and 2 per block: 45 rows over 10 blocks of 8.
  expectMatchesReference({Normalization::RmsNormBackward, DataType::Float32, 45, 4096},
                         [](Params& p) {
                           p.rows_per_block = 2;
                           p.rows_per_thread = 4;
                           p.row_blocks = 10;
                         });
  // One row: three of the four unrolled rows are past the end.
  expectMatchesReference({Normalization::LayerNormBackward, DataType::Float32, 1, 1000},
                         [](Params& p) {
                           p.rows_per_thread = 4;
                           p.row_blocks = 1;
                         });
  // float16, two rows per thread, rows of 256 stacked 8 per block.
  expectMatchesReference({Normalization::RmsNormBackward, DataType::Float16, 333, 256},
                         [](Params& p) {
                           p.rows_per_block = 8;
                           p.rows_per_thread = 2;
                           p.row_blocks = 16;
                         });
}

// Rows held two 2-byte elements to a register (packed_registers): RMS norm's own plan for rows
// of 65536 (fp16 too, and an odd number of rows), and layer norm forced into it, whose mean the
// recomputed x - mean reads through braze::opaque.
TEST(InnerOuterPackedExecutionTest, PackedRowsMatchTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  expectMatchesReference({Normalization::RmsNorm, DataType::Float16, 5, 65536});
  expectMatchesReference({Normalization::LayerNorm, DataType::BFloat16, 3, 65536},
                         test::holdRowsPackedOn1024Threads);
}

INSTANTIATE_TEST_SUITE_P(Cases, InnerOuterExecutionTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name(); });

}  // namespace
}  // namespace braze
