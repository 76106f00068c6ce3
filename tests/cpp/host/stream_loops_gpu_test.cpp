// Stream-parallel fusions on a GPU (every test skips itself without one): each iteration's
// kernels on the loop's pool streams, compared with the reference evaluator on fresh random
// inputs with the pool poisoned first (an element never written shows as NaN); CUDA-graph
// replay of the loops (edges per stream) on moved inputs and a new signature.

#include <gtest/gtest.h>

#include <cstring>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/primary_context.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "host/stream_fusions.h"
#include "support/cache_reference_run.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

class StreamLoopsGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  }
};

ExecutorCacheOptions shipped() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

// Runs `cache` on device copies of `inputs` on a stream of its own, after leaving poison
// (0xFF bytes) in that stream's pool, and checks every output against the reference.
void expectMatchesReference(FusionExecutorCache& cache, const std::vector<HostTensor>& inputs,
                            bool cuda_graph = false) {
  driver::makePrimaryContextCurrent(0);  // the first test of a process has no context yet
  CUstream stream = nullptr;
  BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  RunOptions options;
  options.stream = stream;
  options.cuda_graph = cuda_graph;
  // Drops its tensors before returning: they are freed in the order of `stream`.
  test::expectCacheMatchesReference(cache, inputs, options);
  BRAZE_CU(streamDestroy, stream);
}

// The CPU tier's cases (stream_loops_test.cpp), one test each.
TEST_F(StreamLoopsGpuTest, OneLoopWithAShorterLastSlice) {
  test::RandomTensors random(21);
  FusionExecutorCache cache(test::streamedPointwise(4), shipped());
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {1000, 1024})});
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {10, 33})});
}

TEST_F(StreamLoopsGpuTest, TwoLoopsSplitByAnUnstreamedMiddle) {
  test::RandomTensors random(25);
  FusionExecutorCache cache(test::streamedPointwise(8, /*stream_middle=*/false), shipped());
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {999, 512})});
}

TEST_F(StreamLoopsGpuTest, TwoKernelsInOneLoopShareARing) {
  test::RandomTensors random(26);
  FusionExecutorCache cache(test::streamedTwoKernels(), shipped());
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {37, 4096})});
}

TEST_F(StreamLoopsGpuTest, AReductionInsideALoopSlicedByLength) {
  test::RandomTensors random(27);
  FusionExecutorCache cache(test::streamedSoftmax(128), shipped());
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {1000, 1000})});
}

TEST_F(StreamLoopsGpuTest, AMatmulWithAStreamParallelM) {
  test::RandomTensors random(28);
  FusionExecutorCache cache(test::streamedMatmul(4), shipped());
  expectMatchesReference(cache, {random.uniform(DataType::BFloat16, {1024, 256}),
                                 random.uniform(DataType::BFloat16, {256, 512})});
}

TEST_F(StreamLoopsGpuTest, AnOutputWrittenIntoItsInputSliceBySlice) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* step = mul(g, 0.1);
  TensorView* updated = sub(p, step);
  fusion->addOutput(updated);
  fusion->aliasOutputToInput(updated, p);
  for (TensorView* tv : {step, updated}) test::streamOver(tv, 0, 4);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(23);
  const HostTensor p_value = random.uniform(DataType::Float32, {1000, 512});
  const HostTensor g_value = random.uniform(DataType::Float32, {1000, 512});
  const HostTensor expected = evaluateFusionTensors(cache.fusion(), {p_value, g_value})[0];
  DeviceTensor p_device = DeviceTensor::fromHost(p_value);
  cache.run({p_device, DeviceTensor::fromHost(g_value)});
  BRAZE_CU(ctxSynchronize);
  EXPECT_TRUE(test::isClose(p_device.toHost(), expected, test::toleranceFor(DataType::Float32)));
}

