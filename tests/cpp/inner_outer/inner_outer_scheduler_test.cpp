// The inner-outer scheduler on the CPU tier: its decisions over the row lengths and dtypes the
// benchmarks time, the params' byte format, its refusals, and every scheduled normalization
// generated and compiled with NVRTC for sm_90.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

#include <utility>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/prepare_for_scheduling.h"
#include "inner_outer/inner_outer_cases.h"

namespace braze {
namespace {

using inner_outer::InnerOuterParams;
using inner_outer::Persistence;
using test::Normalization;
using test::NormalizationCase;
using ::testing::HasSubstr;
using ::testing::Not;

using test::heuristicsFor;
using test::kRowKinds;

// Row lengths whose buffers fit the register file: every kind up to 16384 floats per row
// (softmax keeps x and exp(x - max), layer norm x and x - mean: 8 bytes per element, 128 KiB
// per row, over 1024 threads), and 2-byte rows of 65536 with one row reduction that keep only
// their input (RMS norm), held two elements to a register.
Persistence expectedPersistence(Normalization kind, DataType dtype, int64_t n) {
  const bool packed = dtype == DataType::BFloat16 && n == 65536 && kind == Normalization::RmsNorm;
  return n <= 16384 || packed ? Persistence::Registers : Persistence::MultiWave;
}

std::vector<NormalizationCase> sweep() {
  std::vector<NormalizationCase> cases;
  for (Normalization kind : kRowKinds) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      for (int64_t n : test::kRowLengths) cases.push_back({kind, dtype, 64, n});
    }
  }
  cases.push_back({Normalization::Softmax, DataType::Float16, 3, 1000});
  cases.push_back({Normalization::LayerNorm, DataType::Float16, 5, 4096});
  return cases;
}

class InnerOuterSweepTest : public ::testing::TestWithParam<NormalizationCase> {};

// The fusion states its block as launch bounds where the params ask for blocks per SM or the
// block has more than 512 threads, and none otherwise. Inner-outer rows of more than a warp of
// threads are launched in whole warps.
void expectLaunchBounds(const Fusion& scheduled, const GeneratedKernel& kernel,
                        const InnerOuterParams& params) {
  const int64_t row_threads = params.row_blocks > 0 && params.threads_x > 32
                                  ? (params.threads_x + 31) / 32 * 32
                                  : params.threads_x;
  const int64_t block_threads = row_threads * params.rows_per_block;
  if (params.min_blocks_per_sm > 0 || block_threads > 512) {
    EXPECT_EQ(scheduled.launchBounds(), (LaunchBounds{block_threads, params.min_blocks_per_sm}));
    const std::string bounds =
        params.min_blocks_per_sm > 0
            ? std::to_string(block_threads) + ", " + std::to_string(params.min_blocks_per_sm)
            : std::to_string(block_threads);
    EXPECT_THAT(kernel.source, HasSubstr("__launch_bounds__(" + bounds + ") ")) << params;
  } else {
    EXPECT_FALSE(scheduled.launchBounds().has_value()) << params;
    // Multi-wave blocks are constant, and so are the blocks of kernels compiled for their row
    // length: the kernel states them itself.
    if (params.persistence == Persistence::Registers && params.fixed_row_length == 0) {
      EXPECT_THAT(kernel.source, Not(HasSubstr("__launch_bounds__"))) << params;
    } else if (params.persistence == Persistence::Registers) {
      EXPECT_THAT(kernel.source,
                  HasSubstr("__launch_bounds__(" + std::to_string(block_threads) + ") "))
          << params;
    }
  }
}

TEST_P(InnerOuterSweepTest, DecisionsAreAsExpected) {
  const NormalizationCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.persistence, expectedPersistence(c.kind, c.dtype, c.n)) << params;
  EXPECT_EQ(params.packed_registers, c.n == 65536 && params.persistence == Persistence::Registers)
      << params;
  // 16-byte vectors: every row length of the sweep is a multiple of 8.
  EXPECT_EQ(params.vector_width, c.dtype == DataType::Float32 ? 4 : 8) << params;
  EXPECT_EQ(params.row_length, c.n) << params;
  EXPECT_EQ(params.row_blocks, 0) << params;
  EXPECT_LE(params.threads_x * params.rows_per_block, 1024) << params;
  if (params.persistence == Persistence::Registers) {
    // The batch covers the row: threads_x * batch * vector_width >= n, without a spare thread.
    EXPECT_GE(params.threads_x * params.persistent_batch * params.vector_width, c.n) << params;
    EXPECT_LT((params.threads_x - 1) * params.persistent_batch * params.vector_width, c.n)
        << params;
    EXPECT_LE(params.persistent_batch, 16) << params;
    // Blocks of 256 threads or more ask for 1024 threads per SM where the fusion has one row
    // input (softmax backward has two) of 2-byte elements and a thread keeps at most 64 bytes
    // of it.
    const int64_t block_threads = params.threads_x * params.rows_per_block;
    const int64_t element_bytes = sizeInBytes(c.dtype);
    const bool bounded = block_threads >= 256 && c.kind != Normalization::SoftmaxBackward &&
                         element_bytes == 2 &&
                         params.persistent_batch * params.vector_width * element_bytes <= 64;
    // 2-byte softmax rows of 8192 and 16384 (float exponentials kept beside the input): eight
    // vectors per thread, three blocks per SM.
    const bool eight_vectors =
        c.kind == Normalization::Softmax && element_bytes == 2 && (c.n == 8192 || c.n == 16384);
    if (eight_vectors) {
      EXPECT_EQ(params.persistent_batch, 8) << params;
      EXPECT_EQ(params.min_blocks_per_sm, 3) << params;
    } else {
      EXPECT_EQ(params.min_blocks_per_sm, bounded ? 1024 / block_threads : 0) << params;
    }
  } else {
    EXPECT_EQ(params.persistent_batch, 1) << params;
    EXPECT_EQ(params.rows_per_block, 1) << params;
  }
}

