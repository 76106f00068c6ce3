// The matmul scheduler without a GPU: what it accepts and why it refuses the rest, the kernel
// its template becomes (parameters, launch, the sm_90a code it compiles to), and a linear run
// through the executor cache on the CPU tier with that kernel compiled.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/eval/argument_binding.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "epilogue_cases.h"
#include "layout_cases.h"
#include "matmul_scheduler.h"
#include "support/random_tensor.h"
#include "support/sass_listing.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using test::castPrologueFusion;
using test::linearFusion;

// Runs `fusion` through the executor cache with the shipped schedulers (CPU tier: its kernels
// compiled, its arguments checked against them), checks its first output (bf16) against the
// reference and returns how it ran.
std::string runAndCheck(std::unique_ptr<Fusion> fusion, const std::vector<HostTensor>& inputs) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  FusionExecutorCache cache(std::move(fusion), options);
  const std::vector<FusionArgument> outputs =
      cache.run(std::vector<FusionArgument>(inputs.begin(), inputs.end()));
  test::expectClose(std::get<HostTensor>(outputs[0]),
                    evaluateFusionTensors(cache.fusion(), inputs)[0],
                    test::toleranceFor(DataType::BFloat16));
  return cache.lastRuntime()->describe();
}

// The consumers' K loop in a GEMM's SASS: from the wait on a full stage before the first HGMMA
// to the first `release` (the arrive that hands a stage back) after the wait that leaves one
// wgmma group in flight; empty when the listing has no such loop.
std::string kLoopOf(const std::string& sass, const std::string& release = "SYNCS.ARRIVE") {
  const size_t first_mma = sass.find("HGMMA");
  if (first_mma == std::string::npos) return "";
  const size_t start = sass.rfind("SYNCS.PHASECHK", first_mma);
  const size_t end = sass.find(release, sass.find("DEPBAR.LE gsb0, 0x1", first_mma));
  if (start == std::string::npos || end == std::string::npos) return "";
  return sass.substr(start, end - start);
}

// A scheduled fusion's kernel compiled for sm_90a, with its SASS (empty when no nvdisasm is
// installed).
struct Sm90aKernel {
  GeneratedKernel kernel;
  CompiledKernel compiled;
  std::string sass;
};

Sm90aKernel compileForSm90a(const Fusion& scheduled) {
  GeneratedKernel kernel = generateCuda(scheduled);
  CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                    {.arch = driver::GpuArch{9, 0, true}});
  std::string sass;
  if (const std::optional<std::string> nvdisasm = test::findNvdisasm())
    sass = test::disassemble(*nvdisasm, compiled.cubin());
  return {std::move(kernel), std::move(compiled), std::move(sass)};
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

TEST(MatmulSchedulerTest, ParamsRoundTripAndOlderFormatsAreRefused) {
  const auto fusion = linearFusion(DataType::BFloat16);
  const matmul_scheduler::MatmulParams params =
      matmul_scheduler::computeHeuristics(*fusion, infoFor(1024, 1024, 8192));
  EXPECT_EQ(matmul_scheduler::decodeParams(matmul_scheduler::encodeParams(params)), params);
  for (const uint8_t version : {1, 2, 3, 4}) {  // before ctas, split_k, cluster_m, tma_store
    std::vector<uint8_t> older = matmul_scheduler::encodeParams(params);
    older[4] = version;
    try {
      matmul_scheduler::decodeParams(older);
      ADD_FAILURE() << "format version " << int(version) << " decoded";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("format version"), std::string::npos)
          << error.what();
    }
  }
}

// The heuristics' choice for a table of shapes on an H100 (132 SMs): the widest tile on
// anything that fills the GPU, narrower tiles and K split over a cluster when few tiles leave
// SMs idle and K is long, as many stages as shared memory holds beside the output chunks of
// the bulk-copy store (without a split, N a multiple of 8), no pairs sharing B (they measured
// no faster).
TEST(MatmulSchedulerTest, HeuristicsForATableOfShapes) {
  struct Expected {
    int64_t batches, m, n, k;
    int64_t tile_n, split_k, stages, ctas, tma_store;
  };
  const int64_t sms = driver::h100Properties().sm_count;
  ASSERT_EQ(sms, 132);
  const std::vector<Expected> table = {
      {1, 8192, 8192, 8192, 256, 1, 4, sms, 1},   // many waves: the widest tile
      {1, 4096, 11008, 4096, 256, 1, 4, sms, 1},  // 10.4 waves of 256-wide tiles
      {1, 4096, 4094, 4096, 256, 1, 4, sms, 0},   // rows of 8188 bytes: no bulk-copy store
      {1, 1024, 4096, 4096, 256, 1, 4, sms, 1},   // 128 tiles: one wave as it is
      {1, 1024, 8192, 28672, 256, 1, 4, sms, 1},  // 256 tiles, two full waves
      {32, 512, 512, 512, 256, 1, 4, sms, 1},     // a batch of small products fills the GPU
      {1, 1024, 1024, 8192, 128, 2, 7, 0, 0},     // 64 tiles, 128 K steps: split 2 ways
      {1, 1024, 2304, 4096, 192, 1, 4, sms, 1},   // 96 tiles 192 wide beat 72 of 256
      {1, 1024, 1536, 4096, 192, 2, 5, 0, 0},     // 64 tiles 192 wide, split 2 ways
      {1, 512, 512, 16384, 128, 4, 7, 0, 0},      // 16 tiles, 256 K steps: split 4 ways
      {1, 256, 512, 4096, 64, 4, 8, 0, 0},        // 16 narrow tiles split 4 ways
      {1, 256, 256, 8192, 64, 8, 8, 0, 0},        // 8 tiles, 128 K steps: split 8 ways
      {1, 256, 64, 256, 64, 1, 8, sms, 1},        // 4 K steps: too short to split
  };
  for (const Expected& row : table) {
    SCOPED_TRACE(std::to_string(row.batches) + " x " + std::to_string(row.m) + " x " +
                 std::to_string(row.n) + " x " + std::to_string(row.k));
    const test::LayoutCase layout = {
        .name = "batched", .b_mn_major = true, .a_batch = 2, .b_batch = 2};
    const auto fusion =
        row.batches > 1 ? layout.build(DataType::BFloat16) : linearFusion(DataType::BFloat16);
    SchedulerRuntimeInfo info = infoFor(row.m, row.n, row.k);
    if (row.batches > 1) {
      info.arguments = {
          TensorArgumentInfo{DataType::BFloat16, {row.batches, row.m, row.k}, {}, true, ""},
          TensorArgumentInfo{DataType::BFloat16, {row.batches, row.k, row.n}, {}, true, ""}};
    }
    const matmul_scheduler::MatmulParams params =
        matmul_scheduler::computeHeuristics(*fusion, info);
    EXPECT_EQ(params.tile_m, 128);
    EXPECT_EQ(params.tile_n, row.tile_n);
    EXPECT_EQ(params.split_k, row.split_k);
    EXPECT_EQ(params.stages, row.stages);
    EXPECT_EQ(params.ctas, row.ctas);
    EXPECT_EQ(params.cluster_m, 1);
    EXPECT_EQ(params.tma_store, row.tma_store);
  }
}

