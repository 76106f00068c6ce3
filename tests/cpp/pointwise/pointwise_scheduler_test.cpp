// The pointwise scheduler on the CPU tier: its decisions for many fusions, the params' byte
// format, its refusals, and every scheduled fusion generated and compiled with NVRTC for sm_90.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ops/contraction.h"
#include "braze/ops/reduction.h"
#include "braze/runtime/compiled_kernel.h"
#include "pointwise/pointwise_cases.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using pointwise::PointwiseParams;
using ::testing::HasSubstr;

class PointwiseCaseTest : public ::testing::TestWithParam<std::string> {};

PointwiseParams heuristicsFor(const test::PointwiseCase& c, const Fusion& fusion) {
  const std::vector<EvaluatorArgument> args = test::makeSuiteArguments(test::asSuiteCase(c), 1);
  const SchedulerRuntimeInfo info = test::runtimeInfoOf(c, args);
  EXPECT_EQ(pointwise::canScheduleCompileTime(fusion), std::nullopt);
  EXPECT_EQ(pointwise::canScheduleRunTime(fusion, info), std::nullopt);
  return pointwise::computeHeuristics(fusion, info);
}

TEST_P(PointwiseCaseTest, DecisionsAreAsExpected) {
  const test::PointwiseCase& c = test::findPointwiseCase(GetParam());
  const std::unique_ptr<Fusion> fusion = c.build();
  const PointwiseParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.break_point, c.break_point) << params;
  EXPECT_EQ(params.vector_width, c.vector_width) << params;
  EXPECT_EQ(params.unroll, c.unroll) << params;
  // 1D blocks are at least a warp; 2D blocks of short rows stack rows to a block of 128.
  const int64_t block_threads = params.threads_per_block * params.rows_per_block;
  EXPECT_GE(block_threads, 32) << params;
  EXPECT_LE(block_threads, 128) << params;
  if (params.break_point == 0) {
    EXPECT_EQ(params.rows_per_block, 1) << params;
    EXPECT_EQ(params.row_unroll, 1) << params;
    EXPECT_FALSE(params.rows_on_x) << params;
  }
  EXPECT_GE(params.blocks, 1) << params;
  EXPECT_FALSE(params.grid_stride) << params;
}

TEST_P(PointwiseCaseTest, ParamsRoundTripThroughBytes) {
  const test::PointwiseCase& c = test::findPointwiseCase(GetParam());
  const std::unique_ptr<Fusion> fusion = c.build();
  const PointwiseParams params = heuristicsFor(c, *fusion);
  const std::vector<uint8_t> bytes = pointwise::encodeParams(params);
  EXPECT_EQ(pointwise::decodeParams(bytes), params);
  EXPECT_EQ(pointwise::hashParams(pointwise::decodeParams(bytes)), pointwise::hashParams(params));
}

TEST_P(PointwiseCaseTest, ScheduledFusionCompilesForSm90) {
  const test::PointwiseCase& c = test::findPointwiseCase(GetParam());
  const std::unique_ptr<Fusion> fusion = c.build();
  const PointwiseParams params = heuristicsFor(c, *fusion);
  pointwise::schedule(*fusion, params);
  const GeneratedKernel kernel = generateCuda(*fusion);
  if (params.vector_width > 1) {
    EXPECT_THAT(kernel.source, HasSubstr("braze::vectorCopy<")) << kernel.source;
  }
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
}

INSTANTIATE_TEST_SUITE_P(Cases, PointwiseCaseTest, ::testing::ValuesIn(test::pointwiseCaseNames()),
                         [](const auto& info) { return info.param; });

TEST(PointwiseParamsTest, PrintsEveryField) {
  PointwiseParams params;
  params.break_point = 1;
  params.vector_width = 4;
  params.grid_stride = true;
  EXPECT_EQ(pointwise::toString(params),
            "pointwise{reference_output=0, break_point=1, vector_width=4, unroll=1, "
            "threads_per_block=128, blocks=1, grid_stride=true, rows_per_block=1, row_unroll=1, "
            "rows_on_x=false}");
}

TEST(PointwiseParamsTest, DifferentParamsHashDifferently) {
  PointwiseParams a;
  PointwiseParams b;
  b.unroll = 2;
  EXPECT_NE(a, b);
  EXPECT_NE(pointwise::hashParams(a), pointwise::hashParams(b));
}