TEST_P(InnerOuterSweepTest, ScheduledFusionCompilesForSm90WithoutSpills) {
  const NormalizationCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  inner_outer::schedule(*fusion, params);
  const GeneratedKernel kernel = generateCuda(*fusion);
  EXPECT_THAT(kernel.source, HasSubstr("braze::vectorCopy<")) << kernel.source;
  expectLaunchBounds(*fusion, kernel, params);
  EXPECT_THAT(kernel.source, HasSubstr("braze::blockReduce<true, false, false>"));
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
  const KernelResources& resources = compiled.resources();
  if (resources.reported) {
    // Register arrays indexed by unrolled loops: nothing goes to the stack, but for the 8 bytes
    // of bf16 softmax rows of 16384 at three blocks per SM (80 registers), which measured fastest.
    const int64_t spill =
        c.kind == Normalization::Softmax && c.dtype == DataType::BFloat16 && c.n == 16384 ? 8 : 0;
    EXPECT_LE(resources.spill_store_bytes, spill) << params;
    EXPECT_LE(resources.stack_frame_bytes, spill) << params;
    // The block fits one SM's register file.
    EXPECT_LE(resources.registers * params.threads_x * params.rows_per_block, 65536) << params;
  }
}

TEST_P(InnerOuterSweepTest, ParamsRoundTripThroughBytes) {
  const NormalizationCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  const std::vector<uint8_t> bytes = inner_outer::encodeParams(params);
  EXPECT_EQ(inner_outer::decodeParams(bytes), params);
  EXPECT_EQ(inner_outer::hashParams(inner_outer::decodeParams(bytes)),
            inner_outer::hashParams(params));
}

INSTANTIATE_TEST_SUITE_P(Sweep, InnerOuterSweepTest, ::testing::ValuesIn(sweep()),
                         [](const auto& info) { return info.param.name(); });

// Normalization backward with column sums (inner-outer): every row length whose rows fit in
// registers next to the column partials.
std::vector<NormalizationCase> backwardSweep() {
  std::vector<NormalizationCase> cases;
  for (Normalization kind : {Normalization::LayerNormBackward, Normalization::RmsNormBackward}) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      for (int64_t n : {256, 1000, 1024, 4096}) cases.push_back({kind, dtype, 100000, n});
    }
  }
  // Long rows: both norms' buffers fit 512 threads at 8192.
  for (Normalization kind : {Normalization::LayerNormBackward, Normalization::RmsNormBackward}) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16})
      cases.push_back({kind, dtype, 100000, 8192});
  }
  // Fewer rows than blocks, and than a block stacks.
  cases.push_back({Normalization::RmsNormBackward, DataType::Float16, 7, 4096});
  cases.push_back({Normalization::LayerNormBackward, DataType::BFloat16, 7, 256});
  cases.push_back({Normalization::LayerNormBackward, DataType::Float32, 1000, 1000});
  return cases;
}

// The rows one block per SM of 512 or 1024 threads works on at once for backwardSweep's cases:
// {stacked per block, per thread}.
std::pair<int64_t, int64_t> oneBlockPerSm(const NormalizationCase& c, int64_t threads_x) {
  const bool two_byte = c.dtype != DataType::Float32;
  const int64_t stacked = std::max<int64_t>(512 / ((threads_x + 31) / 32 * 32), 1);
  std::pair<int64_t, int64_t> block;
  if (two_byte) {
    // Two vectors per thread from rows of 512 vectors up (a warp of threads per row), 512
    // threads per SM with two rows each; rows of 256 keep one vector and take four rows.
    block = {stacked, c.n <= 256 ? 4 : 2};
  } else if (c.n == 8192) {
    block = {1, 1};
  } else if (c.n == 4096) {
    block = {1, c.kind == Normalization::LayerNormBackward ? 2 : 4};
  } else if (c.n >= 1000) {
    // Float rows of 1000 and 1024: two vectors per thread, 512 threads per SM, two rows each
    // (layer norm) or four (RMS norm).
    block = {stacked, c.kind == Normalization::LayerNormBackward ? 2 : 4};
  } else {
    // Float rows of 256: one vector per thread, 1024 threads with two rows each.
    block = {2 * stacked, 2};
  }
  block.first = std::min(block.first, c.rows);
  block.second = std::min(block.second, (c.rows + block.first - 1) / block.first);
  return block;
}

struct ExpectedBlock {
  int64_t threads_x = 0;
  int64_t rows_per_block = 1;
  int64_t rows_per_thread = 1;
  int64_t blocks_per_sm = 1;
};

