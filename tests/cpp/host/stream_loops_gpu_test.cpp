// Stream-parallel fusions on a GPU (every test skips itself without one): each iteration's
// kernels on the loop's pool streams, compared with the reference evaluator on fresh random
// inputs with the pool poisoned first (an element never written shows as NaN); CUDA-graph
// replay of the loops (edges per stream) on moved inputs and a new signature.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/pinned_host_memory.h"
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
  std::unique_ptr<Fusion> fusion = test::streamedInPlaceUpdate(4);
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
// memory here, so correct but not overlapped), runs the slice's kernels, and copies the slice's
// results back into page-locked host buffers; a second call is a plan hit that does the same.
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
  const std::string program = cache.lastRuntime()->program().toString();
  EXPECT_NE(program.find("  copy_to_device %"), std::string::npos) << program;
  EXPECT_NE(program.find("  copy_to_host %"), std::string::npos) << program;
}

// Pageable host inputs large enough to stage (runtime/pageable_staging.h): threads copy their
// slices into page-locked memory ahead of the copies to the device; the results are the same,
// for an input sliced in a loop and for one also read whole outside it.
TEST_F(StreamLoopsGpuTest, PageableInputsAreStagedThroughPageLockedMemory) {
  test::RandomTensors random(54);
  FusionExecutorCache sliced(test::streamedPointwise(8), shipped());
  for (int run = 0; run < 2; ++run) {
    const HostTensor x = random.uniform(DataType::Float32, {4099, 1024});  // 16 MiB, pageable
    EXPECT_TRUE(test::isClose(std::get<HostTensor>(sliced.run({x})[0]),
                              evaluateFusionTensors(sliced.fusion(), {x})[0],
                              test::toleranceFor(DataType::Float32)));
  }
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  fusion->addOutput(y);
  fusion->addOutput(sum(x, {0}));  // reads every row: x is copied whole first
  test::streamOver(y, 0, 4);
  FusionExecutorCache whole(std::move(fusion), shipped());
  const HostTensor input = random.uniform(DataType::Float32, {2048, 1024});  // 8 MiB
  const std::vector<FusionArgument> outputs = whole.run({input});
  const std::vector<HostTensor> expected = evaluateFusionTensors(whole.fusion(), {input});
  EXPECT_TRUE(test::isClose(std::get<HostTensor>(outputs[0]), expected[0],
                            test::toleranceFor(DataType::Float32)));
  // Column sums of 2048 rows in another order than the reference's: float32 rounding of a
  // 2048-term sum (an H200 run: 1 of 1024 sums off by 1.9e-5 at 0.72).
  EXPECT_TRUE(
      test::isClose(std::get<HostTensor>(outputs[1]), expected[1], test::Tolerance{1e-4, 1e-4}));
}

// A page-locked input of `rows` x `cols` random floats (seed `seed`).
HostTensor pinnedRandom(int64_t rows, int64_t cols, uint64_t seed) {
  driver::makePrimaryContextCurrent(0);
  const HostTensor random = test::RandomTensors(seed).uniform(DataType::Float32, {rows, cols});
  const size_t bytes = static_cast<size_t>(rows * cols) * sizeof(float);
  std::shared_ptr<void> pinned = driver::allocatePinnedHost(bytes);
  std::memcpy(pinned.get(), random.data(), bytes);
  return HostTensor::borrow(DataType::Float32, {rows, cols}, {cols, 1}, pinned.get(), pinned);
}

// Poisons a host result the run returned (its page-locked block goes back to the pool and
// serves the next run's result of that size): an element the next run does not write shows.
void poison(const HostTensor& result) {
  std::memset(result.data(), 0xFF,
              static_cast<size_t>(result.numel() * sizeInBytes(result.dtype())));
}

// CUDA-graph replay of a plan that copies host inputs in and results back: the graph's copy
// nodes follow inputs that move (fresh page-locked tensors each call), results are right each
// time; a pageable input runs directly (a logged reason) and is right too; a new size is a new
// graph.
TEST_F(StreamLoopsGpuTest, AGraphCopiesPinnedInputsInAndResultsBack) {
  FusionExecutorCache cache(test::streamedPointwise(4), shipped());
  RunOptions options;
  options.cuda_graph = true;
  std::vector<HostTensor> kept;  // so that each run's input is at a new address
  for (int run = 0; run < 3; ++run) {
    const HostTensor x = pinnedRandom(1000, 512, 40 + static_cast<uint64_t>(run));
    kept.push_back(x);
    const HostTensor result = std::get<HostTensor>(cache.run({x}, options)[0]);
    EXPECT_TRUE(driver::isPinnedHost(result.data()));
    EXPECT_TRUE(test::isClose(result, evaluateFusionTensors(cache.fusion(), {x})[0],
                              test::toleranceFor(DataType::Float32)))
        << "graph run " << run;
    poison(result);
  }
  const HostTensor pageable = test::RandomTensors(44).uniform(DataType::Float32, {1000, 512});
  EXPECT_FALSE(driver::isPinnedHost(pageable.data()));
  EXPECT_TRUE(test::isClose(std::get<HostTensor>(cache.run({pageable}, options)[0]),
                            evaluateFusionTensors(cache.fusion(), {pageable})[0],
                            test::toleranceFor(DataType::Float32)));
  const HostTensor other_size = pinnedRandom(77, 512, 45);
  EXPECT_TRUE(test::isClose(std::get<HostTensor>(cache.run({other_size}, options)[0]),
                            evaluateFusionTensors(cache.fusion(), {other_size})[0],
                            test::toleranceFor(DataType::Float32)));
  EXPECT_EQ(cache.counters().hits, 3) << "the second and third graph runs, and the pageable one";
}