// A K split becomes a cluster launch of one tile per cluster whose CTAs meet at cluster
// barriers and read each other's partial sums, without spills.
TEST(MatmulSchedulerTest, ASplitKernelLaunchesClusters) {
  auto fusion = test::epilogueCases()[0].build(DataType::BFloat16);  // bias + GELU
  const matmul_scheduler::MatmulParams params =
      matmul_scheduler::computeHeuristics(*fusion, infoFor(512, 512, 16384));
  ASSERT_EQ(params.split_k, 4);
  matmul_scheduler::schedule(*fusion, params);
  const Sm90aKernel built = compileForSm90a(*fusion);
  const GeneratedKernel& kernel = built.kernel;
  EXPECT_EQ(kernel.launch.cluster, (std::array<int64_t, 3>{4, 1, 1}));
  const CompiledKernel& compiled = built.compiled;
  EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << compiled.compileLog();
  if (!built.sass.empty()) {
    const std::string& sass = built.sass;
    EXPECT_GE(test::countInstructions(sass, "UCGABAR_ARV"), 2) << sass;
    EXPECT_EQ(test::countInstructions(sass, "HGMMA.64x128x16.F32.BF16"), 4) << sass;
  }
  auto wrong = test::epilogueCases()[0].build(DataType::BFloat16);
  matmul_scheduler::MatmulParams persistent_split = params;
  persistent_split.ctas = 132;
  EXPECT_THROW(matmul_scheduler::schedule(*wrong, persistent_split), Error);
}