// What the heuristics make of that block. RMS norm (one row reduction) with rows of 512 threads
// or more, or 512 at half the vectors per thread: 1024 threads per SM at two rows per thread
// (its buffers fit 64 registers). Otherwise stacked rows split into two blocks per SM.
ExpectedBlock expectedInnerOuterBlock(const NormalizationCase& c, int64_t one_block_threads_x) {
  const auto [stacked, per_thread] = oneBlockPerSm(c, one_block_threads_x);
  const int64_t padded = (one_block_threads_x + 31) / 32 * 32;
  if (c.kind == Normalization::RmsNormBackward && c.n >= 4096) {
    const int64_t threads_x = padded >= 512 && c.dtype == DataType::Float32 && c.n == 4096
                                  ? one_block_threads_x
                                  : 2 * one_block_threads_x;
    return {threads_x, 1, 2, 1024 / threads_x};
  }
  if (stacked >= 2 && stacked % 2 == 0) return {one_block_threads_x, stacked / 2, per_thread, 2};
  return {one_block_threads_x, stacked, per_thread, 1};
}

// threads_x of backwardSweep's cases for one block per SM: two vectors per thread (one for rows
// of 256 elements), more for floats of 8192.
int64_t oneBlockThreadsX(const NormalizationCase& c) {
  const int64_t vector_width = c.dtype == DataType::Float32 ? 4 : 8;
  const int64_t vectors = (c.n + vector_width - 1) / vector_width;
  if (c.dtype == DataType::Float32 && c.n == 8192) return vectors / 4;
  if (c.dtype != DataType::Float32 && c.n == 8192) return vectors / 2;
  return c.n <= 256 ? vectors : (vectors + 1) / 2;
}

class InnerOuterBackwardTest : public ::testing::TestWithParam<NormalizationCase> {};

TEST_P(InnerOuterBackwardTest, RowsInRegistersColumnSumsThroughTheGrid) {
  const NormalizationCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.persistence, Persistence::Registers) << params;
  EXPECT_EQ(params.shared_column_partials, 0) << params;
  // 512 or 1024 threads per SM (132 on the H100 the heuristics assume) in one or two blocks:
  // rows stacked along threadIdx.y and unrolled in each thread, as many as the registers hold
  // (the float kernels' rows take twice a bfloat16 row's registers; layer norm keeps one more
  // column partial and weight than RMS norm). Never more rows than there are.
  const ExpectedBlock expected = expectedInnerOuterBlock(c, oneBlockThreadsX(c));
  EXPECT_EQ(params.threads_x, expected.threads_x) << params;
  EXPECT_EQ(params.rows_per_block, expected.rows_per_block) << params;
  EXPECT_EQ(params.rows_per_thread, expected.rows_per_thread) << params;
  EXPECT_EQ(params.min_blocks_per_sm, expected.blocks_per_sm) << params;
  const int64_t block_threads = (params.threads_x + 31) / 32 * 32 * params.rows_per_block;
  EXPECT_LE(block_threads * params.min_blocks_per_sm, 1024) << params;
  const int64_t rows_per_iteration = params.rows_per_block * params.rows_per_thread;
  EXPECT_EQ(params.row_blocks,
            std::min<int64_t>((c.rows + rows_per_iteration - 1) / rows_per_iteration,
                              132 * params.min_blocks_per_sm))
      << params;
  inner_outer::schedule(*fusion, params);
  const GeneratedKernel kernel = generateCuda(*fusion);
  // The column partial's register elements reduce across the grid together, one workspace
  // region each; stacked rows reduce over threadIdx.y first, and share the final loads.
  expectLaunchBounds(*fusion, kernel, params);
  const int64_t elements = params.persistent_batch * params.vector_width;
  const std::string dims =
      params.rows_per_block > 1 ? "false, true, false, " : "false, false, false, ";
  // The row blocks are all resident (one per SM): launched cooperatively, they finish the
  // column sums together after a grid barrier.
  EXPECT_TRUE(kernel.launch.cooperative);
  EXPECT_THAT(kernel.source, HasSubstr("braze::gridReduceGroupResident<true, false, false, " +
                                       dims + std::to_string(elements) + ">"))
      << kernel.source;
  EXPECT_THAT(kernel.source, HasSubstr("braze::gridReduceRegionBytes(8)"));
  // Layer norm's two row sums (of w dy and w dy xhat) meet in one block reduction.
  if (c.kind == Normalization::LayerNormBackward) {
    EXPECT_THAT(kernel.source, HasSubstr("braze::blockReduceGroup<true, false, false, 2>"))
        << kernel.source;
  }
  // The elements' block reductions over the stacked rows go together too.
  if (params.rows_per_block > 1) {
    EXPECT_THAT(kernel.source, HasSubstr("braze::blockReduceGroup<false, true, false, " +
                                         std::to_string(elements) + ">"));
  }
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  const KernelResources& resources = compiled.resources();
  if (resources.reported) {
    // Layer norm's 2-byte rows at two vectors per thread sit at the launch bound's 128
    // registers: they spilled 56-92 bytes with a block reduction per row sum, and at most a few
    // (4 for sm_90) once the two share one (group-block-reductions); measured faster than one
    // vector per thread without spills (H200, benchmarks/RESULTS.md). Rows of 8192 at two rows
    // per thread spill 32-40 bytes and ran 1.21x faster than one row per thread without spills
    // (H200 sweep: 413.7 against 502.2 us). RMS norm rows of 4096 and 8192 at 1024 threads per
    // SM sit at 64 registers: the benchmark's form of them compiles without spills (measured
    // 1.02-1.26x faster than 512 threads per SM), this form spills up to 44 bytes. Nothing else
    // spills.
    const bool layer_norm_2_byte =
        c.kind == Normalization::LayerNormBackward && c.dtype != DataType::Float32;
    const bool rms_whole_sm = c.kind == Normalization::RmsNormBackward && c.n >= 4096;
    // Compiled for their row length (fixed_row_length), layer norm's rows of 1000 and 1024
    // spill 24 bytes and ran 1-5% faster than the same plans reading the block at run time.
    EXPECT_LE(resources.spill_store_bytes,
              layer_norm_2_byte ? (c.n == 8192 ? 48 : 24) : (rms_whole_sm ? 48 : 0))
        << params;
    if (!layer_norm_2_byte && !rms_whole_sm) {
      EXPECT_EQ(resources.stack_frame_bytes, 0) << params;
    }
    EXPECT_LE(resources.registers * block_threads * params.min_blocks_per_sm, 65536) << params;
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, InnerOuterBackwardTest, ::testing::ValuesIn(backwardSweep()),
                         [](const auto& info) { return info.param.name(); });

