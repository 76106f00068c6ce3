// The GPU tier of scans: fusions with cumsum, cumprod, cummax and cummin run through
// FusionExecutorCache with the shipped schedulers (the scan scheduler for the scans, other
// schedulers for the reductions the segmenter splits off), on random inputs with the memory
// pool poisoned first, and match the reference evaluator. CPU twins check the segmentation the
// cache chooses. GPU tests skip themselves without a device.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/segment/segmented_fusion.h"
#include "support/random_tensor.h"
#include "support/registry_segment_checker.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

ExecutorCacheOptions shipped() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

// Rows normalized by their running sums, then summed: a scan kernel and a reduction kernel.
std::unique_ptr<Fusion> runningShares(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* e = exp(cast(x, DataType::Float32));
  TensorView* shares = div(e, cumsum(e, 1));
  fusion->addOutput(cast(shares, dtype));
  fusion->addOutput(sum(shares, {1}));
  return fusion;
}

// Every scan along the outer dim of a 3-D input, with an int32 input summed in int64.
std::unique_ptr<Fusion> outerScans() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 3);
  TensorView* i = makeInputTensor(*fusion, {.dtype = DataType::Int32, .sizes = {-1, -1, -1}});
  fusion->addOutput(cumsum(x, 0));
  fusion->addOutput(cumprod(mul(x, 0.1), 0));
  fusion->addOutput(cummax(i, 0));
  fusion->addOutput(cummin(sub(x, i), 0));
  fusion->addOutput(cumsum(i, -3));
  TensorView* positive = gt(x, 0.0);
  fusion->addOutput(cummax(positive, 0));
  fusion->addOutput(cummin(positive, 0));
  fusion->addOutput(cumprod(clamp(i, -1, 1), 0, DataType::Int32));
  return fusion;
}

// Values and indices of running extremes along both dims of a float and an int32 input (the
// two inputs share no dims, so they take a kernel each).
std::unique_ptr<Fusion> scansWithIndices() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* i = makeInputTensor(*fusion, {.dtype = DataType::Int32, .sizes = {-1, -1}});
  for (const ScanWithIndices& scan : {cummaxWithIndices(x, 1), cumminWithIndices(x, 0),
                                      cummaxWithIndices(i, 0), cumminWithIndices(i, 1)}) {
    fusion->addOutput(scan.values);
    fusion->addOutput(scan.indices);
  }
  return fusion;
}

// The segments the cache's segmenter makes for `fusion` at `sizes`.
SegmentedFusion segmentsOf(const Fusion& fusion, const std::vector<std::vector<int64_t>>& sizes) {
  test::RegistrySegmentChecker checker(test::shippedSchedulers(), fusion, sizes);
  return segmentFusion(fusion, checker);
}

TEST(ScanSegmentationTest, ScansGetTheScanScheduler) {
  const std::unique_ptr<Fusion> fusion = outerScans();
  const SegmentedFusion segmented = segmentsOf(*fusion, {{9, 5, 7}, {9, 5, 7}});
  ASSERT_EQ(segmented.segments.size(), 1u) << segmented.toString();
  EXPECT_THAT(segmented.segments[0].scheduler, HasSubstr("braze::scan@"));
}

TEST(ScanSegmentationTest, AReductionOfScansIsItsOwnSegment) {
  const std::unique_ptr<Fusion> fusion = runningShares(DataType::Float32);
  const SegmentedFusion segmented = segmentsOf(*fusion, {{64, 300}});
  ASSERT_GE(segmented.segments.size(), 2u) << segmented.toString();
  bool scan = false;
  for (const Segment& segment : segmented.segments)
    scan = scan || segment.scheduler.find("braze::scan@") != std::string::npos;
  EXPECT_TRUE(scan) << segmented.toString();
}

TEST(ScanSegmentationTest, EveryScanOfIndicesGetsTheScanScheduler) {
  const std::unique_ptr<Fusion> fusion = scansWithIndices();
  const SegmentedFusion segmented = segmentsOf(*fusion, {{33, 65}, {33, 65}});
  ASSERT_GE(segmented.segments.size(), 1u);
  for (const Segment& segment : segmented.segments)
    EXPECT_THAT(segment.scheduler, HasSubstr("braze::scan@")) << segmented.toString();
}

class ScanExecutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  }

  // Runs `cache` on device copies of `inputs` with the pool poisoned, against the reference.
  static void expectMatchesReference(FusionExecutorCache& cache,
                                     const std::vector<HostTensor>& inputs,
                                     test::Tolerance tolerance) {
    std::vector<FusionArgument> arguments;
    size_t bytes = 0;
    for (const HostTensor& input : inputs) {
      arguments.emplace_back(DeviceTensor::fromHost(input));
      bytes += static_cast<size_t>(input.numel()) * sizeInBytes(input.dtype());
    }
    {
      std::shared_ptr<driver::DeviceMemory> poison =
          driver::DeviceMemory::allocateOnStream(0, std::max<size_t>(bytes * 4, 1 << 20), nullptr);
      BRAZE_CU(memsetD8Async, poison->pointer(), 0xFF, std::max<size_t>(bytes * 4, 1 << 20),
               nullptr);
    }
    const std::vector<FusionArgument> outputs = cache.run(arguments);
    BRAZE_CU(streamSynchronize, nullptr);
    const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), inputs);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const HostTensor actual = std::get<DeviceTensor>(outputs[i]).toHost();
      const bool exact = !isFloatingPoint(expected[i].dtype());
      EXPECT_TRUE(test::isClose(actual, expected[i], exact ? test::Tolerance{} : tolerance))
          << "output " << i << "\n"
          << cache.lastRuntime()->describe();
    }
  }
};

TEST_F(ScanExecutionTest, OuterScansMatchTheReference) {
  test::RandomTensors random(21);
  FusionExecutorCache cache(outerScans(), shipped());
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{9, 5, 7}, {40, 33, 65}, {1, 300, 2}}) {
    HostTensor ints = random.uniform(DataType::Int32, sizes, -100, 100);
    expectMatchesReference(cache, {random.uniform(DataType::Float32, sizes), ints},
                           test::Tolerance{1e-4, 1e-4});
  }
}

TEST_F(ScanExecutionTest, SegmentedScanAndReductionMatchTheReference) {
  test::RandomTensors random(22);
  for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
    FusionExecutorCache cache(runningShares(dtype), shipped());
    expectMatchesReference(cache, {random.uniform(dtype, {64, 300})}, test::Tolerance{1e-2, 1e-3});
    expectMatchesReference(cache, {random.uniform(dtype, {3, 4097})}, test::Tolerance{1e-2, 1e-3});
  }
}

TEST_F(ScanExecutionTest, IndicesMatchTheReference) {
  test::RandomTensors random(24);
  FusionExecutorCache cache(scansWithIndices(), shipped());
  // Few distinct integers: many ties, whose last index is the one reported.
  expectMatchesReference(cache,
                         {random.uniform(DataType::Float32, {33, 65}),
                          random.uniform(DataType::Int32, {33, 65}, -3, 3)},
                         test::Tolerance{0, 0});
}

TEST_F(ScanExecutionTest, LongSingleLine) {
  test::RandomTensors random(23);
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1, DataType::Float64);
  fusion->addOutput(cumsum(x, 0));
  fusion->addOutput(cummax(x, 0));
  FusionExecutorCache cache(std::move(fusion), shipped());
  expectMatchesReference(cache, {random.uniform(DataType::Float64, {100000})},
                         test::Tolerance{1e-10, 1e-10});
}

}  // namespace
}  // namespace braze
