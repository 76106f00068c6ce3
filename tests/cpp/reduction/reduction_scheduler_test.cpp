// The reduction scheduler on the CPU tier: its decisions across the shape sweep, the params'
// byte format, its refusals, and every scheduled fusion generated and compiled with NVRTC for
// sm_90.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ops/contraction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/sched/schedule_printer.h"
#include "reduction/reduction_cases.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using reduction::ReductionParams;
using reduction::ReductionStrategy;
using ::testing::HasSubstr;

class ReductionCaseTest : public ::testing::TestWithParam<std::string> {};

ReductionParams heuristicsFor(const test::ReductionCase& c, const Fusion& fusion) {
  const std::vector<EvaluatorArgument> args = test::makeSuiteArguments(test::asSuiteCase(c), 1);
  const SchedulerRuntimeInfo info = test::runtimeInfoOf(c, args);
  EXPECT_EQ(reduction::canScheduleCompileTime(fusion), std::nullopt);
  EXPECT_EQ(reduction::canScheduleRunTime(fusion, info), std::nullopt);
  return reduction::computeHeuristics(fusion, info);
}

TEST_P(ReductionCaseTest, DecisionsAreAsExpected) {
  const test::ReductionCase& c = test::findReductionCase(GetParam());
  const std::unique_ptr<Fusion> fusion = c.build();
  const ReductionParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(reduction::toString(reduction::strategyOf(params)), reduction::toString(c.strategy))
      << params;
  EXPECT_EQ(params.vector_width, c.vector_width) << params;
  EXPECT_LE(params.threads_x * params.threads_y, 1024) << params;
  EXPECT_LE(params.grid_blocks, 65535) << params;
}

TEST_P(ReductionCaseTest, ParamsRoundTripThroughBytes) {
  const test::ReductionCase& c = test::findReductionCase(GetParam());
  const std::unique_ptr<Fusion> fusion = c.build();
  const ReductionParams params = heuristicsFor(c, *fusion);
  const std::vector<uint8_t> bytes = reduction::encodeParams(params);
  EXPECT_EQ(reduction::decodeParams(bytes), params);
  EXPECT_EQ(reduction::hashParams(reduction::decodeParams(bytes)), reduction::hashParams(params));
}

TEST_P(ReductionCaseTest, ScheduledFusionCompilesForSm90) {
  const test::ReductionCase& c = test::findReductionCase(GetParam());
  const std::unique_ptr<Fusion> fusion = c.build();
  const ReductionParams params = heuristicsFor(c, *fusion);
  reduction::schedule(*fusion, params);
  std::optional<GeneratedKernel> generated;
  try {
    generated = generateCuda(*fusion);
  } catch (const Error& error) {
    FAIL() << error.what() << "\n" << params << "\n" << printSchedule(*fusion);
  }
  const GeneratedKernel& kernel = *generated;
  if (std::getenv("BRAZE_TEST_PRINT_KERNEL") != nullptr) std::cout << kernel.source << "\n";
  if (params.vector_width > 1) {
    EXPECT_THAT(kernel.source, HasSubstr("braze::vectorCopy<")) << kernel.source;
  }
  if (params.grid_blocks > 1) {
    EXPECT_THAT(kernel.source, HasSubstr("braze::gridReduce<")) << kernel.source;
  }
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
}

INSTANTIATE_TEST_SUITE_P(Cases, ReductionCaseTest, ::testing::ValuesIn(test::reductionCaseNames()),
                         [](const auto& info) { return info.param; });

// ---- the strategy follows the sizes and the device

ReductionParams heuristicsOn(const std::function<void(Fusion&)>& body,
                             const std::vector<std::vector<int64_t>>& sizes,
                             driver::DeviceProperties device = driver::h100Properties()) {
  Fusion fusion;
  body(fusion);
  SchedulerRuntimeInfo info = contiguousRuntimeInfo(fusion, sizes);
  info.device = device;
  EXPECT_EQ(reduction::canScheduleCompileTime(fusion), std::nullopt);
  EXPECT_EQ(reduction::canScheduleRunTime(fusion, info), std::nullopt);
  return reduction::computeHeuristics(fusion, info);
}