// The backward blocks follow the device: two blocks of 512 threads per SM on each (an H200 has
// the H100's 132 SMs and register file; a smaller GPU fewer SMs), and a register file half as
// large holds fewer rows per SM.
TEST(InnerOuterDecisionTest, BackwardBlocksFollowTheDevice) {
  const NormalizationCase c{Normalization::RmsNormBackward, DataType::Float32, 100000, 4096};
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  SchedulerRuntimeInfo info = test::runtimeInfoOf(c);
  const InnerOuterParams h100 = inner_outer::computeHeuristics(*fusion, info);
  EXPECT_EQ(h100.row_blocks, 264) << h100;
  EXPECT_EQ(h100.min_blocks_per_sm, 2) << h100;
  EXPECT_EQ(h100.rows_per_thread, 2) << h100;

  driver::DeviceProperties h200 = driver::h100Properties();
  h200.name = "NVIDIA H200";
  h200.global_memory_bytes = int64_t{141} << 30;
  h200.l2_cache_bytes = 50 << 20;
  info.device = h200;
  EXPECT_EQ(inner_outer::computeHeuristics(*fusion, info), h100);

  driver::DeviceProperties small = driver::h100Properties();
  small.name = "a smaller GPU";
  small.sm_count = 46;
  info.device = small;
  InnerOuterParams expected = h100;
  expected.row_blocks = 92;
  EXPECT_EQ(inner_outer::computeHeuristics(*fusion, info), expected);

  small.registers_per_sm = 32768;
  info.device = small;
  const InnerOuterParams fewer = inner_outer::computeHeuristics(*fusion, info);
  EXPECT_EQ(fewer.rows_per_block * fewer.threads_x * fewer.min_blocks_per_sm, 512) << fewer;
  EXPECT_LT(fewer.rows_per_thread * fewer.min_blocks_per_sm,
            h100.rows_per_thread * h100.min_blocks_per_sm)
      << fewer;
}

TEST(InnerOuterDecisionTest, RowsGetFourVectorsPerThread) {
  // 1000 floats: 250 float4 vectors, four per thread: 63 threads (two vectors of padding), one
  // row per block.
  const NormalizationCase c{Normalization::Softmax, DataType::Float32, 1000, 1000};
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.persistent_batch, 4) << params;
  EXPECT_EQ(params.threads_x, 63) << params;
  EXPECT_EQ(params.rows_per_block, 1) << params;
  // 8192 floats: four vectors per thread is 512 threads; 16384 would be 1024, so eight.
  for (const auto& [length, batch, threads] :
       {std::tuple{8192, 4, 512}, std::tuple{16384, 8, 512}}) {
    const NormalizationCase wide{Normalization::RmsNorm, DataType::Float32, 64, length};
    const std::unique_ptr<Fusion> rms = test::makeNormalization(wide.kind, wide.dtype);
    const InnerOuterParams p = heuristicsFor(wide, *rms);
    EXPECT_EQ(p.persistent_batch, batch) << p;
    EXPECT_EQ(p.threads_x, threads) << p;
  }
}

TEST(InnerOuterDecisionTest, ShortRowsStackRowsInABlock) {
  // 256 bf16: 32 vectors of 8, four per thread: 8 threads per row, 8 rows per block of 64.
  const NormalizationCase c{Normalization::RmsNorm, DataType::BFloat16, 1 << 20, 256};
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  const InnerOuterParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.threads_x, 8) << params;
  EXPECT_EQ(params.rows_per_block, 8) << params;
  // One row: no stacking.
  const NormalizationCase one{Normalization::RmsNorm, DataType::BFloat16, 1, 256};
  EXPECT_EQ(heuristicsFor(one, *fusion).rows_per_block, 1);
}

TEST(InnerOuterDecisionTest, MisalignedOrOddRowsNarrowTheVector) {
  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(Normalization::Softmax, DataType::Float32);
  SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, {{8, 1001}});
  EXPECT_EQ(inner_outer::computeHeuristics(*fusion, info).vector_width, 1);
  info = contiguousRuntimeInfo(*fusion, {{8, 1024}});
  info.data_alignments[0] = 8;
  EXPECT_EQ(inner_outer::computeHeuristics(*fusion, info).vector_width, 2);
}