TEST(MatmulSchedulerTest, RefusalsSayWhy) {
  auto has = [](const std::optional<std::string>& why, const std::string& text) {
    return why.has_value() && why->find(text) != std::string::npos;
  };
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*linearFusion(DataType::Float32)),
                  "bf16 or fp16"));
  // Epilogues that move elements, prologues, outputs that do not depend on the linear.
  auto reduced = linearFusion(DataType::BFloat16);
  reduced->replaceOutput(reduced->outputs()[0], sum(reduced->outputs()[0]->as<TensorView>(), {1}));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*reduced), "not pointwise"));
  auto permuted = linearFusion(DataType::BFloat16);
  permuted->replaceOutput(permuted->outputs()[0],
                          permute(permuted->outputs()[0]->as<TensorView>(), {1, 0}));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*permuted), "not pointwise"));
  // Prologues other than a cast of an fp32 input that only the contraction reads, stored
  // K-major.
  auto prologue = std::make_unique<Fusion>();
  prologue->addOutput(linear(relu(makeSymbolicTensor(*prologue, 2, DataType::BFloat16)),
                             makeSymbolicTensor(*prologue, 2, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*prologue), "no other prologue"));
  auto from_fp16 = std::make_unique<Fusion>();
  from_fp16->addOutput(
      linear(cast(makeSymbolicTensor(*from_fp16, 2, DataType::Float16), DataType::BFloat16),
             makeSymbolicTensor(*from_fp16, 2, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*from_fp16), "fp32 operands only"));
  auto read_twice = std::make_unique<Fusion>();
  TensorView* cast_x =
      cast(makeSymbolicTensor(*read_twice, 2, DataType::Float32), DataType::BFloat16);
  read_twice->addOutput(linear(cast_x, makeSymbolicTensor(*read_twice, 2, DataType::BFloat16)));
  read_twice->addOutput(cast_x);
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*read_twice), "other ops read"));
  auto column_cast = std::make_unique<Fusion>();
  TensorView* column32 = makeInputTensor(
      *column_cast, {.dtype = DataType::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  column_cast->addOutput(linear(cast(column32, DataType::BFloat16),
                                makeSymbolicTensor(*column_cast, 2, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*column_cast), "K-major operands only"));
  // Transposes: of a fusion input's last two dims, read by the contraction only.
  auto transposed_intermediate = std::make_unique<Fusion>();
  transposed_intermediate->addOutput(matmul(
      transpose(relu(makeSymbolicTensor(*transposed_intermediate, 2, DataType::BFloat16)), 0, 1),
      makeSymbolicTensor(*transposed_intermediate, 2, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*transposed_intermediate),
                  "reads a transposed fusion input only"));
  auto batch_moved = std::make_unique<Fusion>();
  batch_moved->addOutput(
      matmul(permute(makeSymbolicTensor(*batch_moved, 3, DataType::BFloat16), {1, 0, 2}),
             makeSymbolicTensor(*batch_moved, 3, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*batch_moved), "moving a batch dim"));
  auto transposed_twice = std::make_unique<Fusion>();
  TensorView* weight_t =
      transpose(makeSymbolicTensor(*transposed_twice, 2, DataType::BFloat16), 0, 1);
  transposed_twice->addOutput(
      matmul(makeSymbolicTensor(*transposed_twice, 2, DataType::BFloat16), weight_t));
  transposed_twice->addOutput(weight_t);
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*transposed_twice), "other ops read"));
  auto unrelated = linearFusion(DataType::BFloat16);
  unrelated->addOutput(relu(unrelated->inputs()[0]->as<TensorView>()));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*unrelated), "does not depend"));
  auto two = linearFusion(DataType::BFloat16);
  two->addOutput(linear(two->inputs()[0]->as<TensorView>(), two->inputs()[1]->as<TensorView>()));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*two), "or several"));
  // Shapes the kernel does not take: four batch dims, a matrix-vector product, a batch
  // innermost.
  auto six_d = std::make_unique<Fusion>();
  six_d->addOutput(matmul(makeSymbolicTensor(*six_d, 6, DataType::BFloat16),
                          makeSymbolicTensor(*six_d, 6, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*six_d), "at most 3 batch dims"));
  auto vector = std::make_unique<Fusion>();
  vector->addOutput(matmul(makeSymbolicTensor(*vector, 2, DataType::BFloat16),
                           makeSymbolicTensor(*vector, 1, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*vector), "matrix-vector"));
  auto batch_inner = std::make_unique<Fusion>();
  TensorView* a = makeInputTensor(
      *batch_inner,
      {.dtype = DataType::BFloat16, .sizes = {-1, -1, -1}, .allocation_order = {1, 2, 0}});
  batch_inner->addOutput(matmul(a, makeSymbolicTensor(*batch_inner, 3, DataType::BFloat16)));
  EXPECT_TRUE(has(matmul_scheduler::canScheduleCompileTime(*batch_inner), "batch dim innermost"));
  // A column-major x of 36 rows: its K stride is 36 elements, not a multiple of 16 bytes.
  const test::LayoutCase column_x = test::layoutCases()[0];
  ASSERT_TRUE(column_x.a_mn_major);
  test::RandomTensors random(5);
  const std::vector<HostTensor> narrow = column_x.inputs(random, DataType::BFloat16, 1, 36, 64, 64);
  SchedulerRuntimeInfo strided = infoFor(36, 64, 64);
  strided.arguments = {argumentInfoOf(narrow[0]), argumentInfoOf(narrow[1])};
  EXPECT_TRUE(
      has(matmul_scheduler::canScheduleRunTime(*column_x.build(DataType::BFloat16), strided),
          "stride 36 along dim 1"));

  const auto fusion = linearFusion(DataType::BFloat16);
  EXPECT_TRUE(
      has(matmul_scheduler::canScheduleRunTime(*fusion, infoFor(64, 64, 36)), "multiple of 8"));
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
        *fusion, matmul_scheduler::computeHeuristics(*fusion, infoFor(8192, 8192, 8192, dtype)));
    ASSERT_NE(fusion->kernelTemplate(), nullptr);
    const Sm90aKernel built = compileForSm90a(*fusion);
    const GeneratedKernel& kernel = built.kernel;
    using Kind = KernelParameter::Kind;
    // A's and B's maps, the output's (the bulk-copy store), A and B, the output.
    ASSERT_EQ(kernel.parameters.size(), 6u);
    EXPECT_EQ(kernel.parameters[0].kind, Kind::InputTensorMap);
    EXPECT_EQ(kernel.parameters[1].kind, Kind::InputTensorMap);
    EXPECT_EQ(kernel.parameters[1].fusion_position, 1);
    EXPECT_EQ(kernel.parameters[2].kind, Kind::OutputTensorMap);
    EXPECT_EQ(kernel.parameters[2].fusion_position, 0);
    EXPECT_EQ(kernel.parameters[5].kind, Kind::OutputTensor);
    EXPECT_TRUE(kernel.arch_specific);
    EXPECT_EQ(kernel.source.find("BRAZE_KERNEL_NAME"), std::string::npos);
    // A clone keeps the template, on its own tensors.
    const std::unique_ptr<Fusion> copy = fusion->clone();
    ASSERT_NE(copy->kernelTemplate(), nullptr);
    EXPECT_EQ(copy->kernelTemplate()->parameters[0].tensor, copy->inputs()[0]);
    EXPECT_EQ(generateCuda(*copy).kernel_name, kernel.kernel_name);

    const CompiledKernel& compiled = built.compiled;
    EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << compiled.compileLog();
    if (!built.sass.empty()) {
      const std::string& sass = built.sass;
      EXPECT_NE(sass.find(dtype == DataType::BFloat16 ? "HGMMA.64x256x16.F32.BF16"
                                                      : "HGMMA.64x256x16.F32 "),
                std::string::npos)
          << sass;
      EXPECT_EQ(test::countInstructions(sass, "UTMALDG"), 2) << sass;
      // The tile leaves in 64-column chunks per consumer, from loops over chunks and their
      // 16-column parts that are not unrolled: each part written with stmatrix (4 matrices),
      // each chunk stored by a bulk copy, none from registers.
      EXPECT_EQ(test::countInstructions(sass, "UTMASTG"), 1) << sass;
      EXPECT_EQ(test::countInstructions(sass, "STSM"), 1) << sass;
      EXPECT_EQ(test::countInstructions(sass, "STG"), 0) << sass;
    }
  }
}