void rowSum(Fusion& f) {
  f.addOutput(sum(makeSymbolicTensor(f, 2), {1}));
}
void rowSumBf16(Fusion& f) {
  f.addOutput(sum(makeSymbolicTensor(f, 2, DataType::BFloat16), {1}));
}
void columnSum(Fusion& f) {
  f.addOutput(sum(makeSymbolicTensor(f, 2), {0}));
}

TEST(ReductionHeuristicsTest, RowSumSweepOfTheBenchmark) {
  // M x N float32 of 256 MiB: one block (or a few rows per block) per row while the rows fill
  // the device, a grid reduction only for the longest rows.
  for (const int64_t n : {256, 1000, 1024, 4096, 8192, 16384, 65536, 262144}) {
    const int64_t m = (int64_t{64} << 20) / n;
    const ReductionParams p = heuristicsOn(rowSum, {{m, n}});
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + ": " + reduction::toString(p));
    EXPECT_TRUE(p.inner);
    EXPECT_EQ(p.vector_width, 4);
    EXPECT_LE(p.threads_x * p.threads_y, 512);
    EXPECT_GE(p.threads_x * p.threads_y, 128);
    // Every thread has 64 bytes of loads in flight per step unless the row is shorter.
    EXPECT_GE(p.unroll * p.threads_x * 4, std::min<int64_t>(n, p.threads_x * 16));
    if (n <= 65536) {
      EXPECT_EQ(p.grid_blocks, 1);
    }
  }
  // 256 rows of 262144: 512 threads per row instead of a grid reduction.
  EXPECT_EQ(heuristicsOn(rowSum, {{256, 262144}}).threads_x, 512);
  EXPECT_EQ(heuristicsOn(rowSum, {{256, 262144}}).grid_blocks, 1);
  EXPECT_GT(heuristicsOn(rowSum, {{16, 262144}}).grid_blocks, 1);
  // Short rows: at least 32 bytes per lane (a row of 256 bfloat16 on 16 lanes).
  const ReductionParams short_rows = heuristicsOn(rowSumBf16, {{1 << 19, 256}});
  EXPECT_EQ(short_rows.threads_x, 16);
  EXPECT_EQ(short_rows.unroll, 2);
  // bfloat16: 8 elements per 16-byte vector.
  EXPECT_EQ(heuristicsOn(rowSumBf16, {{1 << 17, 1024}}).vector_width, 8);
}

TEST(ReductionHeuristicsTest, StrategyPerShapeClass) {
  const auto strategy = [](const std::function<void(Fusion&)>& body, std::vector<int64_t> sizes) {
    return std::string(reduction::toString(reduction::strategyOf(heuristicsOn(body, {sizes}))));
  };
  EXPECT_EQ(strategy(rowSum, {100000, 2}), "inner_thread");
  EXPECT_EQ(strategy(rowSum, {100000, 64}), "inner_warp");
  EXPECT_EQ(strategy(rowSum, {100000, 2048}), "inner_block");
  EXPECT_EQ(strategy(rowSum, {8, 1 << 20}), "inner_grid");
  EXPECT_EQ(strategy(columnSum, {64, 1 << 20}), "outer_thread");
  EXPECT_EQ(strategy(columnSum, {8, 8192}), "outer_block");
  EXPECT_EQ(strategy(columnSum, {1 << 16, 64}), "outer_grid");
}

TEST(ReductionHeuristicsTest, EveryStrategyChecksItsBoundsOncePerStep) {
  for (const auto& [body, sizes] : std::vector<std::pair<void (*)(Fusion&), std::vector<int64_t>>>{
           {rowSum, {100000, 2}},
           {rowSum, {100000, 2048}},
           {rowSum, {8, 1 << 20}},
           {columnSum, {64, 1 << 20}},
           {columnSum, {8, 8192}},
           {columnSum, {1 << 16, 64}}}) {
    const ReductionParams p = heuristicsOn(body, {sizes});
    EXPECT_TRUE(p.unswitch) << p;
  }
}

TEST(ReductionHeuristicsTest, TheDeviceDecidesWhenToSplitARow) {
  // 16 rows of 65536: on 132 SMs the rows are split over blocks; on one SM they already fill
  // the resident blocks.
  EXPECT_GT(heuristicsOn(rowSum, {{16, 65536}}).grid_blocks, 1);
  driver::DeviceProperties small = driver::h100Properties();
  small.sm_count = 1;
  EXPECT_EQ(heuristicsOn(rowSum, {{16, 65536}}, small).grid_blocks, 1);
}