TEST(InnerOuterDecisionTest, HigherRankInputsMergeTheirOuterDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3, DataType::BFloat16);
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* e = exp(sub(xf, max(xf, {2}, true)));
  fusion.addOutput(cast(div(e, sum(e, {2}, true)), DataType::BFloat16));
  ASSERT_EQ(inner_outer::canScheduleCompileTime(fusion), std::nullopt);
  const auto info = contiguousRuntimeInfo(fusion, {{4, 6, 2048}});
  const InnerOuterParams params = inner_outer::computeHeuristics(fusion, info);
  EXPECT_EQ(params.persistence, Persistence::Registers);
  inner_outer::schedule(fusion, params);
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_NO_THROW(CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                          {.arch = driver::GpuArch{9, 0, false}}));
}

TEST(InnerOuterParamsTest, PrintsEveryField) {
  InnerOuterParams params;
  params.persistence = Persistence::MultiWave;
  params.vector_width = 8;
  params.row_length = 262144;
  EXPECT_EQ(inner_outer::toString(params),
            "inner_outer{persistence=multi_wave, reference_output=0, vector_width=8, "
            "persistent_batch=1, threads_x=128, rows_per_block=1, row_blocks=0, "
            "row_length=262144, wave_unroll=1, min_blocks_per_sm=0, rows_per_thread=1, "
            "shared_column_partials=0, read_only_loads=0, packed_registers=0, "
            "fixed_row_length=0}");
}

TEST(InnerOuterParamsTest, DifferentParamsHashDifferently) {
  InnerOuterParams a;
  InnerOuterParams b;
  b.persistent_batch = 2;
  EXPECT_NE(a, b);
  EXPECT_NE(inner_outer::hashParams(a), inner_outer::hashParams(b));
}