// An epilogue input with unit stride along N, even strides elsewhere and an aligned start is
// loaded in pairs (one 4-byte load per pair of columns); one stored N-major is loaded element
// by element.
TEST(MatmulSchedulerTest, EpilogueInputsWithUnitStrideAreLoadedInPairs) {
  const test::EpilogueCase residual = test::epilogueCases()[2];
  ASSERT_EQ(residual.name, "relu_residual");
  for (const bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "residual stored N-major" : "residual row-major");
    auto fusion = residual.build(DataType::BFloat16);
    SchedulerRuntimeInfo info =
        contiguousRuntimeInfo(*fusion, {{4096, 4096}, {4096, 4096}, {4096, 4096}});
    if (transposed) std::get<TensorArgumentInfo>(info.arguments[2]).strides = {1, 4096};
    const matmul_scheduler::MatmulParams params =
        matmul_scheduler::computeHeuristics(*fusion, info);
    EXPECT_EQ(params.vector_inputs, transposed ? 0 : 1 << 2);  // input 2: the residual
    matmul_scheduler::schedule(*fusion, params);
    const Sm90aKernel built = compileForSm90a(*fusion);
    EXPECT_LE(built.compiled.resources().spill_store_bytes, 16) << built.compiled.compileLog();
    if (!built.sass.empty()) {
      // 128 x 256 tile: 64 pairs per consumer thread, 4 per 16-column part of a chunk (the
      // loops over chunks and parts are not unrolled).
      EXPECT_EQ(test::countInstructions(built.sass, "LDG.E.CONSTANT"), transposed ? 0 : 4)
          << built.sass;
      EXPECT_EQ(test::countInstructions(built.sass, "LDG.E.U16.CONSTANT"), transposed ? 8 : 0)
          << built.sass;
    }
  }
}

// An odd N (a vocabulary projection) is stored one column per epilogue call, from registers;
// pairs and the bulk-copy store need an even N and a multiple of 8, and a forced bulk-copy store
// of single columns is refused.
TEST(MatmulSchedulerTest, AnOddNIsStoredOneColumnAtATime) {
  auto fusion = linearFusion(DataType::BFloat16);
  const SchedulerRuntimeInfo info = infoFor(1024, 50257, 4096);
  EXPECT_EQ(matmul_scheduler::canScheduleRunTime(*fusion, info), std::nullopt);
  matmul_scheduler::MatmulParams params = matmul_scheduler::computeHeuristics(*fusion, info);
  EXPECT_EQ(params.epilogue_vector, 1);
  EXPECT_EQ(params.tma_store, 0);
  matmul_scheduler::MatmulParams forced = params;
  forced.tma_store = 1;
  EXPECT_THROW(matmul_scheduler::schedule(*linearFusion(DataType::BFloat16), forced), Error);
  matmul_scheduler::schedule(*fusion, params);
  const Sm90aKernel built = compileForSm90a(*fusion);
  EXPECT_EQ(built.compiled.resources().spill_store_bytes, 0) << built.compiled.compileLog();
  if (!built.sass.empty()) {
    EXPECT_EQ(test::countInstructions(built.sass, "STG.E.U16"), 128) << built.sass;  // 2 x 64
    EXPECT_EQ(test::countInstructions(built.sass, "UTMASTG"), 0) << built.sass;
  }
  EXPECT_EQ(
      matmul_scheduler::computeHeuristics(*fusion, infoFor(1024, 50258, 4096)).epilogue_vector, 2);
  EXPECT_TRUE(built.kernel.launch_checks.empty());
  // Pairs forced on an odd N would leave the last column unstored: the kernel's launch check
  // refuses such a run, naming the fix.
  auto paired = linearFusion(DataType::BFloat16);
  matmul_scheduler::MatmulParams pairs = params;
  pairs.epilogue_vector = 2;
  matmul_scheduler::schedule(*paired, pairs);
  const GeneratedKernel generated = generateCuda(*paired);
  ASSERT_EQ(generated.launch_checks.size(), 1u);
  EXPECT_NE(generated.launch_checks[0].second.find("epilogue_vector = 1"), std::string::npos);
  for (const int64_t n : {50257, 50258}) {
    ExpressionEvaluator extents;
    validateAndBindArguments(*paired, infoFor(1024, n, 4096).arguments, "test", extents);
    EXPECT_EQ(toBool(extents.evaluateOrThrow(generated.launch_checks[0].first, "check")),
              n % 2 == 0)
        << n;
  }
}