TEST(ReductionHeuristicsTest, VectorWidthFollowsDivisibilityAndAlignment) {
  EXPECT_EQ(heuristicsOn(rowSum, {{64, 1026}}).vector_width, 2);
  EXPECT_EQ(heuristicsOn(rowSum, {{64, 1027}}).vector_width, 1);
  Fusion fusion;
  rowSum(fusion);
  SchedulerRuntimeInfo info = contiguousRuntimeInfo(fusion, {{64, 1024}});
  info.data_alignments[0] = 8;
  EXPECT_EQ(reduction::computeHeuristics(fusion, info).vector_width, 2);
  // A padded row stride (not a multiple of the width) allows no vectors.
  Fusion padded;
  padded.addOutput(
      sum(makeInputTensor(
              padded, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, true}}),
          {1}));
  info = contiguousRuntimeInfo(padded, {{64, 1024}});
  std::get<TensorArgumentInfo>(info.arguments[0]).strides = {1026, 1};
  EXPECT_EQ(reduction::computeHeuristics(padded, info).vector_width, 2);
  std::get<TensorArgumentInfo>(info.arguments[0]).strides = {1027, 1};
  EXPECT_EQ(reduction::computeHeuristics(padded, info).vector_width, 1);
}

// ---- params

TEST(ReductionParamsTest, PrintsTheStrategyAndEveryField) {
  ReductionParams params;
  params.vector_width = 4;
  params.unroll = 2;
  params.threads_x = 128;
  EXPECT_EQ(reduction::toString(params),
            "reduction[inner_block]{inner=true, vector_width=4, unroll=2, threads_x=128, "
            "threads_y=1, grid_blocks=1, unswitch=false}");
  params.inner = false;
  params.grid_blocks = 3;
  EXPECT_EQ(reduction::toString(reduction::strategyOf(params)), "outer_grid");
}

TEST(ReductionParamsTest, EveryStrategyHasItsName) {
  const auto name = [](bool inner, int64_t tx, int64_t ty, int64_t g) {
    ReductionParams p;
    p.inner = inner;
    p.threads_x = tx;
    p.threads_y = ty;
    p.grid_blocks = g;
    return std::string(reduction::toString(reduction::strategyOf(p)));
  };
  EXPECT_EQ(name(true, 1, 128, 1), "inner_thread");
  EXPECT_EQ(name(true, 32, 8, 1), "inner_warp");
  EXPECT_EQ(name(true, 256, 1, 1), "inner_block");
  EXPECT_EQ(name(true, 512, 1, 4), "inner_grid");
  EXPECT_EQ(name(false, 128, 1, 1), "outer_thread");
  EXPECT_EQ(name(false, 32, 8, 1), "outer_block");
  EXPECT_EQ(name(false, 128, 4, 9), "outer_grid");
}

TEST(ReductionParamsTest, DifferentParamsHashDifferently) {
  ReductionParams a;
  ReductionParams b;
  b.grid_blocks = 2;
  EXPECT_NE(a, b);
  EXPECT_NE(reduction::hashParams(a), reduction::hashParams(b));
}

TEST(ReductionParamsTest, DecodeRefusesForeignOrCorruptBytes) {
  const std::vector<uint8_t> foreign = {'B', 'Z', 'P', 'W', 1};
  EXPECT_THAT([&] { reduction::decodeParams(foreign); },
              ::testing::ThrowsMessage<Error>(HasSubstr("belong to another scheduler")));
  std::vector<uint8_t> bytes = reduction::encodeParams({});
  bytes[4] = 7;
  EXPECT_THAT([&] { reduction::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected format version 2, found 7")));
  bytes = reduction::encodeParams({});
  bytes.pop_back();
  EXPECT_THAT([&] { reduction::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("truncated or padded")));
  ReductionParams zero;
  zero.threads_x = 0;
  EXPECT_THAT([&] { reduction::decodeParams(reduction::encodeParams(zero)); },
              ::testing::ThrowsMessage<Error>(HasSubstr("threads_x must be at least 1, found 0")));
}

// ---- refusals

std::optional<std::string> refusal(const std::function<void(Fusion&)>& body) {
  Fusion fusion;
  body(fusion);
  return reduction::canScheduleCompileTime(fusion);
}

TEST(ReductionRefusalTest, FusionsWithoutAReductionGoToPointwise) {
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(add(x, x));
              }).value(),
              HasSubstr("has no reduction; the pointwise scheduler handles"));
  EXPECT_THAT(refusal([](Fusion&) {}).value(), HasSubstr("no outputs"));
}