TEST(PointwiseParamsTest, DecodeRefusesForeignBytes) {
  const std::vector<uint8_t> foreign = {'X', 'Y', 'Z', 'W', 1};
  EXPECT_THAT([&] { pointwise::decodeParams(foreign); },
              ::testing::ThrowsMessage<Error>(HasSubstr("belong to another scheduler")));
  std::vector<uint8_t> bytes = pointwise::encodeParams({});
  bytes[4] = 99;
  EXPECT_THAT([&] { pointwise::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected format version 2, found 99")));
  bytes = pointwise::encodeParams({});
  bytes.pop_back();
  EXPECT_THAT([&] { pointwise::decodeParams(bytes); },
              ::testing::ThrowsMessage<Error>(HasSubstr("truncated or padded")));
}

TEST(PointwiseDecisionTest, ShortRowsStackRowsAndUnrollOverThem) {
  // 48 bf16 per row: 6 vectors of 8, so 8 threads per row and 16 rows per block of 128; no
  // vector beyond the first along the row, so the unroll goes over rows (small device: 2 SMs).
  const test::PointwiseCase& c = test::findPointwiseCase("bias_short_rows_bf16");
  const std::unique_ptr<Fusion> fusion = c.build();
  const PointwiseParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.threads_per_block, 8) << params;
  EXPECT_EQ(params.rows_per_block, 16) << params;
  EXPECT_EQ(params.unroll, 1) << params;
  EXPECT_EQ(params.row_unroll, 4) << params;
  EXPECT_FALSE(params.rows_on_x) << params;
}

TEST(PointwiseDecisionTest, MoreRowBlocksThanGridYPutsRowsOnX) {
  // 65537 rows of 257 floats: 128 threads, two vectors each along the row, one row per block:
  // 65537 row blocks exceed gridDim.y, so rows go to gridDim.x. Before, such fusions took the
  // 1D loop, which reads a broadcast input through a remainder of the flat index per element.
  const test::PointwiseCase& c = test::findPointwiseCase("row_scale_many_rows");
  const std::unique_ptr<Fusion> fusion = c.build();
  const PointwiseParams params = heuristicsFor(c, *fusion);
  EXPECT_EQ(params.break_point, 1) << params;
  EXPECT_EQ(params.threads_per_block, 128) << params;
  EXPECT_EQ(params.rows_per_block, 1) << params;
  EXPECT_EQ(params.unroll, 2) << params;
  EXPECT_EQ(params.row_unroll, 1) << params;
  EXPECT_TRUE(params.rows_on_x) << params;
  pointwise::schedule(*fusion, params);
  const GeneratedKernel kernel = generateCuda(*fusion);
  // The scale is read by its row index: no remainder of the flat index in the kernel.
  const std::string body = kernel.source.substr(kernel.source.find("__global__"));
  EXPECT_THAT(body, ::testing::Not(HasSubstr("%"))) << body;
  EXPECT_THAT(body, HasSubstr("blockIdx.y")) << body;
}

TEST(PointwiseDecisionTest, InputsEveryRowReadsUnrollOverRows) {
  // x * w + b with bf16 rows of 4096: each thread loads its w and b vectors once for four rows
  // instead of once per row.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(fusion, 1, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::BFloat16);
  fusion.addOutput(add(mul(x, broadcast(w, {true, false})), broadcast(b, {true, false})));
  const SchedulerRuntimeInfo info = contiguousRuntimeInfo(fusion, {{32768, 4096}, {4096}, {4096}});
  const PointwiseParams params = pointwise::computeHeuristics(fusion, info);
  EXPECT_EQ(params.break_point, 1) << params;
  EXPECT_EQ(params.row_unroll, 4) << params;
  EXPECT_EQ(params.unroll, 1) << params;
}

std::optional<std::string> refusal(const std::function<void(Fusion&)>& body) {
  Fusion fusion;
  body(fusion);
  return pointwise::canScheduleCompileTime(fusion);
}

TEST(PointwiseRefusalTest, EachRefusedOpHasItsReason) {
  EXPECT_THAT(refusal([](Fusion& f) { f.addOutput(sum(makeSymbolicTensor(f, 2), {1})); }).value(),
              HasSubstr("reduction scheduler"));
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(matmul(makeSymbolicTensor(f, 2), makeSymbolicTensor(f, 2)));
              }).value(),
              HasSubstr("matmul and linear need a tiled contraction"));
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(reshape(makeInputTensor(f, {.sizes = {4, 6}}), {int64_t{24}}));
              }).value(),
              HasSubstr("reshape regroups dims"));
  // Slice, pad and cat read fusion inputs at shifted positions; a tensor computed in the
  // kernel would be computed at the reader's positions instead of its own.
  EXPECT_THAT(
      refusal([](Fusion& f) {
        f.addOutput(slice(neg(makeSymbolicTensor(f, 1)), 0, int64_t{1}, std::nullopt, int64_t{1}));
      }).value(),
      HasSubstr("slice reads T1 at shifted positions"));
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(pad(neg(makeSymbolicTensor(f, 1)), {int64_t{1}, int64_t{1}}, 0.0));
              }).value(),
              HasSubstr("its producer must be another kernel"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 1);
                f.addOutput(cat({x, neg(makeSymbolicTensor(f, 1))}, 0));
              }).value(),
              HasSubstr("cat reads"));
  EXPECT_FALSE(refusal([](Fusion& f) {
                 f.addOutput(cat({makeSymbolicTensor(f, 1), makeSymbolicTensor(f, 1)}, 0));
               }).has_value());
  // Every resized output must feed the reference, which reaches its dims only that way.
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(exp(x));
                f.addOutput(pad(x, {int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}}, 0.0));
                f.addOutput(add(exp(x), 1.0));
              }).value_or("accepted"),
              HasSubstr("does not feed the reference"));
}

