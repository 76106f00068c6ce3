#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/launch_params.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

TEST(LaunchParamsTest, EvaluatesExtentsFromBoundSizes) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  LaunchExtents extents;
  extents.grid[0] = ceil_div(n, 128);
  extents.grid[1] = fusion.constantIndex(3);
  extents.block[0] = fusion.constantIndex(128);
  extents.dynamic_shared_memory_bytes = mul(n, 4);
  ExpressionEvaluator scalars;
  scalars.bind(n, int64_t{1000});
  const LaunchParams params = evaluateLaunchParams(extents, scalars, "k");
  EXPECT_EQ(params.grid, (std::array<int64_t, 3>{8, 3, 1}));
  EXPECT_EQ(params.block, (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(params.dynamic_shared_memory_bytes, 4000);
  EXPECT_EQ(params.threadsPerBlock(), 128);
  EXPECT_FALSE(params.isEmpty());
  EXPECT_EQ(params.toString(), "grid (8, 3, 1) block (128, 1, 1) dynamic smem 4000 bytes");
}

TEST(LaunchParamsTest, NullExtentsAreOne) {
  ExpressionEvaluator scalars;
  const LaunchParams params = evaluateLaunchParams(LaunchExtents{}, scalars, "k");
  EXPECT_EQ(params, LaunchParams{});
}

TEST(LaunchParamsTest, ZeroMeansNothingToLaunch) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  LaunchExtents extents;
  extents.grid[0] = ceil_div(n, 128);
  ExpressionEvaluator scalars;
  scalars.bind(n, int64_t{0});
  EXPECT_TRUE(evaluateLaunchParams(extents, scalars, "k").isEmpty());
}

TEST(LaunchParamsTest, UnboundAndNegativeExtentsAreNamed) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  LaunchExtents extents;
  extents.block[1] = n;
  ExpressionEvaluator unbound;
  EXPECT_TRUE(test::throwsError([&] { evaluateLaunchParams(extents, unbound, "kernel_a"); },
                                {"block.y of kernel kernel_a"}));
  ExpressionEvaluator negative;
  negative.bind(n, int64_t{-3});
  EXPECT_TRUE(test::throwsError([&] { evaluateLaunchParams(extents, negative, "kernel_a"); },
                                {"block.y of kernel kernel_a evaluates to -3", "negative"}));
}

TEST(LaunchParamsTest, LimitsOfTheDevice) {
  const driver::DeviceProperties h100 = driver::h100Properties();
  LaunchParams fine;
  fine.grid = {2147483647, 65535, 65535};
  fine.block = {1024, 1, 1};
  fine.dynamic_shared_memory_bytes = 200 * 1024;
  checkLaunchLimits(fine, h100, 4096, "k");

  LaunchParams grid_y = fine;
  grid_y.grid[1] = 65536;
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(grid_y, h100, 0, "k"); },
                                {"kernel k: grid.y = 65536 exceeds the limit 65535"}));
  LaunchParams block_z = fine;
  block_z.block = {1, 1, 65};
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(block_z, h100, 0, "k"); },
                                {"block.z = 65 exceeds the limit 64"}));
  LaunchParams threads = fine;
  threads.block = {64, 32, 1};
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(threads, h100, 0, "k"); },
                                {"2048 threads per block exceed the limit of 1024"}));
  LaunchParams shared = fine;
  shared.dynamic_shared_memory_bytes = 227 * 1024;
  EXPECT_TRUE(test::throwsError(
      [&] { checkLaunchLimits(shared, h100, 16, "k"); },
      {"232448 bytes of dynamic and 16 bytes of static shared memory exceed the 232448 bytes"}));
}

// A shared tensor sized at launch (a row kept in shared memory) is checked against the device
// when the launch is computed: a row that fits launches with its bytes as dynamic shared
// memory, one that does not is refused with the bytes named instead of failing in the driver.
TEST(LaunchParamsTest, SharedTensorsSizedAtLaunchAreCheckedAgainstTheDevice) {
  const std::unique_ptr<Fusion> fusion = test::findScheduledCase("row_in_shared_memory").build();
  const GeneratedKernel kernel = generateCuda(*fusion);
  const auto* x = fusion->inputs()[0]->as<TensorView>();
  const driver::DeviceProperties h100 = driver::h100Properties();
  const auto paramsFor = [&](int64_t n) {
    ExpressionEvaluator scalars;
    scalars.bind(x->axis(0)->extent(), int64_t{8});
    scalars.bind(x->axis(1)->extent(), n);
    return evaluateLaunchParams(kernel.launch, scalars, kernel.kernel_name);
  };
  // Rows of 4000 floats: 16000 bytes of row, then 8 bytes per thread (1000) of the reduction.
  const LaunchParams fits = paramsFor(4000);
  EXPECT_EQ(fits.dynamic_shared_memory_bytes, 16000 + 8000);
  checkLaunchLimits(fits, h100, 0, kernel.kernel_name);
  // The row's bytes grow with it: past the 227 KiB an H100 block may use, they are refused by
  // name (the block is set to a size the device allows, so that this check is the one that
  // speaks; rows this long take more threads than a block has, which is refused too).
  const LaunchParams too_long = paramsFor(4096 * 15);
  EXPECT_GT(too_long.dynamic_shared_memory_bytes, h100.max_shared_memory_per_block_optin);
  LaunchParams within_block = too_long;
  within_block.block = {1024, 1, 1};
  EXPECT_TRUE(test::throwsError(
      [&] { checkLaunchLimits(within_block, h100, 0, kernel.kernel_name); },
      {"bytes of dynamic and 0 bytes of static shared memory exceed the 232448 bytes"}));
}

