// Kernel recipes: a warm runtime runs the kernels it kept without a scheduler call, lowering or
// NVRTC; the launches it computes from a recipe equal those of the freshly scheduled kernel, at
// the sizes it was built for and at others; a recipe that does not fit its segment is refused
// and the segment scheduled again.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "braze/driver/nvrtc_compiler.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"
#include "memory_decision_store.h"
#include "support/normalization_fusions.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze::serde {
namespace {

namespace fs = std::filesystem;
using test::Normalization;

/// Device tensors at made-up, aligned addresses: executor plans need no GPU.
std::vector<ExecutorArgument> plannedArguments(const std::vector<HostTensor>& inputs) {
  std::vector<ExecutorArgument> arguments;
  CUdeviceptr address = 1 << 20;
  for (const HostTensor& input : inputs) {
    arguments.emplace_back(
        DeviceTensor::borrow(input.dtype(), input.sizes(), input.strides(), address, 0, nullptr));
    address += 1 << 24;
  }
  return arguments;
}

/// The plan of `executor` for `arguments`, or the error it gives.
std::variant<LaunchPlan, std::string> planOf(const KernelExecutor& executor,
                                             const std::vector<ExecutorArgument>& arguments) {
  try {
    return executor.plan(arguments);
  } catch (const Error& error) {
    return std::string(error.what());
  }
}

void expectSamePlans(const KernelExecutor& fresh, const KernelExecutor& restored,
                     const std::vector<ExecutorArgument>& arguments, const std::string& what) {
  const auto expected = planOf(fresh, arguments);
  const auto actual = planOf(restored, arguments);
  ASSERT_EQ(expected.index(), actual.index()) << what;
  if (const auto* message = std::get_if<std::string>(&expected)) {
    EXPECT_EQ(*message, std::get<std::string>(actual)) << what;
    return;
  }
  const LaunchPlan& a = std::get<LaunchPlan>(expected);
  const LaunchPlan& b = std::get<LaunchPlan>(actual);
  EXPECT_EQ(a.launch, b.launch) << what << ": " << a.launch.toString() << " vs "
                                << b.launch.toString();
  ASSERT_EQ(a.parameters.size(), b.parameters.size()) << what;
  for (size_t i = 0; i < a.parameters.size(); ++i) {
    EXPECT_EQ(a.parameters[i].sizes, b.parameters[i].sizes) << what << " parameter " << i;
    EXPECT_EQ(a.parameters[i].workspace_bytes, b.parameters[i].workspace_bytes) << what;
    EXPECT_TRUE(identical(a.parameters[i].scalar, b.parameters[i].scalar)) << what;
  }
}

/// Runs `fusion` on `inputs` through a new executor cache, checks the results against the
/// reference evaluator and returns the runtime.
/// Runs `fusion` on `inputs` through a new executor cache, checks the results against the
/// reference evaluator and returns the cache (which owns the runtime's fusion).
std::unique_ptr<FusionExecutorCache> run(const Fusion& fusion,
                                         const std::vector<HostTensor>& inputs) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  auto cache = std::make_unique<FusionExecutorCache>(fusion, options);
  const std::vector<FusionArgument> outputs =
      cache->run(std::vector<FusionArgument>(inputs.begin(), inputs.end()));
  const std::vector<HostTensor> expected = evaluateFusionTensors(fusion, inputs);
  for (size_t i = 0; i < outputs.size(); ++i)
    EXPECT_TRUE(test::isClose(std::get<HostTensor>(outputs[i]), expected[i])) << "output " << i;
  return cache;
}

class KernelRecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("braze-recipes-" + std::to_string(::getpid()));
    fs::remove_all(directory_);
    CacheOptions options;
    options.directory = directory_;
    setDefaultKernelStore(std::make_shared<KernelCache>(options));
    setDefaultDecisionStore(std::make_shared<RuntimeCache>(options));
  }
  void TearDown() override {
    setDefaultKernelStore(nullptr);
    setDefaultDecisionStore(nullptr);
    fs::remove_all(directory_);
  }

  fs::path directory_;
};