// The indexed input is read at any position by any thread: it must come from global memory
// written before the kernel. Indices computed in the kernel are fine (read where computed).
TEST(PointwiseRefusalTest, IndexedTensorsComputedInTheFusion) {
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                TensorView* index = makeInputTensor(f, {.dtype = DataType::Int64, .sizes = {-1}});
                f.addOutput(index_select(exp(x), 0, index));
              }).value(),
              HasSubstr("index_select reads T2 at data-dependent positions, and T2 is computed in "
                        "this fusion"));
  EXPECT_THAT(
      refusal([](Fusion& f) {
        TensorView* x = makeSymbolicTensor(f, 2);
        TensorView* index = makeInputTensor(f, {.dtype = DataType::Int64, .sizes = {-1, -1}});
        f.addOutput(gather(neg(x), 1, index));
      }).value(),
      HasSubstr("gather reads T2 at data-dependent positions"));
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(select(relu(makeSymbolicTensor(f, 2)), 0, int64_t{1}));
              }).value(),
              HasSubstr("select reads T1 at data-dependent positions"));
  EXPECT_EQ(refusal([](Fusion& f) {
              TensorView* x = makeSymbolicTensor(f, 2);
              TensorView* index = makeInputTensor(f, {.dtype = DataType::Int64, .sizes = {-1}});
              f.addOutput(exp(index_select(x, 0, add(index, 1))));
            }),
            std::nullopt);
}

// Two separate lookups of one table as two outputs: the second is reached only through its
// index or its table, neither of which pairs all its dims.
TEST(PointwiseRefusalTest, IndexSelectThatDoesNotFeedTheReference) {
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* tokens = makeSymbolicTensor(f, 2, DataType::Int64);
                TensorView* weight = makeSymbolicTensor(f, 2);
                f.addOutput(embedding_fwd(tokens, weight));
                f.addOutput(mul(embedding_fwd(tokens, weight), 2.0));
              }).value(),
              HasSubstr("the index_select output T3 does not feed the reference output T2"));
}

TEST(PointwiseRefusalTest, ShapesThatOneLoopCannotCover) {
  EXPECT_THAT(refusal([](Fusion&) {}).value(), HasSubstr("no outputs"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(exp(x));
                f.addOutput(neg(makeSymbolicTensor(f, 1)));
              }).value(),
              HasSubstr("different ranks"));
  EXPECT_THAT(refusal([](Fusion& f) { f.addOutput(makeSymbolicTensor(f, 1)); }).value(),
              HasSubstr("is also an input"));
}