TEST(InnerOuterParamsTest, DecodeRefusesForeignOrCorruptBytes) {
  const std::vector<uint8_t> foreign = {'B', 'Z', 'P', 'W', 1};
  EXPECT_THAT([&] { inner_outer::decodeParams(foreign); },
              ::testing::ThrowsMessage<Error>(HasSubstr("belong to another scheduler")));
  std::vector<uint8_t> bytes = inner_outer::encodeParams({});
  bytes[4] = 8;
  EXPECT_THAT([&] { inner_outer::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected format version 7, found 8")));
  bytes = inner_outer::encodeParams({});
  bytes.push_back(0);
  EXPECT_THAT([&] { inner_outer::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("truncated or padded")));
  bytes = inner_outer::encodeParams({});
  bytes[5] = 9;  // persistence
  EXPECT_THAT([&] { inner_outer::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("persistence 9 is not one of")));
  bytes = inner_outer::encodeParams({});
  bytes[5 + 11 * 8] = 2;  // shared_column_partials, the twelfth field
  EXPECT_THAT([&] { inner_outer::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("shared_column_partials is 2")));
  bytes = inner_outer::encodeParams({});
  bytes[5 + 12 * 8] = 3;  // read_only_loads, the thirteenth field
  EXPECT_THAT([&] { inner_outer::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("read_only_loads is 3")));
}

// packed_registers: an RMS norm or layer norm bf16 row of 65536 held by 1024 threads (eight
// 16-byte vectors each) fits 64 registers only when its register array keeps two elements a
// register (braze::packedElement); read element by element, ptxas splits every word in two.
// Layer norm's x - mean is computed again after the variance's reduction from an opaque copy of
// the mean (braze::opaque); seen equal to the first pass's, the first pass's 64 floats were kept
// across the reduction (232 bytes spilled). Its 20 bytes left are indices and pointers (it ran
// slower than the multi-wave plan all the same: the heuristics keep packing to RMS norm).
TEST(InnerOuterDecisionTest, PackedHalfRegistersHoldTwoElementsARegister) {
  for (const Normalization kind : {Normalization::RmsNorm, Normalization::LayerNorm}) {
    int64_t packed_spill = 0;
    for (const int64_t packed : {int64_t{1}, int64_t{0}}) {
      const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, DataType::BFloat16);
      const SchedulerRuntimeInfo info =
          contiguousRuntimeInfo(*fusion, test::normalizationInputSizes(kind, 64, 65536));
      InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
      test::holdRowsPackedOn1024Threads(params);
      params.min_blocks_per_sm = 1;
      params.packed_registers = packed;
      inner_outer::schedule(*fusion, params);
      const GeneratedKernel kernel = generateCuda(*fusion);
      const std::string what = test::toString(kind) + ": " + inner_outer::toString(params);
      EXPECT_EQ(kernel.source.find("braze::packedElement(") != std::string::npos, packed == 1)
          << what;
      EXPECT_EQ(kernel.source.find("braze::opaque(") != std::string::npos,
                kind == Normalization::LayerNorm && packed == 1)
          << what;
      const CompiledKernel compiled = CompiledKernel::compile(
          kernel.source, kernel.kernel_name, {.arch = driver::GpuArch{9, 0, false}});
      const KernelResources& resources = compiled.resources();
      if (!resources.reported) continue;
      EXPECT_LE(resources.registers, 64) << what;
      if (packed == 1) {
        packed_spill = resources.spill_store_bytes;
        EXPECT_LE(packed_spill, kind == Normalization::LayerNorm ? 24 : 0) << what;
      } else {
        EXPECT_GE(resources.spill_store_bytes, packed_spill + 100)
            << what << " (packed: " << packed_spill << " bytes)";
      }
    }
  }
}

// Rows without column sums read every input through the read-only path (ld.global.nc), so that
// loads move ahead of the outputs' stores; kernels with column sums (a norm's backward) and
// multi-wave rows keep plain loads. The params can ask for either.
TEST(InnerOuterDecisionTest, ReadOnlyLoadsWhereTheyMeasuredFaster) {
  struct Case {
    Normalization kind;
    DataType dtype;
    int64_t n;
    int64_t expected;
  };
  for (const Case& c : std::vector<Case>{
           {Normalization::LayerNorm, DataType::BFloat16, 4096, inner_outer::kEveryInputReadOnly},
           {Normalization::Softmax, DataType::Float32, 16384, inner_outer::kEveryInputReadOnly},
           {Normalization::SoftmaxBackward, DataType::BFloat16, 16384,
            inner_outer::kEveryInputReadOnly},
           {Normalization::LayerNormBackward, DataType::BFloat16, 4096, inner_outer::kPlainLoads},
           {Normalization::RmsNorm, DataType::Float32, 262144, inner_outer::kPlainLoads},
       }) {
    for (const int64_t asked :
         {int64_t{-1}, inner_outer::kPlainLoads, inner_outer::kPerColumnInputsReadOnly}) {
      const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
      const SchedulerRuntimeInfo info =
          contiguousRuntimeInfo(*fusion, test::normalizationInputSizes(c.kind, 64, c.n));
      InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
      const std::string what = test::toString(c.kind) + " " + std::to_string(c.n) + " asked " +
                               std::to_string(asked) + ": " + inner_outer::toString(params);
      if (asked < 0) {
        EXPECT_EQ(params.read_only_loads, c.expected) << what;
      } else {
        params.read_only_loads = asked;
      }
      inner_outer::schedule(*fusion, params);
      const std::string source = generateCuda(*fusion).source;
      const bool per_column_inputs = c.kind == Normalization::LayerNorm ||
                                     c.kind == Normalization::RmsNorm ||
                                     c.kind == Normalization::LayerNormBackward;
      const bool read_only =
          params.read_only_loads == inner_outer::kEveryInputReadOnly ||
          (params.read_only_loads == inner_outer::kPerColumnInputsReadOnly && per_column_inputs);
      EXPECT_EQ(source.find("braze::vectorLoadReadOnly<") != std::string::npos, read_only) << what;
      // A plain vector load of an input (its data as the source) where every input is read-only.
      if (params.read_only_loads == inner_outer::kEveryInputReadOnly) {
        std::istringstream lines(source);
        for (std::string line; std::getline(lines, line);) {
          for (const Val* input : fusion->inputs()) {
            EXPECT_FALSE(line.find("braze::vectorCopy<") != std::string::npos &&
                         line.find(", &" + input->name() + ".data[") != std::string::npos)
                << what << "\n"
                << line;
          }
        }
      }
    }
  }
}

std::optional<std::string> refusal(const std::function<void(Fusion&)>& body) {
  Fusion fusion;
  body(fusion);
  return inner_outer::canScheduleCompileTime(fusion);
}

TEST(InnerOuterRefusalTest, PlainReductionsAreLeftToTheReductionScheduler) {
  // A row sum reads each row once: no buffer outlives the reduction.
  EXPECT_THAT(refusal([](Fusion& f) { f.addOutput(sum(makeSymbolicTensor(f, 2), {1})); }).value(),
              HasSubstr("use the reduction scheduler"));
  // A row sum with a pointwise epilogue on its result only.
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(exp(mul(x, 2.0)));
                f.addOutput(sqrt(sum(exp(x), {1})));
              }).value(),
              HasSubstr("use the reduction scheduler"));
  EXPECT_THAT(refusal([](Fusion& f) { f.addOutput(sum(makeSymbolicTensor(f, 2), {0})); }).value(),
              HasSubstr("only sums over rows"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 3);
                f.addOutput(div(x, sum(x, {1}, true)));
              }).value(),
              HasSubstr("reduces dims [1] of 3"));
}

TEST(InnerOuterRefusalTest, EachRefusedShapeHasItsReason) {
  EXPECT_THAT(refusal([](Fusion&) {}).value(), HasSubstr("no outputs"));
  EXPECT_THAT(refusal([](Fusion& f) { f.addOutput(exp(makeSymbolicTensor(f, 2))); }).value(),
              HasSubstr("pointwise scheduler"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                VarMeanResult r = var_mean(x, {1}, 0, true);
                f.addOutput(mul(sub(x, r.mean), rsqrt(r.var)));
              }).value(),
              HasSubstr("Welford"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 1);
                f.addOutput(div(x, sum(x, {0}, true)));
              }).value(),
              HasSubstr("reduces dims [0] of 1"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                TensorView* t = transpose(x, 0, 1);
                f.addOutput(div(t, sum(t, {1}, true)));
              }).value(),
              HasSubstr("regroups or reorders dims"));
  // A column mean that the rows read again (softmax of column-centred values): the rows would
  // need every row's partial first.
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                TensorView* centered = sub(x, mean(x, {0}, true));
                f.addOutput(div(centered, sum(centered, {1}, true)));
              }).value(),
              HasSubstr("is broadcast back over the rows"));
}