// The bulk-copy store takes the first output when it is 16-bit and the tile is not split;
// forced otherwise, schedule() says why. With an fp32 first output, the epilogue stores every
// output from registers.
TEST(MatmulSchedulerTest, TheBulkCopyStoreNeedsA16BitFirstOutputAndNoSplit) {
  const auto widened = [] {
    auto fusion = linearFusion(DataType::BFloat16);
    fusion->replaceOutput(fusion->outputs()[0],
                          cast(fusion->outputs()[0]->as<TensorView>(), DataType::Float32));
    return fusion;
  };
  auto fusion = widened();
  matmul_scheduler::MatmulParams params =
      matmul_scheduler::computeHeuristics(*fusion, infoFor(8192, 8192, 8192));
  EXPECT_EQ(params.tma_store, 0);
  matmul_scheduler::MatmulParams forced = params;
  forced.tma_store = 1;
  EXPECT_THROW(matmul_scheduler::schedule(*widened(), forced), Error);
  auto split = linearFusion(DataType::BFloat16);
  forced = matmul_scheduler::computeHeuristics(*split, infoFor(512, 512, 16384));
  ASSERT_EQ(forced.split_k, 4);
  forced.tma_store = 1;
  try {
    matmul_scheduler::schedule(*split, forced);
    ADD_FAILURE() << "a split with the bulk-copy store was scheduled";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("tma_store = 1 with split_k = 4"), std::string::npos)
        << error.what();
  }
  matmul_scheduler::schedule(*fusion, params);
  const Sm90aKernel built = compileForSm90a(*fusion);
  if (!built.sass.empty()) {
    EXPECT_EQ(test::countInstructions(built.sass, "UTMASTG"), 0) << built.sass;
    EXPECT_GT(test::countInstructions(built.sass, "STG"), 0) << built.sass;
  }
}

// Pairs sharing B: a cluster launch of two CTAs per pair of tiles whose B copies are
// multicast, without spills, for a K-major and an N-major B.
TEST(MatmulSchedulerTest, PairsSharingBMulticastTheirCopies) {
  for (const bool n_major : {false, true}) {
    const test::LayoutCase layout = {.name = "pair", .b_mn_major = n_major};
    auto fusion = layout.build(DataType::BFloat16);
    SchedulerRuntimeInfo info = infoFor(8192, 8192, 8192);
    if (n_major)
      info.arguments[1] = TensorArgumentInfo{DataType::BFloat16, {8192, 8192}, {8192, 1}, true, ""};
    matmul_scheduler::MatmulParams params = matmul_scheduler::computeHeuristics(*fusion, info);
    params.cluster_m = 2;  // forced: the heuristics do not choose pairs
    matmul_scheduler::schedule(*fusion, params);
    const Sm90aKernel built = compileForSm90a(*fusion);
    const GeneratedKernel& kernel = built.kernel;
    EXPECT_EQ(kernel.launch.cluster, (std::array<int64_t, 3>{2, 1, 1}));
    const CompiledKernel& compiled = built.compiled;
    EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << compiled.compileLog();
    if (!built.sass.empty()) {
      const std::string& sass = built.sass;
      // A's tile and this CTA's half of B's (one box K-major, two of the four N-major).
      EXPECT_EQ(test::countInstructions(sass, "UTMALDG"), n_major ? 3 : 2) << sass;
      EXPECT_EQ(test::countInstructions(sass, "MULTICAST"), n_major ? 2 : 1) << sass;
      // The K loop releases each stage to both CTAs without a memory barrier (a cluster-scope
      // release is a MEMBAR.ALL.GPU, which waits for the wgmma in flight: it made pairs 1.6x
      // slower).
      const std::string k_loop = kLoopOf(sass, "SYNCS.ARRIVE.TRANS64.RED");
      ASSERT_FALSE(k_loop.empty()) << sass;
      EXPECT_EQ(test::countInstructions(k_loop, "MEMBAR"), 0) << k_loop;
    }
  }
  auto odd = linearFusion(DataType::BFloat16);
  matmul_scheduler::MatmulParams params;
  params.cluster_m = 2;
  params.ctas = 131;
  EXPECT_THROW(matmul_scheduler::schedule(*odd, params), Error);
}

// Every layout and batch the scheduler takes becomes one sm_90a kernel without spills that
// copies each operand's tile in one box (K-major) or one box per 64 rows (MN-major), and runs
// through the executor cache on the CPU tier with its arguments' strides checked.
TEST(MatmulSchedulerTest, EveryLayoutAndBatchBecomesOneKernel) {
  for (const test::LayoutCase& layout : test::layoutCases()) {
    SCOPED_TRACE(layout.name);
    auto fusion = layout.build(DataType::BFloat16);
    ASSERT_EQ(matmul_scheduler::canScheduleCompileTime(*fusion), std::nullopt);
    test::RandomTensors random(13);
    const std::vector<HostTensor> inputs =
        layout.inputs(random, DataType::BFloat16, 2, 136, 264, 72);
    SchedulerRuntimeInfo info = infoFor(136, 264, 72);
    info.arguments = {argumentInfoOf(inputs[0]), argumentInfoOf(inputs[1])};
    ASSERT_EQ(matmul_scheduler::canScheduleRunTime(*fusion, info), std::nullopt);
    const matmul_scheduler::MatmulParams params =
        matmul_scheduler::computeHeuristics(*fusion, info);
    matmul_scheduler::schedule(*fusion, params);
    const Sm90aKernel built = compileForSm90a(*fusion);
    const CompiledKernel& compiled = built.compiled;
    EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << compiled.compileLog();
    if (!built.sass.empty()) {
      const std::string& sass = built.sass;
      EXPECT_EQ(test::countInstructions(
                    sass, "HGMMA.64x" + std::to_string(params.tile_n) + "x16.F32.BF16"),
                4)
          << sass;
      EXPECT_EQ(test::countInstructions(sass, "UTMALDG"),
                (layout.a_mn_major ? 2 : 1) + (layout.b_mn_major ? params.tile_n / 64 : 1))
          << sass;
    }
    const std::string described = runAndCheck(layout.build(DataType::BFloat16), inputs);
    EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
    // A transposed input is read in place: no kernel copies it first.
    EXPECT_EQ(described.find("segment 1"), std::string::npos) << described;
    // The kernel's name, as profilers show it.
    EXPECT_NE(described.find(", kernel braze_"), std::string::npos) << described;
  }
}