TEST(PointwiseRefusalTest, RunTimeReasons) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeInputTensor(fusion, {.sizes = {1, -1}});
  fusion.addOutput(add(x, bias));
  SchedulerRuntimeInfo info;
  EXPECT_THAT(pointwise::canScheduleRunTime(fusion, info).value(),
              HasSubstr("expected arguments for 2 inputs, found 0"));
  info = contiguousRuntimeInfo(fusion, {{4, 8}, {8}});
  EXPECT_THAT(pointwise::canScheduleRunTime(fusion, info).value(),
              HasSubstr("has rank 2 but its argument has 1 sizes"));
  info = contiguousRuntimeInfo(fusion, {{4, 8}, {3, 8}});
  EXPECT_THAT(pointwise::canScheduleRunTime(fusion, info).value(),
              HasSubstr("declared broadcast (size 1) but its argument has size 3"));
  Fusion fixed;
  fixed.addOutput(neg(makeInputTensor(fixed, {.sizes = {4, 8}})));
  info = contiguousRuntimeInfo(fixed, {{4, 9}});
  EXPECT_THAT(pointwise::canScheduleRunTime(fixed, info).value(),
              HasSubstr("contradict the fusion"));
  Fusion scaled;
  TensorView* y = makeSymbolicTensor(scaled, 1);
  scaled.addOutput(mul(y, makeInputScalar(scaled, DataType::Float32)));
  info = contiguousRuntimeInfo(scaled, {{8}}, {ScalarValue(2.0)});
  info.arguments[1] = info.arguments[0];
  EXPECT_THAT(pointwise::canScheduleRunTime(scaled, info).value(),
              HasSubstr("input 1 (" + scaled.inputs()[1]->name() +
                        ") is a scalar but its argument is a tensor"));
  info = contiguousRuntimeInfo(fusion, {{4, 8}, {1, 8}});
  EXPECT_EQ(pointwise::canScheduleRunTime(fusion, info), std::nullopt);
}

TEST(PointwiseRefusalTest, EmptyIndexedDim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  fusion.addOutput(index_select(x, 0, index));
  EXPECT_THAT(
      pointwise::canScheduleRunTime(fusion, contiguousRuntimeInfo(fusion, {{0, 8}, {3}})).value(),
      HasSubstr("index_select reads dim 0 of T0, which has size 0 for these arguments, "
                "while its output has 24 elements: every index is out of range"));
  // Nothing is read when there are no indices.
  EXPECT_EQ(pointwise::canScheduleRunTime(fusion, contiguousRuntimeInfo(fusion, {{0, 8}, {0}})),
            std::nullopt);
  EXPECT_EQ(pointwise::canScheduleRunTime(fusion, contiguousRuntimeInfo(fusion, {{5, 8}, {3}})),
            std::nullopt);
}

// Kernels cannot raise the evaluator's out-of-range error: a position is counted from the end
// when negative and then clamped into the dim, so the read never leaves the tensor.
TEST(PointwiseScheduleTest, IndexedReadsAreClampedIntoTheDim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  fusion.addOutput(index_select(x, 0, index));
  pointwise::schedule(fusion, pointwise::computeHeuristics(
                                  fusion, contiguousRuntimeInfo(fusion, {{16, 64}, {40}})));
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_THAT(kernel.source, HasSubstr("braze::min(braze::max(")) << kernel.source;
  EXPECT_THAT(kernel.source, HasSubstr("T0.size[0] - 1)")) << kernel.source;
  EXPECT_NO_THROW(CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                          {.arch = driver::GpuArch{9, 0, false}}));
}

TEST(PointwiseScheduleTest, GridStrideCompiles) {
  Fusion fusion;
  fusion.addOutput(mul(makeSymbolicTensor(fusion, 1), 2.0));
  PointwiseParams params;
  params.grid_stride = true;
  params.blocks = 7;
  params.vector_width = 4;
  pointwise::schedule(fusion, params);
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_NO_THROW(CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                          {.arch = driver::GpuArch{9, 0, false}}));
}

TEST(PointwiseScheduleTest, RefusesParamsOfAnotherFusion) {
  Fusion fusion;
  fusion.addOutput(mul(makeSymbolicTensor(fusion, 1), 2.0));
  PointwiseParams params;
  params.reference_output = 3;
  EXPECT_THAT([&] { pointwise::schedule(fusion, params); },
              ::testing::ThrowsMessage<Error>(HasSubstr("reference_output 3 is not an output")));
}

}  // namespace
}  // namespace braze
