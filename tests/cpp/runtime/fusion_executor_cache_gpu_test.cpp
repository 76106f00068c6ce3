// FusionExecutorCache on a GPU (every test skips itself without one): single-kernel and
// segmented fusions run through one call on device tensors and compared with the reference
// evaluator on fresh random inputs. Outputs come from the stream-ordered pool, so each run is
// preceded by a poisoned block (every byte 0xFF, NaN for floats) allocated and freed on the
// run's stream: the pool hands that memory to the run, and an element never written shows.

#include <gtest/gtest.h>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/device_properties.h"
#include "braze/driver/primary_context.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "runtime/runtime_fusions.h"
#include "support/cache_reference_run.h"
#include "support/normalization_fusions.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

class FusionExecutorCacheGpuTest : public ::testing::Test {
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

// The backward norms' float32 outputs cancel (dx) and sum hundreds of rows in another order
// than the reference (dw, db): their rounding reaches about 1e-4.
test::Tolerance backwardTolerance(DataType dtype) {
  return dtype == DataType::Float32 ? test::Tolerance{1e-4, 1e-4} : test::toleranceFor(dtype);
}

// Runs `cache` on device copies of `inputs` after poisoning the pool, and checks every output
// against the reference evaluator.
void expectMatchesReference(FusionExecutorCache& cache, const std::vector<HostTensor>& inputs,
                            CUstream stream = nullptr,
                            test::Tolerance (*tolerance)(DataType) = test::toleranceFor) {
  RunOptions options;
  options.stream = stream;
  test::expectCacheMatchesReference(cache, inputs, options, tolerance);
}

TEST_F(FusionExecutorCacheGpuTest, SingleKernelFusionsMatchTheReference) {
  test::RandomTensors random(11);
  FusionExecutorCache softmax(test::softmaxFusion(), shipped());
  expectMatchesReference(softmax, {random.uniform(DataType::Float32, {64, 1000})});
  FusionExecutorCache scale_bias(test::scaleBiasFusion(), shipped());
  expectMatchesReference(scale_bias, {random.uniform(DataType::Float32, {33, 4096}),
                                      random.uniform(DataType::Float32, {4096}),
                                      random.uniform(DataType::Float32, {4096})});
}

// x + uniform and normal with the Philox seed and offset as scalar inputs, through the pointwise
// scheduler: uniform equals the reference evaluator bit for bit, normal within 1e-5 (the GPU's
// logf and cosf may differ by an ulp), and a new offset gives new values.
TEST_F(FusionExecutorCacheGpuTest, RandomFactoriesMatchTheReference) {
  test::RandomTensors random(13);
  FusionExecutorCache cache(test::randomNoiseFusion(), shipped());
  const HostTensor x = random.uniform(DataType::Float32, {45, 1000});
  std::vector<HostTensor> previous;
  for (const int64_t offset : {int64_t{0}, (int64_t{1} << 32) + 5}) {
    const std::vector<EvaluatorArgument> host = {x, ScalarValue(int64_t{2026}),
                                                 ScalarValue(offset)};
    test::poisonPool(size_t{8} << 20);
    const std::vector<FusionArgument> outputs =
        cache.run({DeviceTensor::fromHost(x), ScalarValue(int64_t{2026}), ScalarValue(offset)});
    BRAZE_CU(streamSynchronize, nullptr);
    const std::vector<EvaluatorArgument> expected = evaluateFusion(cache.fusion(), host);
    ASSERT_EQ(outputs.size(), 2u);
    std::vector<HostTensor> actual;
    for (const FusionArgument& output : outputs)
      actual.push_back(std::get<DeviceTensor>(output).toHost());
    EXPECT_TRUE(test::isClose(actual[0], std::get<HostTensor>(expected[0]), test::Tolerance{}))
        << cache.lastRuntime()->describe();
    EXPECT_TRUE(
        test::isClose(actual[1], std::get<HostTensor>(expected[1]), test::Tolerance{1e-5, 1e-5}))
        << cache.lastRuntime()->describe();
    EXPECT_NE(cache.lastRuntime()->describe().find("pointwise"), std::string::npos)
        << cache.lastRuntime()->describe();
    if (!previous.empty()) {
      EXPECT_FALSE(test::isClose(actual[1], previous[1], test::Tolerance{}));
    }
    previous = actual;
  }
}

TEST_F(FusionExecutorCacheGpuTest, BackToBackCallsWithChangingSizesAndFreshData) {
  test::RandomTensors random(12);
  FusionExecutorCache cache(test::softmaxFusion(), shipped());
  for (const auto& sizes : std::vector<std::vector<int64_t>>{
           {64, 1024}, {128, 1024}, {64, 1024}, {1000, 96}, {64, 1024}, {7, 4096}}) {
    expectMatchesReference(cache, {random.uniform(DataType::Float32, sizes)});
  }
  const ExecutorCacheCounters counters = cache.counters();
  EXPECT_EQ(counters.runs, 6);
  EXPECT_EQ(counters.hits, 2);  // the two repeats of [64, 1024], with other data
  EXPECT_EQ(counters.hits + counters.heuristic_reuses + counters.misses, 6);
}

TEST_F(FusionExecutorCacheGpuTest, SegmentedFusionsMatchTheReference) {
  test::RandomTensors random(13);
  for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
    FusionExecutorCache cache(test::centeredSoftmaxFusion(dtype), shipped());
    for (const auto& sizes :
         std::vector<std::vector<int64_t>>{{256, 1024}, {4096, 512}, {256, 1024}}) {
      expectMatchesReference(cache, {random.uniform(dtype, sizes)});
      EXPECT_EQ(cache.lastRuntime()->segmentation().segments.size(), 2u);
    }
  }
}