// Every epilogue case is accepted, becomes one sm_90a kernel without spills, and runs through
// the executor cache on the CPU tier (the kernel compiled, the arguments checked against it).
TEST(MatmulSchedulerTest, EpiloguesBecomeOneKernel) {
  for (const test::EpilogueCase& epilogue : test::epilogueCases()) {
    SCOPED_TRACE(epilogue.name);
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
      auto fusion = epilogue.build(dtype);
      ASSERT_EQ(matmul_scheduler::canScheduleCompileTime(*fusion), std::nullopt);
      matmul_scheduler::schedule(
          *fusion, matmul_scheduler::computeHeuristics(*fusion, infoFor(8192, 8192, 8192, dtype)));
      const Sm90aKernel built = compileForSm90a(*fusion);
      const CompiledKernel& compiled = built.compiled;
      // No local memory in the main loop. For epilogues that read a 2-d input, ptxas keeps a
      // few values the epilogue needs once per tile (the thread's row and column offsets, the
      // pair's rank) in local memory across the tile loop (8-104 bytes, read once per tile); no
      // more than that.
      EXPECT_LE(compiled.resources().spill_store_bytes, 128) << compiled.compileLog();
      if (!built.sass.empty()) {
        const std::string& sass = built.sass;
        // The consumers' K loop: from the wait on a full stage to the arrive that hands the
        // previous stage back.
        const std::string main_loop = kLoopOf(sass);
        ASSERT_FALSE(main_loop.empty()) << sass;
        EXPECT_EQ(test::countInstructions(main_loop, "HGMMA"), 4) << main_loop;
        EXPECT_EQ(test::countInstructions(main_loop, "LDL"), 0) << main_loop;
        EXPECT_EQ(test::countInstructions(main_loop, "STL"), 0) << main_loop;
      }
    }
    ExecutorCacheOptions options;
    options.registry = &test::shippedSchedulers();
    FusionExecutorCache cache(epilogue.build(DataType::BFloat16), options);
    test::RandomTensors random(7);
    std::vector<EvaluatorArgument> inputs = {
        test::exactOperand(random, DataType::BFloat16, {96, 72}),
        test::exactOperand(random, DataType::BFloat16, {130, 72})};
    for (EvaluatorArgument& extra : epilogue.extra_inputs(random, DataType::BFloat16, 96, 130))
      inputs.push_back(std::move(extra));
    std::vector<FusionArgument> arguments;
    for (const EvaluatorArgument& input : inputs)
      arguments.push_back(std::visit([](const auto& v) { return FusionArgument(v); }, input));
    const std::vector<FusionArgument> outputs = cache.run(arguments);
    const std::vector<EvaluatorArgument> expected = evaluateFusion(cache.fusion(), inputs);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const HostTensor& want = std::get<HostTensor>(expected[i]);
      test::expectClose(std::get<HostTensor>(outputs[i]), want, test::toleranceFor(want.dtype()));
    }
    const std::string described = cache.lastRuntime()->describe();
    EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
  }
}

// The segmenter splits linear + bias + GELU + a row sum into the matmul kernel with its
// epilogue and a reduction kernel.
TEST(MatmulSchedulerTest, AReductionAfterTheEpilogueGetsItsOwnSegment) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* bias = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
  TensorView* activated = gelu(linear(x, w, bias));
  fusion->addOutput(activated);
  fusion->addOutput(sum(cast(activated, DataType::Float32), {1}));
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  FusionExecutorCache cache(std::move(fusion), options);
  test::RandomTensors random(11);
  const std::vector<HostTensor> inputs = {test::exactOperand(random, DataType::BFloat16, {64, 40}),
                                          test::exactOperand(random, DataType::BFloat16, {96, 40}),
                                          random.uniform(DataType::BFloat16, {96})};
  const std::vector<FusionArgument> outputs = cache.run({inputs[0], inputs[1], inputs[2]});
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), inputs);
  ASSERT_EQ(outputs.size(), 2u);
  test::expectClose(std::get<HostTensor>(outputs[0]), expected[0],
                    test::toleranceFor(DataType::BFloat16));
  // The reduction kernel sums the activations as the first kernel stored them, in bf16.
  Fusion row_sum;
  TensorView* stored = makeSymbolicTensor(row_sum, 2, DataType::BFloat16);
  row_sum.addOutput(sum(cast(stored, DataType::Float32), {1}));
  test::expectClose(std::get<HostTensor>(outputs[1]),
                    evaluateFusionTensors(row_sum, {std::get<HostTensor>(outputs[0])})[0],
                    test::toleranceFor(DataType::Float32));
  const std::string described = cache.lastRuntime()->describe();
  EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
  EXPECT_NE(described.find("braze::reduction"), std::string::npos) << described;
}