TEST(ReductionRefusalTest, OpsThisKernelDoesNotHandle) {
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(matmul(makeSymbolicTensor(f, 2), makeSymbolicTensor(f, 2)));
              }).value(),
              HasSubstr("matmul and linear need a tiled contraction"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = reshape(makeInputTensor(f, {.sizes = {4, 6}}), {int64_t{24}});
                f.addOutput(sum(x, {0}));
              }).value(),
              HasSubstr("reshape regroups dims"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 1);
                f.addOutput(sum(pad(x, {int64_t{1}, int64_t{1}}, 0.0), {0}));
              }).value(),
              HasSubstr("shifted or guarded"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                TensorView* index = makeInputTensor(f, {.dtype = DataType::Int64, .sizes = {-1}});
                f.addOutput(sum(index_select(x, 0, index), {1}));
              }).value(),
              HasSubstr("reads indices from a tensor"));
}

TEST(ReductionRefusalTest, ReductionsThatOneKernelCannotShare) {
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(sum(x, {0}));
                f.addOutput(sum(x, {1}));
              }).value(),
              HasSubstr("do not reduce the same dims of the same data"));
  EXPECT_THAT(
      refusal([](Fusion& f) { f.addOutput(sum(sum(makeSymbolicTensor(f, 2), {1}), {0})); }).value(),
      HasSubstr("reads the result of the reduction"));
  // Softmax: the sum reads exp(x - max).
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                TensorView* e = exp(sub(x, max(x, {1}, true)));
                f.addOutput(div(e, sum(e, {1}, true)));
              }).value(),
              HasSubstr("inner_outer scheduler's work"));
  // x - mean(x): x is read again after its reduction.
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(sub(x, mean(x, {1}, true)));
              }).value(),
              HasSubstr("is read again after the reduction"));
}

TEST(ReductionRefusalTest, OutputsThatKeepTheReducedDims) {
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(sum(x, {1}));
                f.addOutput(exp(x));
              }).value(),
              HasSubstr("keeps dim 1, which"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeInputTensor(f, {.sizes = {-1, 1}});
                f.addOutput(sum(x, {1}));
              }).value(),
              HasSubstr("a broadcast dim of"));
  EXPECT_THAT(
      refusal([](Fusion& f) { f.addOutput(sum(makeInputTensor(f, {.sizes = {}}), {})); }).value(),
      HasSubstr("reduces no dim"));
}

TEST(ReductionRefusalTest, RunTimeReasons) {
  Fusion fusion;
  fusion.addOutput(sum(makeSymbolicTensor(fusion, 2), {1}));
  SchedulerRuntimeInfo info;
  EXPECT_THAT(reduction::canScheduleRunTime(fusion, info).value(),
              HasSubstr("expected arguments for 1 inputs, found 0"));
  info = contiguousRuntimeInfo(fusion, {{8}});
  EXPECT_THAT(reduction::canScheduleRunTime(fusion, info).value(),
              HasSubstr("has rank 2 but its argument has 1 sizes"));
  info = contiguousRuntimeInfo(fusion, {{8, 0}});
  EXPECT_THAT(reduction::canScheduleRunTime(fusion, info).value(),
              HasSubstr("dim 1 of the reduction T1 has size 0"));
  Fusion fixed;
  fixed.addOutput(sum(makeInputTensor(fixed, {.sizes = {4, 8}}), {1}));
  info = contiguousRuntimeInfo(fixed, {{4, 9}});
  EXPECT_THAT(reduction::canScheduleRunTime(fixed, info).value(),
              HasSubstr("contradict the fusion"));
  info = contiguousRuntimeInfo(fusion, {{4, 8}});
  EXPECT_EQ(reduction::canScheduleRunTime(fusion, info), std::nullopt);
}

TEST(ReductionScheduleTest, RefusesParamsOfAnotherShape) {
  Fusion fusion;
  columnSum(fusion);
  ReductionParams params;  // inner
  EXPECT_THAT([&] { reduction::schedule(fusion, params); },
              ::testing::ThrowsMessage<Error>(HasSubstr("the params are for an inner reduction")));
}

}  // namespace
}  // namespace braze