// index_select of a computed tensor, stride_order and segment_set on the GPU: the column-major
// output is allocated with its strides and every kernel matches the evaluator.
TEST_F(FusionExecutorCacheGpuTest, IndexingAndCopyOpsMatchTheReference) {
  test::RandomTensors random(14);
  FusionExecutorCache cache(test::indexingAndCopiesFusion(), shipped());
  const HostTensor rows = test::tensorOfIntegers(DataType::Int64, {7}, {0, -1, 5, 299, -300, 2, 2});
  expectMatchesReference(cache, {random.uniform(DataType::Float32, {300, 130}), rows});
  const std::vector<FusionArgument> outputs =
      cache.run({DeviceTensor::fromHost(random.uniform(DataType::Float32, {300, 130})),
                 DeviceTensor::fromHost(rows)});
  EXPECT_EQ(std::get<DeviceTensor>(outputs[0]).strides(), (std::vector<int64_t>{1, 7}));
  EXPECT_TRUE(std::get<DeviceTensor>(outputs[1]).isContiguous());
}

TEST_F(FusionExecutorCacheGpuTest, LongRowBackwardNormsRunWholeWhereTheyFit) {
  using test::Normalization;
  const bool hopper = driver::deviceProperties(0).arch.major >= 9;
  for (const Normalization kind :
       {Normalization::LayerNormBackward, Normalization::RmsNormBackward}) {
    for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      FusionExecutorCache cache(test::makeNormalization(kind, dtype), shipped());
      // Rows the inner-outer scheduler takes whole (4096, 8192, and 16384 but for RMS norm's
      // 2-byte rows); from 32 KiB of row inputs on sm_90, tma_ws_normalization's rows in shared
      // memory; rows of 2 MiB, which no kernel holds, as segments.
      for (const int64_t n : {4096, 16384, 65536, 8192, 262144}) {
        if (n == 262144 && dtype != DataType::Float32) continue;
        SCOPED_TRACE(test::toString(kind) + " " + std::string(toString(dtype)) + " " +
                     std::to_string(n));
        expectMatchesReference(cache,
                               test::normalizationArguments(kind, dtype, n > 65536 ? 5 : 96, n, 31),
                               nullptr, backwardTolerance);
        const bool two_byte_rms =
            kind == Normalization::RmsNormBackward && dtype != DataType::Float32;
        const size_t segments = cache.lastRuntime()->segmentation().segments.size();
        if (n > 65536 || (!hopper && (n > 16384 || (n == 16384 && two_byte_rms)))) {
          EXPECT_GE(segments, 2u) << cache.lastRuntime()->describe();
        } else {
          EXPECT_EQ(segments, 1u) << cache.lastRuntime()->describe();
        }
      }
    }
  }
}