// linear(x, w) with x, w or both cast from fp32 (K-major), with a bias and GELU: one kernel
// that copies the fp32 tiles into a staging ring and converts them into the operand ring; the
// heuristics leave the staging ring room for at least three stages.
TEST(MatmulSchedulerTest, PrologueCastsAreConvertedInTheKernel) {
  for (const auto& [convert_x, convert_w] :
       std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
    SCOPED_TRACE(std::string("x ") + (convert_x ? "fp32" : "bf16") + ", w " +
                 (convert_w ? "fp32" : "bf16"));
    auto fusion = castPrologueFusion(convert_x, convert_w, DataType::BFloat16);
    ASSERT_EQ(matmul_scheduler::canScheduleCompileTime(*fusion), std::nullopt);
    SchedulerRuntimeInfo info = infoFor(8192, 8192, 8192);
    info.arguments[0] = TensorArgumentInfo{
        convert_x ? DataType::Float32 : DataType::BFloat16, {8192, 8192}, {8192, 1}, true, ""};
    info.arguments[1] = TensorArgumentInfo{
        convert_w ? DataType::Float32 : DataType::BFloat16, {8192, 8192}, {8192, 1}, true, ""};
    info.arguments.push_back(TensorArgumentInfo{DataType::BFloat16, {8192}, {1}, true, ""});
    info.data_alignments.push_back(256);
    // At 8192^3 the kernel would read a converted operand's fp32 tiles 32 (x) or 64 (w) times:
    // refused, so the cast runs first. At 128 x 256 it reads each once and converts. (The
    // heuristics' widths below are those at 8192^3, where the staging ring leaves least room.)
    const std::optional<std::string> big = matmul_scheduler::canScheduleRunTime(*fusion, info);
    ASSERT_TRUE(big.has_value());
    const bool both = convert_x && convert_w;
    EXPECT_NE(big->find(both        ? "both cast from fp32"
                        : convert_w ? "read its fp32 tiles 64 times"
                                    : "read its fp32 tiles 32 times"),
              std::string::npos)
        << *big;
    SchedulerRuntimeInfo within = info;
    for (size_t i = 0; i < 3; ++i) {
      auto& tensor = std::get<TensorArgumentInfo>(within.arguments[i]);
      tensor.sizes = i == 0   ? std::vector<int64_t>{128, 8192}
                     : i == 1 ? std::vector<int64_t>{256, 8192}
                              : std::vector<int64_t>{256};
    }
    // Both converted are refused at any size: the segmenter casts one first.
    const std::optional<std::string> small = matmul_scheduler::canScheduleRunTime(*fusion, within);
    EXPECT_EQ(small.has_value(), both) << small.value_or("");
    // fp32 rows of 36 elements are 144 bytes: a 16-byte stride, read as is.
    SchedulerRuntimeInfo narrow = info;
    for (size_t i = 0; i < 3; ++i) {
      auto& tensor = std::get<TensorArgumentInfo>(narrow.arguments[i]);
      tensor.sizes = i < 2 ? std::vector<int64_t>{64, 36} : std::vector<int64_t>{64};
      tensor.strides = i < 2 ? std::vector<int64_t>{36, 1} : std::vector<int64_t>{1};
    }
    // Refused for the 16-bit operand's 72-byte rows, not for the fp32 one's.
    const std::optional<std::string> narrow_why =
        matmul_scheduler::canScheduleRunTime(*fusion, narrow);
    ASSERT_TRUE(narrow_why.has_value());
    EXPECT_NE(narrow_why->find(both ? "both cast from fp32" : "not a multiple of 8 elements"),
              std::string::npos)
        << *narrow_why;
    const matmul_scheduler::MatmulParams params =
        matmul_scheduler::computeHeuristics(*fusion, info);
    EXPECT_GE(params.stages, 3);
    // The widest tile whose ring keeps three stages beside the staging ring (2 x 64 KiB for
    // x; 2 x 64 KiB per 128 columns of w).
    EXPECT_EQ(params.tile_n, convert_w ? (convert_x ? 128 : 192) : 256)
        << matmul_scheduler::toString(params);
    matmul_scheduler::schedule(*fusion, params);
    const Sm90aKernel built = compileForSm90a(*fusion);
    // The maps and sizes are the fp32 inputs'; the epilogue reads the bias and stores the result.
    EXPECT_EQ(built.kernel.parameters[0].dtype, convert_x ? DataType::Float32 : DataType::BFloat16);
    EXPECT_EQ(built.kernel.parameters[1].dtype, convert_w ? DataType::Float32 : DataType::BFloat16);
    const CompiledKernel& compiled = built.compiled;
    EXPECT_EQ(compiled.resources().spill_store_bytes, 0) << compiled.compileLog();
    if (!built.sass.empty()) {
      const std::string& sass = built.sass;
      // Converted tiles: two boxes of 32 fp32 columns per K step, rounded in pairs
      // (F2FP ... PACK_AB) and stored with 16-byte shared stores.
      EXPECT_EQ(test::countInstructions(sass, "UTMALDG"), (convert_x ? 2 : 1) + (convert_w ? 2 : 1))
          << sass;
      EXPECT_GE(test::countInstructions(sass, "F2FP.BF16.F32.PACK_AB"), 4) << sass;
      const std::string main_loop = kLoopOf(sass);
      ASSERT_FALSE(main_loop.empty()) << sass;
      EXPECT_EQ(test::countInstructions(main_loop, "HGMMA"), 4) << main_loop;
    }
  }
  // A batched x and an fp16 result take the same path.
  auto batched = castPrologueFusion(true, false, DataType::Float16, 1);
  EXPECT_EQ(matmul_scheduler::canScheduleCompileTime(*batched), std::nullopt);
}