// Every normalization, as one kernel: the second process asks no scheduler and compiles
// nothing, and the recipe's launches equal the scheduled kernel's at other sizes too.
TEST_F(KernelRecipeTest, AWarmRuntimeRunsItsKernelsFromRecipes) {
  for (const Normalization kind : test::allNormalizations()) {
    SCOPED_TRACE(test::toString(kind));
    const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, DataType::BFloat16);
    const auto inputs = test::normalizationArguments(kind, DataType::BFloat16, 8, 1024, 3);
    const auto fresh_cache = run(*fusion, inputs);
    const std::shared_ptr<const FusionKernelRuntime> fresh = fresh_cache->lastRuntime();
    ASSERT_EQ(fresh->kernels().size(), 1u);
    ASSERT_TRUE(fresh->kernels()[0].recipe.has_value());

    const int64_t scheduler_calls = schedulerCallCount();
    const int64_t nvrtc_calls = driver::nvrtcCompileCount();
    const auto warm_cache = run(*fusion, inputs);
    const ExecutorCacheCounters counters = warm_cache->counters();
    const std::shared_ptr<const FusionKernelRuntime> warm = warm_cache->lastRuntime();
    EXPECT_EQ(schedulerCallCount(), scheduler_calls);
    EXPECT_EQ(driver::nvrtcCompileCount(), nvrtc_calls);
    EXPECT_EQ(counters.runtimes_restored, 1);
    EXPECT_EQ(counters.kernels_from_store, 1);
    ASSERT_TRUE(warm->kernels()[0].from_recipe);
    EXPECT_EQ(warm->kernels()[0].recipe, fresh->kernels()[0].recipe);
    EXPECT_EQ(warm->decisions(), fresh->decisions());

    const KernelExecutor& a = *fresh->kernels()[0].executor;
    const KernelExecutor& b = *warm->kernels()[0].executor;
    EXPECT_EQ(a.generatedKernel().source, b.generatedKernel().source);
    for (const auto& [rows, n] : std::vector<std::pair<int64_t, int64_t>>{
             {8, 1024}, {1, 1024}, {300, 1024}, {8, 1000}, {5, 4096}, {64, 8}}) {
      expectSamePlans(
          a, b,
          plannedArguments(test::normalizationArguments(kind, DataType::BFloat16, rows, n, 1)),
          std::to_string(rows) + " x " + std::to_string(n));
    }
  }
}

// Layer norm backward at rows of 262144 (2 MiB of fp32 row inputs) runs as two kernels, one with a
// global buffer and grid workspace: both restored from their recipes.
TEST_F(KernelRecipeTest, SegmentedFusionsRestoreEveryKernel) {
  const auto kind = Normalization::LayerNormBackward;
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, DataType::Float32);
  const auto inputs = test::normalizationArguments(kind, DataType::Float32, 3, 262144, 9);
  const auto fresh_cache = run(*fusion, inputs);
  const std::shared_ptr<const FusionKernelRuntime> fresh = fresh_cache->lastRuntime();
  ASSERT_EQ(fresh->kernels().size(), 2u);
  const int64_t scheduler_calls = schedulerCallCount();
  const int64_t nvrtc_calls = driver::nvrtcCompileCount();
  const auto warm_cache = run(*fusion, inputs);
  const std::shared_ptr<const FusionKernelRuntime> warm = warm_cache->lastRuntime();
  EXPECT_EQ(schedulerCallCount(), scheduler_calls);
  EXPECT_EQ(driver::nvrtcCompileCount(), nvrtc_calls);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_TRUE(warm->kernels()[s].from_recipe) << s;
    EXPECT_EQ(warm->kernels()[s].recipe, fresh->kernels()[s].recipe) << s;
  }
}

class DamagedRecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("braze-recipes-bad-" + std::to_string(::getpid()));
    fs::remove_all(directory_);
    CacheOptions options;
    options.directory = directory_;
    setDefaultKernelStore(std::make_shared<KernelCache>(options));
    setDefaultDecisionStore(store_);
  }
  void TearDown() override {
    setDefaultKernelStore(nullptr);
    setDefaultDecisionStore(nullptr);
    fs::remove_all(directory_);
  }

  fs::path directory_;
  std::shared_ptr<test::MemoryDecisionStore> store_ = std::make_shared<test::MemoryDecisionStore>();
};

// Recipes that contradict their segment (as a damaged or hand-edited entry could) are refused
// with the reason, and the kernel is scheduled again: right results, never a bad launch.
TEST_F(DamagedRecipeTest, ARecipeThatDoesNotFitIsRefused) {
  const auto kind = Normalization::LayerNorm;
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, DataType::Float32);
  const auto inputs = test::normalizationArguments(kind, DataType::Float32, 4, 512, 2);
  run(*fusion, inputs);

  using Node = ScalarFormulas::Node;
  const std::vector<std::pair<std::string, std::function<void(KernelRecipe&)>>> damages = {
      {"not input 9", [](KernelRecipe& r) { r.parameters[0].fusion_position = 9; }},
      {"rank", [](KernelRecipe& r) { r.parameters[0].rank += 1; }},
      {"the segment's", [](KernelRecipe& r) { r.parameters[0].dtype = DataType::Float64; }},
      {"does not come before it",
       [](KernelRecipe& r) {
         Node node;
         node.kind = Node::Kind::Op;
         node.op = OpKind::Add;
         node.operands = {0, 5000};
         r.formulas.nodes.insert(r.formulas.nodes.begin(), node);
       }},
      {"not a scalar op",
       [](KernelRecipe& r) {
         Node node;
         node.kind = Node::Kind::Op;
         node.op = OpKind::Sum;
         r.formulas.nodes.push_back(node);
       }},
      {"which has rank",
       [](KernelRecipe& r) {
         Node node;
         node.kind = Node::Kind::InputExtent;
         node.input = 0;
         node.dim = 7;
         r.formulas.nodes.push_back(node);
       }},
      {"refers to formula", [](KernelRecipe& r) { r.grid[0] = 1 << 20; }},
      {"writes no parameter for output",
       [](KernelRecipe& r) {
         std::erase_if(r.parameters, [](const KernelRecipe::Parameter& p) {
           return p.kind == KernelParameter::Kind::OutputTensor;
         });
       }},
  };
  for (const auto& [expected, damage] : damages) {
    SCOPED_TRACE(expected);
    store_->tamper = [&](RuntimeDecisions& d) { damage(*d.segments[0].kernel); };
    const int64_t scheduler_calls = schedulerCallCount();
    testing::internal::CaptureStderr();
    const auto cache = run(*fusion, inputs);
    const std::shared_ptr<const FusionKernelRuntime> runtime = cache->lastRuntime();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_FALSE(runtime->kernels()[0].from_recipe);
    EXPECT_GT(schedulerCallCount(), scheduler_calls);  // scheduled again
    EXPECT_NE(log.find(expected), std::string::npos) << log;
  }
}

// A recipe whose kernel has left the kernel store (pruned) quietly schedules and compiles the
// segment again.
TEST_F(DamagedRecipeTest, AKernelMissingFromTheStoreIsCompiledAgain) {
  const auto kind = Normalization::Softmax;
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, DataType::Float32);
  const auto inputs = test::normalizationArguments(kind, DataType::Float32, 4, 256, 2);
  run(*fusion, inputs);
  CacheOptions options;
  options.directory = directory_;
  KernelCache(options).clear();
  const int64_t nvrtc_calls = driver::nvrtcCompileCount();
  testing::internal::CaptureStderr();
  const auto cache = run(*fusion, inputs);
  const std::shared_ptr<const FusionKernelRuntime> runtime = cache->lastRuntime();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(runtime->kernels()[0].from_recipe);
  EXPECT_EQ(driver::nvrtcCompileCount(), nvrtc_calls + 1);
}

}  // namespace
}  // namespace braze::serde