// An optimizer-style update of host-resident tensors (p -= 0.1 * g, written into p): each
// slice of p and g is copied in, updated and copied back into p's slice on the loop's streams,
// directly and as a CUDA graph whose copy nodes follow p and g when they move.
TEST_F(StreamLoopsGpuTest, AHostInputWrittenInPlaceStreamsThroughTheGpu) {
  std::unique_ptr<Fusion> fusion = test::streamedInPlaceUpdate(4);
  FusionExecutorCache cache(std::move(fusion), shipped());
  std::vector<HostTensor> kept;  // so that each run's inputs are at new addresses
  for (const bool graph : {false, true, true}) {
    const HostTensor p_value = pinnedRandom(1000, 512, 50 + kept.size());
    const HostTensor g_value = pinnedRandom(1000, 512, 60 + kept.size());
    kept.insert(kept.end(), {p_value, g_value});
    const HostTensor expected = evaluateFusionTensors(cache.fusion(), {p_value, g_value})[0];
    RunOptions options;
    options.cuda_graph = graph;
    const std::vector<FusionArgument> outputs = cache.run({p_value, g_value}, options);
    EXPECT_EQ(std::get<HostTensor>(outputs[0]).data(), p_value.data()) << "the run returns p";
    EXPECT_TRUE(test::isClose(p_value, expected, test::toleranceFor(DataType::Float32)))
        << (graph ? "graph" : "direct") << " run";
  }
  const std::string program = cache.lastRuntime()->program().toString();
  EXPECT_NE(program.find("copy_to_host %"), std::string::npos) << program;
}

// The same update on pageable p and g large enough to stage: p's slices come back through
// page-locked memory, and threads carry each on into p once its copy has run, while later
// slices compute. Twice, so the second run (a plan hit) starts from the first one's p.
TEST_F(StreamLoopsGpuTest, APageableInputWrittenInPlaceComesBackThroughPageLockedMemory) {
  FusionExecutorCache cache(test::streamedInPlaceUpdate(8), shipped());
  test::RandomTensors random(71);
  const HostTensor p_value = random.uniform(DataType::Float32, {2051, 1024});  // 8 MiB
  EXPECT_FALSE(driver::isPinnedHost(p_value.data()));
  for (int run = 0; run < 2; ++run) {
    const HostTensor g_value = random.uniform(DataType::Float32, {2051, 1024});
    const HostTensor expected =
        evaluateFusionTensors(cache.fusion(), {p_value.contiguous(), g_value})[0];
    const std::vector<FusionArgument> outputs = cache.run({p_value, g_value});
    EXPECT_EQ(std::get<HostTensor>(outputs[0]).data(), p_value.data()) << "the run returns p";
    EXPECT_TRUE(test::isClose(p_value, expected, test::toleranceFor(DataType::Float32)))
        << "run " << run;
  }
  EXPECT_EQ(cache.counters().hits, 1);
}

// A device-to-device Copy (no lowering emits one yet; plans are data, so one is written here):
// a slice of a device input copied into a buffer at an offset, directly and as a graph node.
TEST_F(StreamLoopsGpuTest, ADeviceToDeviceCopyRunsDirectlyAndInAGraph) {
  FusionExecutorCache cache(test::streamedPointwise(2), shipped());
  const HostTensor x = test::RandomTensors(53).uniform(DataType::Float32, {8, 64});
  const DeviceTensor device_x = DeviceTensor::fromHost(x);
  cache.run({device_x});  // a runtime to run hand-written plans with
  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  ExecutionPlan plan;
  plan.device = 0;
  const int64_t row_bytes = 64 * 4;
  // Rows 2..5 of x into rows 0..3 of a [4, 64] buffer.
  plan.buffers.push_back({DataType::Float32, {4, 64}, {64, 1}, 4 * row_bytes, -1, false});
  plan.steps.push_back({ExecutionPlan::Step::Kind::Allocate, 0, 0, -1});
  plan.steps.push_back({ExecutionPlan::Step::Kind::Copy, 0, 0, -1});
  plan.copies.push_back({host::CopyDirection::DeviceToDevice,
                         {host::SlotKind::Input, 0},
                         2 * row_bytes,
                         {host::SlotKind::Buffer, 0},
                         0,
                         static_cast<size_t>(4 * row_bytes),
                         -1});
  plan.outputs = {{host::SlotKind::Buffer, 0}};
  const HostTensor expected = x.narrowed(0, 2, 4).contiguous();
  for (const bool graph : {false, true, true}) {
    const std::vector<DeviceTensor> outputs = graph ? runtime->runGraph(plan, {device_x}, nullptr)
                                                    : runtime->run(plan, {device_x}, nullptr);
    BRAZE_CU(ctxSynchronize);
    EXPECT_TRUE(test::isClose(outputs[0].toHost(), expected, test::toleranceFor(DataType::Float32)))
        << (graph ? "graph" : "direct");
  }
}