// Through the executor cache: one cast runs in the matmul kernel; with both operands cast,
// one cast runs first as a pointwise kernel and the kernel converts the other.
TEST(MatmulSchedulerTest, APrologueCastRunsInTheMatmulKernel) {
  test::RandomTensors random(17);
  for (const auto& [convert_x, convert_w] :
       std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {true, true}}) {
    const auto operand = [&](bool fp32, std::vector<int64_t> sizes) {
      return random.uniform(fp32 ? DataType::Float32 : DataType::BFloat16, std::move(sizes), -1.0,
                            1.0);
    };
    const std::string described =
        runAndCheck(castPrologueFusion(convert_x, convert_w, DataType::BFloat16),
                    {operand(convert_x, {96, 40}), operand(convert_w, {72, 40}),
                     random.uniform(DataType::BFloat16, {72}, -1.0, 1.0)});
    EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
    EXPECT_EQ(described.find("braze::pointwise") != std::string::npos, convert_x && convert_w)
        << described;
  }
}

// Operands the copy engine cannot read in rows (a K of 37 bf16 is 74 bytes per row; an
// MN-major operand of 36 or 42 rows) are copied K-innermost by a pointwise kernel first, K
// padded with zeros where needed; aligned operands are read as they are.
TEST(MatmulSchedulerTest, OperandsWithoutAlignedRowsAreCopiedFirst) {
  for (const test::LayoutCase& layout : test::layoutCases()) {
    SCOPED_TRACE(layout.name);
    test::RandomTensors random(19);
    const std::string padded = runAndCheck(
        layout.build(DataType::BFloat16), layout.inputs(random, DataType::BFloat16, 2, 36, 42, 37));
    EXPECT_NE(padded.find("braze::matmul"), std::string::npos) << padded;
    EXPECT_NE(padded.find("braze::pointwise"), std::string::npos) << padded;
    // One element per matrix: dims of size 1 have any stride, and are never stepped over.
    const std::string single = runAndCheck(layout.build(DataType::BFloat16),
                                           layout.inputs(random, DataType::BFloat16, 1, 1, 1, 1));
    EXPECT_NE(single.find("braze::matmul"), std::string::npos) << single;
    if (!layout.a_mn_major && !layout.b_mn_major) continue;
    // K of 64: only the MN-major operands of 36 or 42 rows are copied.
    const std::string copied = runAndCheck(
        layout.build(DataType::BFloat16), layout.inputs(random, DataType::BFloat16, 2, 36, 42, 64));
    EXPECT_NE(copied.find("braze::matmul"), std::string::npos) << copied;
    EXPECT_NE(copied.find("braze::pointwise"), std::string::npos) << copied;
  }
  // A fused epilogue (bias, GELU, residual) stays in the contraction's kernel when K (1001)
  // is padded.
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* bias = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
  TensorView* residual = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  fusion->addOutput(add(gelu(linear(x, w, bias)), residual));
  test::RandomTensors random(23);
  const std::string described =
      runAndCheck(std::move(fusion), {test::exactOperand(random, DataType::BFloat16, {72, 1001}),
                                      test::exactOperand(random, DataType::BFloat16, {40, 1001}),
                                      random.uniform(DataType::BFloat16, {40}),
                                      random.uniform(DataType::BFloat16, {72, 40})});
  EXPECT_NE(described.find("braze::pointwise"), std::string::npos) << described;
  EXPECT_EQ(described.find("braze::matmul"), described.rfind("braze::matmul")) << described;
}

// The same cache runs aligned operands directly and staged ones through copies: two runtimes.
TEST(MatmulSchedulerTest, AlignedAndUnalignedRunsGetTheirOwnRuntimes) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  FusionExecutorCache cache(linearFusion(DataType::BFloat16), options);
  test::RandomTensors random(29);
  for (const int64_t k : {64, 37, 64, 37}) {
    const std::vector<HostTensor> inputs = {
        test::exactOperand(random, DataType::BFloat16, {24, k}),
        test::exactOperand(random, DataType::BFloat16, {16, k})};
    const std::vector<FusionArgument> outputs = cache.run({inputs[0], inputs[1]});
    test::expectClose(std::get<HostTensor>(outputs[0]),
                      evaluateFusionTensors(cache.fusion(), inputs)[0],
                      test::toleranceFor(DataType::BFloat16));
    const std::string described = cache.lastRuntime()->describe();
    EXPECT_EQ(described.find("braze::pointwise") != std::string::npos, k == 37) << described;
  }
  EXPECT_EQ(cache.numRuntimes(), 2u);
  EXPECT_EQ(cache.counters().misses, 2);
  // A scheduler forced for the whole fusion takes it as defined: no copies, its own refusal.
  RunOptions forced;
  forced.scheduler = "braze::matmul";
  const std::vector<HostTensor> odd = {test::exactOperand(random, DataType::BFloat16, {24, 37}),
                                       test::exactOperand(random, DataType::BFloat16, {16, 37})};
  try {
    cache.run({odd[0], odd[1]}, forced);
    ADD_FAILURE() << "a forced matmul ran operands with 74-byte rows";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("multiple of 8 elements"), std::string::npos)
        << error.what();
  }
}

TEST(MatmulSchedulerTest, TheExecutorCacheRunsLinearWithTheMatmulKernel) {
  test::RandomTensors random(3);
  const std::string described =
      runAndCheck(linearFusion(DataType::BFloat16),
                  {random.uniform(DataType::BFloat16, {200, 136}, -1.0, 1.0),
                   random.uniform(DataType::BFloat16, {328, 136}, -1.0, 1.0)});
  EXPECT_NE(described.find("braze::matmul"), std::string::npos) << described;
}

}  // namespace
}  // namespace braze