// nvFuser's own backward norm definitions run as one kernel (inner_outer's, or on sm_90 from
// rows of 32 KiB tma_ws_normalization's) and match the reference.
TEST_F(FusionExecutorCacheGpuTest, NvfuserStyleBackwardNormsAreOneKernel) {
  for (const bool layer_norm : {true, false}) {
    for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      FusionExecutorCache cache(layer_norm ? test::makeNvfuserStyleLayerNormBackward(dtype)
                                           : test::makeNvfuserStyleRmsNormBackward(dtype),
                                shipped());
      for (const int64_t n : {int64_t{1000}, int64_t{4096}}) {
        SCOPED_TRACE(std::string(layer_norm ? "layer norm " : "RMS norm ") +
                     std::string(toString(dtype)) + " " + std::to_string(n));
        expectMatchesReference(cache,
                               layer_norm
                                   ? test::nvfuserStyleLayerNormBackwardArguments(dtype, 300, n, 41)
                                   : test::nvfuserStyleRmsNormBackwardArguments(dtype, 300, n, 43),
                               nullptr, backwardTolerance);
        const auto& segments = cache.lastRuntime()->segmentation().segments;
        ASSERT_EQ(segments.size(), 1u) << cache.lastRuntime()->describe();
        EXPECT_TRUE(segments[0].scheduler.starts_with("braze::inner_outer@") ||
                    segments[0].scheduler.starts_with("braze::tma_ws_normalization@"))
            << cache.lastRuntime()->describe();
      }
    }
  }
}

TEST_F(FusionExecutorCacheGpuTest, RunsOnAStreamOfTheCaller) {
  test::RandomTensors random(14);
  driver::makePrimaryContextCurrent(0);
  CUstream stream = nullptr;
  BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  {
    FusionExecutorCache cache(test::centeredSoftmaxFusion(), shipped());
    expectMatchesReference(cache, {random.uniform(DataType::Float32, {512, 768})}, stream);
    expectMatchesReference(cache, {random.uniform(DataType::Float32, {512, 768})}, stream);
    EXPECT_EQ(cache.counters().hits, 1);
  }
  BRAZE_CU(streamDestroy, stream);
}

TEST_F(FusionExecutorCacheGpuTest, CudaGraphRunsReplayWithNewDataAndMovedInputs) {
  test::RandomTensors random(16);
  FusionExecutorCache cache(test::centeredSoftmaxFusion(), shipped());
  RunOptions graph;
  graph.cuda_graph = true;
  const HostTensor first = random.uniform(DataType::Float32, {300, 640});
  DeviceTensor input = DeviceTensor::fromHost(first);
  auto check = [&](const HostTensor& host, const std::vector<FusionArgument>& outputs) {
    BRAZE_CU(ctxSynchronize);
    EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[0]).toHost(),
                              evaluateFusionTensors(cache.fusion(), {host})[0]));
  };
  check(first, cache.run({input}, graph));  // captured
  check(first, cache.run({input}, graph));  // replayed
  // New values at the same address: the graph reads them.
  const HostTensor second = random.uniform(DataType::Float32, {300, 640});
  const DeviceTensor staged = DeviceTensor::fromHost(second);
  BRAZE_CU(memcpyDtoDAsync, input.data(), staged.data(), static_cast<size_t>(input.storageBytes()),
           nullptr);
  check(second, cache.run({input}, graph));
  // Another input tensor: its kernels are updated before the replay.
  const HostTensor third = random.uniform(DataType::Float32, {300, 640});
  check(third, cache.run({DeviceTensor::fromHost(third)}, graph));
  // Without the graph, the same plan still runs launch by launch.
  check(third, cache.run({DeviceTensor::fromHost(third)}));
  EXPECT_EQ(cache.counters().misses, 1);
}

TEST_F(FusionExecutorCacheGpuTest, HostTensorsGoThroughTheGpu) {
  test::RandomTensors random(15);
  FusionExecutorCache cache(test::softmaxFusion(), shipped());
  const HostTensor x = random.uniform(DataType::Float32, {16, 256});
  const std::vector<FusionArgument> outputs = cache.run({x});
  test::expectClose(std::get<HostTensor>(outputs[0]),
                    evaluateFusionTensors(cache.fusion(), {x})[0]);
}

}  // namespace
}  // namespace braze
