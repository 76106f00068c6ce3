// The scan scheduler without a GPU: what it accepts and why it refuses, its decisions, its
// params as bytes, and the kernels of its schedules compiled by NVRTC for sm_90; lowering's
// errors for scans scheduled in ways one serial loop cannot run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/sched/inlining.h"
#include "braze/sched/transform_propagation.h"
#include "scan_scheduler.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;
using ::testing::HasSubstr;
using ::testing::Not;

std::optional<std::string> refusal(const std::function<void(Fusion&)>& body) {
  Fusion fusion;
  body(fusion);
  return scan::canScheduleCompileTime(fusion);
}

// softplus-like math around scans along `dim` of a 3-D input, three outputs.
std::unique_ptr<Fusion> scansAround(int64_t dim, DataType dtype = DataType::Float32) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 3, dtype);
  TensorView* bias = makeSymbolicTensor(*fusion, 1, dtype);
  TensorView* shifted = add(x, broadcast(bias, {true, true, false}));
  fusion->addOutput(mul(cumsum(exp(shifted), dim), 0.5));
  fusion->addOutput(cummax(shifted, dim));
  fusion->addOutput(cumprod(x, dim));
  return fusion;
}

scan::ScanParams heuristicsFor(const Fusion& fusion,
                               const std::vector<std::vector<int64_t>>& sizes) {
  return scan::computeHeuristics(fusion, contiguousRuntimeInfo(fusion, sizes));
}

TEST(ScanSchedulerTest, AcceptsScansWithElementwiseOpsAround) {
  for (int64_t dim : {0, 1, 2}) {
    EXPECT_EQ(scan::canScheduleCompileTime(*scansAround(dim)), std::nullopt) << dim;
  }
}

TEST(ScanSchedulerTest, DecidesTheScanDimAndNarrowsBlocksForFewLines) {
  const std::unique_ptr<Fusion> fusion = scansAround(1);
  scan::ScanParams params = heuristicsFor(*fusion, {{40, 300, 50}, {50}});
  EXPECT_EQ(params.reference_output, 0);
  EXPECT_EQ(params.scan_dim, 1);
  EXPECT_EQ(params.threads_per_block, 128);
  params = heuristicsFor(*fusion, {{2, 1000, 20}, {20}});  // 40 lines
  EXPECT_EQ(params.threads_per_block, 64);
  params = heuristicsFor(*fusion, {{1, 1000, 3}, {3}});  // never below a warp
  EXPECT_EQ(params.threads_per_block, 32);
}

TEST(ScanSchedulerTest, ParamsRoundTripThroughBytes) {
  scan::ScanParams params;
  params.reference_output = 2;
  params.scan_dim = 1;
  params.threads_per_block = 64;
  EXPECT_EQ(scan::decodeParams(scan::encodeParams(params)), params);
  EXPECT_EQ(scan::toString(params), "scan{reference_output=2, scan_dim=1, threads_per_block=64}");
  std::vector<uint8_t> bytes = scan::encodeParams(params);
  bytes[0] = 'X';
  EXPECT_TRUE(throwsError([&] { scan::decodeParams(bytes); }, {"BZSC"}));
}

TEST(ScanSchedulerTest, ScheduledKernelsCompileForSm90) {
  for (DataType dtype : {DataType::Float32, DataType::Float16, DataType::Float64}) {
    for (int64_t dim : {0, 1, 2}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " " + std::string(toString(dtype)));
      const std::unique_ptr<Fusion> fusion = scansAround(dim, dtype);
      scan::schedule(*fusion, heuristicsFor(*fusion, {{7, 9, 11}, {11}}));
      const GeneratedKernel kernel = generateCuda(*fusion);
      // Three running values, one per scan, each carried by the one serial loop.
      EXPECT_THAT(kernel.source, HasSubstr(" scan")) << kernel.source;
      EXPECT_THAT(kernel.source, HasSubstr("braze::maximum(")) << kernel.source;
      const CompiledKernel compiled = CompiledKernel::compile(
          kernel.source, kernel.kernel_name, {.arch = driver::GpuArch{9, 0, false}});
      EXPECT_FALSE(compiled.cubin().empty());
    }
  }
}

TEST(ScanSchedulerTest, IndicesRunInTheScanKernel) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float16);
  const ScanWithIndices result = cummaxWithIndices(x, 0);
  fusion.addOutput(result.values);
  fusion.addOutput(result.indices);
  ASSERT_EQ(scan::canScheduleCompileTime(fusion), std::nullopt);
  scan::schedule(fusion, heuristicsFor(fusion, {{50, 70}}));
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_THAT(kernel.source, HasSubstr("long long scan")) << kernel.source;
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
}

TEST(ScanSchedulerTest, IntegerAndBoolScansCompile) {
  Fusion fusion;
  TensorView* i = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1, -1}});
  TensorView* b = gt(i, 0);
  fusion.addOutput(cummax(b, 1));
  fusion.addOutput(cummin(b, 1));
  fusion.addOutput(cumsum(b, 1));
  fusion.addOutput(cumprod(i, 1, DataType::Int32));
  fusion.addOutput(cummin(i, 1));
  ASSERT_EQ(scan::canScheduleCompileTime(fusion), std::nullopt);
  scan::schedule(fusion, heuristicsFor(fusion, {{50, 70}}));
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_THAT(kernel.source, HasSubstr("bool scan")) << kernel.source;
  EXPECT_THAT(kernel.source, HasSubstr("int scan")) << kernel.source;
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
}