// The pinned pool: a result dropped gives its block back, and the next run's result of the
// same size takes it without a driver call.
TEST_F(StreamLoopsGpuTest, ResultBlocksComeBackToThePinnedPool) {
  FusionExecutorCache cache(test::streamedPointwise(4), shipped());
  const HostTensor x = pinnedRandom(999, 256, 46);
  cache.run({x});  // compiles
  const driver::PinnedHostPoolCounters before = driver::pinnedHostPoolCounters();
  for (int run = 0; run < 3; ++run) {
    const HostTensor result = std::get<HostTensor>(cache.run({x})[0]);
    EXPECT_TRUE(test::isClose(result, evaluateFusionTensors(cache.fusion(), {x})[0],
                              test::toleranceFor(DataType::Float32)));
    poison(result);
  }
  const driver::PinnedHostPoolCounters after = driver::pinnedHostPoolCounters();
  EXPECT_EQ(after.driver_allocations, before.driver_allocations);
  EXPECT_GE(after.reuses - before.reuses, 3);
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
  double copy_us = 0;
  int copies = 0;
  int launches = 0;
  for (const RunTrace::Span& span : trace.spans) {
    EXPECT_LE(span.start_us, span.end_us);
    EXPECT_GE(span.stream, 0) << "every step of the loop runs on a pool stream";
    if (span.kind == RunTrace::Span::Kind::Copy) {
      EXPECT_EQ(span.tensor, 0) << "fusion input 0";
      EXPECT_EQ(span.stream, copies % options.stream_pool) << "iteration " << copies;
      copy_us += span.end_us - span.start_us;
      ++copies;
    } else if (span.kind == RunTrace::Span::Kind::Launch) {
      launch_us += span.end_us - span.start_us;
      ++launches;
    }
  }
  EXPECT_EQ(copies, kSlices);
  EXPECT_EQ(launches, kSlices);
  // Every kernel but the last's can run under a later slice's copy: ask for half of what could
  // overlap, the shorter of the kernels' and the copies' time (kernels stretch when other
  // processes share the GPU; run in sequence, nothing would overlap).
  const double overlap_us =
      trace.overlapMicroseconds(RunTrace::Span::Kind::Launch, RunTrace::Span::Kind::Copy);
  EXPECT_GT(overlap_us, std::min(launch_us, copy_us) / 2)
      << "kernels " << launch_us << " us, copies " << copy_us << " us, of which " << overlap_us
      << " us overlap on other streams";
}

// Whole results back: each slice's result is copied back on its pool stream right after its
// kernel, while later slices are copied in and computed on the other streams.
TEST_F(StreamLoopsGpuTest, CopiesBackOfEarlierSlicesOverlapLaterSlices) {
  constexpr int64_t kRows = 4096;
  constexpr int64_t kCols = 4096;
  constexpr int64_t kSlices = 8;
  const HostTensor x = pinnedRandom(kRows, kCols, 47);
  FusionExecutorCache cache(test::streamedPointwise(kSlices), shipped());
  RunOptions options;
  cache.run({x}, options);  // compiles
  RunTrace trace;
  options.trace = &trace;
  const HostTensor result = std::get<HostTensor>(cache.run({x}, options)[0]);
  EXPECT_TRUE(test::isClose(result, evaluateFusionTensors(cache.fusion(), {x})[0],
                            test::toleranceFor(DataType::Float32)));
  int back = 0;
  double back_us = 0;
  for (const RunTrace::Span& span : trace.spans) {
    EXPECT_GE(span.stream, 0) << "every step of the loop runs on a pool stream";
    if (span.kind != RunTrace::Span::Kind::CopyToHost) continue;
    EXPECT_EQ(span.tensor, 0) << "fusion output 0, copied back";
    EXPECT_EQ(span.stream, back % options.stream_pool) << "slice " << back;
    back_us += span.end_us - span.start_us;
    ++back;
  }
  EXPECT_EQ(back, kSlices);
  // All but the last slice's copy back can run beside later copies in: ask for a third.
  const double overlap_us =
      trace.overlapMicroseconds(RunTrace::Span::Kind::CopyToHost, RunTrace::Span::Kind::Copy);
  EXPECT_GT(overlap_us, back_us / 3) << "copies back " << back_us << " us, of which " << overlap_us
                                     << " us overlap copies in on other streams";
}
}  // namespace
}  // namespace braze
