// Tensor-map parameters and cluster shapes without a GPU: what a kernel's contract may say
// about a map, the executor's checks of it, the launch it plans, and the recipe that keeps
// both for the next process.

#include <gtest/gtest.h>

#include "braze/runtime/kernel_executor.h"
#include "braze/runtime/kernel_recipe.h"
#include "runtime/tensor_map_kernels.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using Swizzle = TensorMapParameter::Swizzle;

TEST(TensorMapParameterTest, ProblemsNameTheDimAndTheRule) {
  EXPECT_FALSE(tensorMapParameterProblem({.dims = {1, 0}, .box = {64, 32}}, 2));
  EXPECT_NE(tensorMapParameterProblem({.dims = {0}, .box = {64}}, 2)->find("rank 2"),
            std::string::npos);
  EXPECT_NE(tensorMapParameterProblem({.dims = {1, 1}, .box = {64, 32}}, 2)->find("permutation"),
            std::string::npos);
  EXPECT_NE(tensorMapParameterProblem({.dims = {1, 0}, .box = {300, 32}}, 2)->find("1 to 256"),
            std::string::npos);
  EXPECT_NE(tensorMapParameterProblem({.dims = {0, 1, 2, 3, 4, 5}, .box = {1, 1, 1, 1, 1, 1}}, 6)
                ->find("1 to 5"),
            std::string::npos);
}

CompiledKernel compileForSm90(const GeneratedKernel& kernel) {
  return CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                 {.arch = driver::GpuArch{9, 0}});
}

TEST(TensorMapParameterTest, TheCopyKernelCompilesAndPlansClusters) {
  test::HandWrittenKernel copy = test::tmaCopy(2);
  KernelExecutor executor(*copy.fusion, copy.kernel, compileForSm90(copy.kernel));
  const DeviceTensor in =
      DeviceTensor::borrow(DataType::BFloat16, {100, 200}, {200, 1}, 256, 0, nullptr);
  const LaunchPlan plan = executor.plan({in});
  EXPECT_EQ(plan.launch.cluster, (std::array<int64_t, 3>{2, 1, 1}));
  // 200 columns in boxes of 64, rounded up to whole clusters of two; 100 rows in boxes of 32.
  EXPECT_EQ(plan.launch.grid, (std::array<int64_t, 3>{4, 4, 1}));
}

TEST(TensorMapParameterTest, AMapThatCannotDescribeItsTensorIsAContractError) {
  test::HandWrittenKernel copy = test::tmaCopy();
  copy.kernel.parameters[0].tensor_map.dims = {0, 0};
  EXPECT_TRUE(test::throwsError(
      [&] { KernelExecutor(*copy.fusion, copy.kernel, compileForSm90(copy.kernel)); },
      {"tensor map of input 0", "permutation"}));
  test::HandWrittenKernel other = test::tmaCopy();
  other.kernel.parameters[1].fusion_position = 3;
  EXPECT_TRUE(test::throwsError(
      [&] { KernelExecutor(*other.fusion, other.kernel, compileForSm90(other.kernel)); },
      {"is not output 3"}));
}

TEST(TensorMapParameterTest, RecipesKeepMapsClustersAndCooperativeLaunches) {
  test::HandWrittenKernel copy = test::tmaCopy(2);
  copy.kernel.launch.cooperative = true;
  auto recorded = recordKernelRecipe(copy.kernel, *copy.fusion, std::string(64, 'k'));
  ASSERT_TRUE(std::holds_alternative<KernelRecipe>(recorded)) << std::get<std::string>(recorded);
  const KernelRecipe& recipe = std::get<KernelRecipe>(recorded);
  EXPECT_EQ(recipe.cluster, (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_EQ(recipe.parameters[0].tensor_map.swizzle, Swizzle::Bytes128);
  const GeneratedKernel rebuilt = rebuildKernel(recipe, *copy.fusion, copy.kernel.source);
  EXPECT_EQ(rebuilt.launch.cluster, copy.kernel.launch.cluster);
  EXPECT_TRUE(recipe.cooperative);
  EXPECT_TRUE(rebuilt.launch.cooperative);
  ASSERT_EQ(rebuilt.parameters.size(), copy.kernel.parameters.size());
  for (size_t i = 0; i < rebuilt.parameters.size(); ++i) {
    EXPECT_EQ(rebuilt.parameters[i].kind, copy.kernel.parameters[i].kind);
    EXPECT_EQ(rebuilt.parameters[i].tensor_map, copy.kernel.parameters[i].tensor_map);
    EXPECT_EQ(rebuilt.parameters[i].val, copy.kernel.parameters[i].val);
  }
  // A damaged map is refused when the recipe is rebuilt, with the parameter named.
  KernelRecipe damaged = recipe;
  damaged.parameters[1].tensor_map.box = {64};
  EXPECT_TRUE(test::throwsError([&] { rebuildKernel(damaged, *copy.fusion, copy.kernel.source); },
                                {"parameter 1", "box of 1"}));
}

}  // namespace
}  // namespace braze