TEST(ScanSchedulerTest, OneLineIsOneThread) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  fusion.addOutput(cumsum(x, 0));
  ASSERT_EQ(scan::canScheduleCompileTime(fusion), std::nullopt);
  scan::schedule(fusion, heuristicsFor(fusion, {{100}}));
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_THAT(kernel.source, HasSubstr("long long scan")) << kernel.source;
  EXPECT_THAT(kernel.source, Not(HasSubstr("threadIdx"))) << kernel.source;
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
}

TEST(ScanSchedulerTest, RefusesWhatOneSerialLoopCannotCover) {
  EXPECT_THAT(refusal([](Fusion& f) { f.addOutput(exp(makeSymbolicTensor(f, 2))); }).value(),
              HasSubstr("no scan"));
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(sum(cumsum(makeSymbolicTensor(f, 2), 1), {1}));
              }).value(),
              HasSubstr("reductions"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(cumsum(x, 0));
                f.addOutput(cumsum(x, 1));
              }).value(),
              HasSubstr("one serial loop per thread covers one dim"));
  EXPECT_THAT(refusal([](Fusion& f) {
                TensorView* x = makeSymbolicTensor(f, 2);
                f.addOutput(cumsum(x, 0));
                f.addOutput(neg(makeSymbolicTensor(f, 1)));
              }).value(),
              HasSubstr("different ranks"));
  EXPECT_THAT(refusal([](Fusion& f) {
                f.addOutput(cumsum(permute(makeSymbolicTensor(f, 2), {1, 0}), 0));
              }).value(),
              HasSubstr("permute is not supported"));
}

TEST(ScanSchedulerTest, RunTimeRefusesArgumentsThatContradictTheFusion) {
  const std::unique_ptr<Fusion> fusion = scansAround(1);
  EXPECT_THAT(
      scan::canScheduleRunTime(*fusion, contiguousRuntimeInfo(*fusion, {{4, 5}, {6}})).value_or(""),
      HasSubstr("has rank 3 but its argument has 2 sizes"));
  EXPECT_EQ(scan::canScheduleRunTime(*fusion, contiguousRuntimeInfo(*fusion, {{4, 5, 6}, {6}})),
            std::nullopt);
  Fusion fixed;
  fixed.addOutput(cumsum(makeInputTensor(fixed, {.sizes = {4, 8}}), 1));
  EXPECT_THAT(scan::canScheduleRunTime(fixed, contiguousRuntimeInfo(fixed, {{4, 9}})).value_or(""),
              HasSubstr("contradict the fusion"));
}

// ---- lowering's checks of hand-made scan schedules ----

// cumsum over the rows of a 2-D input, one block per row: the scan axis (1) left for a test
// to schedule.
TensorView* rowCumsumPerBlock(Fusion& fusion) {
  TensorView* y = cumsum(makeSymbolicTensor(fusion, 2), 1);
  fusion.addOutput(y);
  y->parallelize(0, ParallelType::BIDx);
  return y;
}

TEST(ScanLoweringTest, RefusesAReversedScanAxis) {
  Fusion fusion;
  TensorView* y = rowCumsumPerBlock(fusion);
  y->loopAxis(1)->setReversed(true);
  EXPECT_TRUE(throwsError([&] { generateCuda(fusion); },
                          {"scan axis", y->name(), "runs reversed", "must run forwards"}));
}

TEST(ScanLoweringTest, RefusesAParallelScanAxis) {
  Fusion fusion;
  TensorView* y = rowCumsumPerBlock(fusion);
  y->parallelize(1, ParallelType::TIDx);
  EXPECT_TRUE(throwsError([&] { generateCuda(fusion); },
                          {"scan axis", y->name(), "TIDx", "must stay a serial loop"}));
}

TEST(ScanLoweringTest, RefusesASplitScanAxis) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = cummin(x, 1);
  fusion.addOutput(y);
  y->split(1, 4);
  EXPECT_TRUE(throwsError([&] { generateCuda(fusion); },
                          {"cummin", y->name(), "split or merged", "untransformed"}));
}

TEST(ScanLoweringTest, RefusesASerialLoopInsideTheScanLoop) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = cumprod(x, 0);
  fusion.addOutput(y);
  EXPECT_TRUE(throwsError([&] { generateCuda(fusion); }, {"serial loop inside the scan axis 0",
                                                          "reorder the scan axis innermost"}));
}

TEST(ScanLoweringTest, AnUnscheduledInnermostScanCompiles) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  fusion.addOutput(cumsum(x, 1));
  const GeneratedKernel kernel = generateCuda(fusion);
  EXPECT_THAT(kernel.source, HasSubstr("float scan")) << kernel.source;
  const CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                          {.arch = driver::GpuArch{9, 0, false}});
  EXPECT_FALSE(compiled.cubin().empty());
}

}  // namespace
}  // namespace braze