// nvFuser's own layer norm and RMS norm backward definitions (prepared as the executor prepares
// them) are one inner-outer kernel each. Their dx reads values computed from the row caches
// (layer norm's second x - mean, [rows, 1] per-row terms) after the row sums; the loop-nest
// builder had placed those early, apart from dx's loops, so lowering failed and both ran as
// two kernels.
TEST(InnerOuterBackwardTest, NvfuserStyleBackwardNormsAreOneKernel) {
  for (const bool layer_norm : {true, false}) {
    for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      for (const int64_t n : {int64_t{1024}, int64_t{4096}}) {
        SCOPED_TRACE(std::string(layer_norm ? "layer norm " : "RMS norm ") +
                     std::string(toString(dtype)) + " " + std::to_string(n));
        const std::unique_ptr<Fusion> fusion =
            prepareCopyForScheduling(layer_norm ? *test::makeNvfuserStyleLayerNormBackward(dtype)
                                                : *test::makeNvfuserStyleRmsNormBackward(dtype));
        const SchedulerRuntimeInfo info =
            layer_norm
                ? contiguousRuntimeInfo(*fusion, {{16384, n}, {16384, n}, {16384}, {16384, 1}, {n}})
                : contiguousRuntimeInfo(*fusion, {{16384, n}, {16384, 1}, {16384, n}, {n}});
        ASSERT_EQ(inner_outer::canScheduleCompileTime(*fusion), std::nullopt);
        ASSERT_EQ(inner_outer::canScheduleRunTime(*fusion, info), std::nullopt);
        const InnerOuterParams params = inner_outer::computeHeuristics(*fusion, info);
        EXPECT_EQ(params.persistence, Persistence::Registers) << params;
        EXPECT_GT(params.row_blocks, 0) << params;
        inner_outer::schedule(*fusion, params);
        const GeneratedKernel kernel = generateCuda(*fusion);
        const CompiledKernel compiled = CompiledKernel::compile(
            kernel.source, kernel.kernel_name, {.arch = driver::GpuArch{9, 0, false}});
        if (compiled.resources().reported) {
          // RMS norm fp32 4096 in this form, at 1024 threads per SM (64 registers), spills 100
          // bytes for sm_90; the benchmark's form of it compiles without spills.
          const bool whole_sm = params.min_blocks_per_sm * params.threads_x == 1024;
          EXPECT_LE(compiled.resources().spill_store_bytes, whole_sm ? 128 : 64) << params;
        }
      }
    }
  }
}

// Rows of 16384 with column sums: the partials move to shared memory (each thread's own slots)
// and the registers hold the rows, one block of 1024 threads per SM. Measured on an H200
// against the two kernels the segmenter makes otherwise: layer norm bf16 and fp32 and RMS norm
// fp32 were faster, RMS norm bf16 slower, so its rows stay two kernels.
// fixed_row_length: kernels with column sums are compiled for their row length (the block a
// constant, the launch checking the length) where that measured faster, and forward kernels
// read the block at run time (benchmarks/RESULTS.md has the measurements).
TEST(InnerOuterBackwardTest, ColumnSumKernelsAreCompiledForTheirRowLengthWhereFaster) {
  struct Expected {
    Normalization kind;
    DataType dtype;
    int64_t n;
    int64_t fixed;
  };
  for (const Expected& e : {Expected{Normalization::RmsNormBackward, DataType::BFloat16, 4096, 1},
                            Expected{Normalization::RmsNormBackward, DataType::Float32, 8192, 1},
                            Expected{Normalization::LayerNormBackward, DataType::BFloat16, 1024, 1},
                            Expected{Normalization::LayerNormBackward, DataType::Float32, 4096, 1},
                            Expected{Normalization::LayerNormBackward, DataType::BFloat16, 4096, 0},
                            Expected{Normalization::LayerNormBackward, DataType::Float32, 1000, 0},
                            Expected{Normalization::LayerNorm, DataType::BFloat16, 4096, 0}}) {
    const NormalizationCase c{e.kind, e.dtype, 1000, e.n};
    SCOPED_TRACE(c.name());
    const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
    const InnerOuterParams params = heuristicsFor(c, *fusion);
    EXPECT_EQ(params.fixed_row_length, e.fixed) << params;
    inner_outer::schedule(*fusion, params);
    const GeneratedKernel kernel = generateCuda(*fusion);
    const int64_t row_threads = params.row_blocks > 0 && params.threads_x > 32
                                    ? (params.threads_x + 31) / 32 * 32
                                    : params.threads_x;
    const std::string block = "braze::BlockScratch<" + std::to_string(row_threads) + ", " +
                              std::to_string(params.rows_per_block) + ", 1> braze_smem";
    if (e.fixed) {
      EXPECT_THAT(kernel.source, HasSubstr(block)) << kernel.source;
      // Every row tensor's extent (they are equal at launch).
      ASSERT_FALSE(fusion->assumedExtents().empty());
      for (const auto& [extent, value] : fusion->assumedExtents()) EXPECT_EQ(value, e.n);
      const bool checked = std::any_of(
          kernel.launch_checks.begin(), kernel.launch_checks.end(), [&](const auto& check) {
            return check.second.find("compiled for") != std::string::npos;
          });
      EXPECT_TRUE(checked) << "no launch check of the row length";
    } else {
      EXPECT_TRUE(fusion->assumedExtents().empty());
      EXPECT_THAT(kernel.source, Not(HasSubstr(block))) << kernel.source;
    }
  }
}