// Host tensors in: the program copies each iteration's slice on its pool stream (pageable
// memory here, so correct but not overlapped), runs the slice's kernels, and the results come
// back as host tensors; a second call is a plan hit that copies them back too.
TEST_F(StreamLoopsGpuTest, HostInputsAreCopiedSliceBySlice) {
  test::RandomTensors random(24);
  FusionExecutorCache cache(test::streamedSoftmax(100), shipped());
  for (int run = 0; run < 2; ++run) {
    const HostTensor x = random.uniform(DataType::Float32, {1000, 1000});
    const std::vector<FusionArgument> outputs = cache.run({x});
    EXPECT_TRUE(test::isClose(std::get<HostTensor>(outputs[0]),
                              evaluateFusionTensors(cache.fusion(), {x})[0],
                              test::toleranceFor(DataType::Float32)));
  }
  EXPECT_EQ(cache.counters().hits, 1);
  EXPECT_NE(cache.lastRuntime()->program().toString().find("  copy %"), std::string::npos)
      << cache.lastRuntime()->program().toString();
}

TEST_F(StreamLoopsGpuTest, AGraphOfTheLoopsReplaysOnMovedInputsAndNewSizes) {
  test::RandomTensors random(22);
  FusionExecutorCache cache(test::streamedTwoKernels(), shipped());
  for (int run = 0; run < 3; ++run)
    expectMatchesReference(cache, {random.uniform(DataType::Float32, {16, 2048})}, true);
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {9, 2048})}, true);
  FusionExecutorCache softmax(test::streamedSoftmax(64), shipped());
  for (int run = 0; run < 2; ++run)
    expectMatchesReference(softmax, {random.uniform(DataType::Float32, {500, 1024})}, true);
}

// Event timestamps (RunOptions::trace): with a page-locked host input, each slice is copied and
// computed on its pool stream, and the copies of later slices run while earlier slices' kernels
// compute on the other streams.
TEST_F(StreamLoopsGpuTest, CopiesOfLaterSlicesOverlapKernelsOfEarlierOnes) {
  constexpr int64_t kRows = 4096;
  constexpr int64_t kCols = 4096;
  constexpr int64_t kSlices = 8;
  const size_t bytes = static_cast<size_t>(kRows * kCols) * sizeof(float);
  driver::makePrimaryContextCurrent(0);
  void* pinned = nullptr;
  BRAZE_CU(memHostAlloc, &pinned, bytes, 0);
  std::shared_ptr<void> owner(pinned, [](void* p) { driver::driverApi().memFreeHost(p); });
  const HostTensor random = test::RandomTensors(29).uniform(DataType::Float32, {kRows, kCols});
  std::memcpy(pinned, random.data(), bytes);
  const HostTensor x =
      HostTensor::borrow(DataType::Float32, {kRows, kCols}, {kCols, 1}, pinned, owner);
  // Kernels shorter than the copies (8 sin steps; deeper chains take NVRTC minutes): the
  // copy engine stays busy, and each slice's kernel runs while the next slice is copied.
  FusionExecutorCache cache(test::streamedRowSumsOfWork(kSlices, 8), shipped());
  RunOptions options;
  cache.run({x}, options);  // compiles
  RunTrace trace;
  options.trace = &trace;
  cache.run({x}, options);

  double launch_us = 0;
  int copies = 0;
  int launches = 0;
  for (const RunTrace::Span& span : trace.spans) {
    EXPECT_LE(span.start_us, span.end_us);
    EXPECT_GE(span.stream, 0) << "every step of the loop runs on a pool stream";
    if (span.kind == RunTrace::Span::Kind::Copy) {
      EXPECT_EQ(span.input, 0);
      EXPECT_EQ(span.stream, copies % options.stream_pool) << "iteration " << copies;
      ++copies;
    } else {
      launch_us += span.end_us - span.start_us;
      ++launches;
    }
  }
  EXPECT_EQ(copies, kSlices);
  EXPECT_EQ(launches, kSlices);
  // Every kernel but the last's can run under a later slice's copy: ask for half their time.
  const double overlap_us =
      trace.overlapMicroseconds(RunTrace::Span::Kind::Launch, RunTrace::Span::Kind::Copy);
  EXPECT_GT(overlap_us, launch_us / 2) << "kernels " << launch_us << " us, of which " << overlap_us
                                       << " us overlap copies on other streams";
}
}  // namespace
}  // namespace braze