TEST(LaunchParamsTest, ClustersDivideTheGridAndStayPortable) {
  const driver::DeviceProperties h100 = driver::h100Properties();
  LaunchParams clustered;
  clustered.grid = {8, 2, 1};
  clustered.block = {128, 1, 1};
  clustered.cluster = {2, 2, 1};
  checkLaunchLimits(clustered, h100, 0, "k");
  EXPECT_EQ(clustered.toString(),
            "grid (8, 2, 1) block (128, 1, 1) dynamic smem 0 bytes cluster (2, 2, 1)");

  LaunchParams ragged = clustered;
  ragged.grid = {7, 2, 1};
  EXPECT_TRUE(test::throwsError(
      [&] { checkLaunchLimits(ragged, h100, 0, "k"); },
      {"kernel k: grid.x = 7 is not a multiple of cluster.x = 2", "round the grid up"}));
  // Clusters of 16 where the device ran them when its properties were read (an H100 did: 112
  // SMs); never more than 16.
  LaunchParams big = clustered;
  big.grid = {16, 1, 1};
  big.cluster = {16, 1, 1};
  checkLaunchLimits(big, h100, 0, "k");
  driver::DeviceProperties unmeasured = h100;
  unmeasured.cluster_sms = {};
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(big, unmeasured, 0, "k"); },
                                {"16 CTAs per cluster", "runs clusters of up to 8 CTAs; use"}));
  LaunchParams bigger = clustered;
  bigger.grid = {32, 1, 1};
  bigger.cluster = {32, 1, 1};
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(bigger, h100, 0, "k"); },
                                {"32 CTAs per cluster", "up to 8 CTAs, and of 16; use"}));
  LaunchParams between = clustered;
  between.grid = {12, 1, 1};
  between.cluster = {12, 1, 1};
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(between, h100, 0, "k"); },
                                {"12 CTAs per cluster", "up to 8 CTAs, and of 16; use"}));
  driver::DeviceProperties ampere = h100;
  ampere.name = "A100";
  ampere.arch = driver::GpuArch{8, 0, false};
  EXPECT_TRUE(test::throwsError([&] { checkLaunchLimits(clustered, ampere, 0, "k"); },
                                {"thread block clusters", "need sm_90 or later", "A100"}));
}

TEST(LaunchParamsTest, TheDriverConfigCarriesTheClusterShape) {
  LaunchParams plain;
  plain.grid = {4, 1, 1};
  plain.block = {32, 1, 1};
  const DriverLaunchConfig unclustered(plain, nullptr);
  EXPECT_EQ(unclustered.config.numAttrs, 0u);
  EXPECT_EQ(unclustered.config.gridDimX, 4u);

  LaunchParams clustered = plain;
  clustered.cluster = {2, 1, 1};
  const DriverLaunchConfig config(clustered, nullptr);
  ASSERT_EQ(config.config.numAttrs, 1u);
  EXPECT_EQ(config.config.attrs, config.attributes.data());
  EXPECT_EQ(config.attributes[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(config.attributes[0].value.clusterDim.x, 2u);
  EXPECT_EQ(config.attributes[0].value.clusterDim.y, 1u);
  EXPECT_EQ(config.attributes[0].value.clusterDim.z, 1u);

  // Cooperative (every block resident at once), alone and beside a cluster shape.
  LaunchParams cooperative = plain;
  cooperative.cooperative = true;
  EXPECT_EQ(cooperative.toString(),
            "grid (4, 1, 1) block (32, 1, 1) dynamic smem 0 bytes cooperative");
  const DriverLaunchConfig alone(cooperative, nullptr);
  ASSERT_EQ(alone.config.numAttrs, 1u);
  EXPECT_EQ(alone.attributes[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
  EXPECT_EQ(alone.attributes[0].value.cooperative, 1);
  cooperative.cluster = {2, 1, 1};
  const DriverLaunchConfig both(cooperative, nullptr);
  ASSERT_EQ(both.config.numAttrs, 2u);
  EXPECT_EQ(both.attributes[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(both.attributes[1].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
}

}  // namespace
}  // namespace braze