TEST(InnerOuterBackwardTest, RowsOf16384KeepTheColumnPartialsInSharedMemory) {
  for (const auto& [kind, dtype] : {std::pair{Normalization::LayerNormBackward, DataType::BFloat16},
                                    std::pair{Normalization::LayerNormBackward, DataType::Float32},
                                    std::pair{Normalization::RmsNormBackward, DataType::Float32}}) {
    const NormalizationCase c{kind, dtype, 5000, 16384};
    SCOPED_TRACE(c.name());
    const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
    const InnerOuterParams params = heuristicsFor(c, *fusion);
    EXPECT_EQ(params.persistence, Persistence::Registers) << params;
    EXPECT_EQ(params.shared_column_partials, 1) << params;
    EXPECT_EQ(params.threads_x, 1024) << params;
    EXPECT_EQ(params.persistent_batch * params.vector_width, 16) << params;
    EXPECT_EQ(params.row_blocks, 132) << params;
    inner_outer::schedule(*fusion, params);
    const GeneratedKernel kernel = generateCuda(*fusion);
    EXPECT_TRUE(kernel.launch.cooperative);
    // The partials are the dynamic shared memory's first tensor, sized by the launch.
    EXPECT_THAT(kernel.source, HasSubstr("reinterpret_cast<float*>(braze_dynamic_smem + 0)"))
        << kernel.source;
    const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                            {.arch = driver::GpuArch{9, 0, false}});
    if (compiled.resources().reported) {
      // 64 registers (the launch bound of 1024 threads): 88-224 bytes spilled for sm_90 with
      // the block read at run time, 396-468 compiled for the row length (fixed_row_length),
      // which measured 3-27% faster (H200: layer norm bf16 594 against 611 us, fp32 411
      // against 429, RMS norm fp32 238 against 302).
      EXPECT_LE(compiled.resources().registers, 64) << params;
      EXPECT_LE(compiled.resources().spill_store_bytes, 480) << params;
    }
  }
}

TEST(InnerOuterRefusalTest, ColumnSumsWithRowsTooLongForRegisters) {
  // RMS norm bf16 rows of 16384: the partials in shared memory measured slower than two
  // kernels. Layer norm fp32 rows of 32768: 32 elements per thread at 1024 threads, more than
  // the registers hold beside the partials' 256 KiB of shared memory.
  for (const auto& [kind, dtype, n] :
       {std::tuple{Normalization::RmsNormBackward, DataType::BFloat16, int64_t{16384}},
        std::tuple{Normalization::LayerNormBackward, DataType::Float32, int64_t{32768}}}) {
    const NormalizationCase c{kind, dtype, 512, n};
    const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
    EXPECT_EQ(inner_outer::canScheduleCompileTime(*fusion), std::nullopt);
    EXPECT_THAT(inner_outer::canScheduleRunTime(*fusion, test::runtimeInfoOf(c)).value_or(""),
                HasSubstr("do not fit in registers next to the column partials"));
  }
  // Column sums of a 3-D normalization are refused at compile time.
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 3);
                f.addOutput(div(x, sum(x, {2}, true)));
                f.addOutput(sum(x, {0, 1}));
              }).value_or(""),
              HasSubstr("for 2D [rows, row] tensors only"));
}

TEST(InnerOuterRefusalTest, RunTimeReasons) {
  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(Normalization::LayerNorm, DataType::Float32);
  SchedulerRuntimeInfo info;
  EXPECT_THAT(inner_outer::canScheduleRunTime(*fusion, info).value_or("accepted"),
              HasSubstr("expected arguments for 3 inputs, found 0"));
  info = contiguousRuntimeInfo(*fusion, {{4, 8}, {8}, {8, 1}});
  EXPECT_THAT(inner_outer::canScheduleRunTime(*fusion, info).value_or("accepted"),
              HasSubstr("has rank 1 but its argument has 2 sizes"));
  info = contiguousRuntimeInfo(*fusion, {{4, 8}, {9}, {8}});
  EXPECT_THAT(inner_outer::canScheduleRunTime(*fusion, info).value_or("accepted"),
              HasSubstr("has 9 elements along the row, but the rows of"));
  info = contiguousRuntimeInfo(*fusion, {{0, 8}, {8}, {8}});
  EXPECT_THAT(inner_outer::canScheduleRunTime(*fusion, info).value_or("accepted"),
              HasSubstr("is empty"));
  info = contiguousRuntimeInfo(*fusion, {{4, 8}, {8}, {8}});
  EXPECT_EQ(inner_outer::canScheduleRunTime(*fusion, info), std::nullopt);
}

TEST(InnerOuterScheduleTest, RefusesParamsOfAnotherFusion) {
  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(Normalization::LayerNorm, DataType::Float32);
  InnerOuterParams params;
  params.reference_output = 5;
  EXPECT_THAT([&] { inner_outer::schedule(*fusion, params); },
              ::testing::ThrowsMessage<Error>(HasSubstr("reference_output 5 is not an output")));
  params.reference_output = 1;  // mean: a per-row output
  EXPECT_THAT([&] { inner_outer::schedule(*fusion, params); },
              ::testing::ThrowsMessage<Error>(HasSubstr("is not a full [rows, row] output")));
  params.reference_output = 0;
  params.persistent_batch = 0;
  EXPECT_THAT([&] { inner_outer::schedule(*fusion, params); },
              ::testing::ThrowsMessage<Error>(HasSubstr("split factor below 1")));
}

}  // namespace
}  // namespace braze
