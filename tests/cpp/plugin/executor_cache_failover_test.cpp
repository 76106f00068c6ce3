// The executor cache with a scheduler whose schedule fails after it accepted a fusion: the
// failure is recorded with its reason and the next scheduler that accepts the fusion is used.

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "plugin/plugin_fixtures.h"

namespace braze {
namespace {

// A [rows, cols] float32 input of values `step` apart from `start`.
HostTensor rampInput(int64_t rows, int64_t cols, double step, double start) {
  HostTensor input = HostTensor::empty(DataType::Float32, {rows, cols});
  for (int64_t i = 0; i < input.numel(); ++i)
    input.setFlat(i, step * static_cast<double>(i) + start);
  return input;
}

// Runs `cache` on `input` and expects the reference evaluator's result exactly.
void expectRunMatchesReference(FusionExecutorCache& cache, const HostTensor& input) {
  const std::vector<FusionArgument> outputs = cache.run({input});
  const HostTensor expected = evaluateFusionTensors(cache.fusion(), {input})[0];
  const HostTensor& actual = std::get<HostTensor>(outputs[0]);
  for (int64_t i = 0; i < expected.numel(); ++i)
    EXPECT_EQ(toDouble(actual.atFlat(i)), toDouble(expected.atFlat(i))) << "element " << i;
}

// x + x of a symbolic 2-D float tensor, and the cache options that schedule with `registry`.
std::unique_ptr<Fusion> doubling() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  fusion->addOutput(add(x, x));
  return fusion;
}
ExecutorCacheOptions optionsWith(const SchedulerRegistry& registry) {
  ExecutorCacheOptions options;
  options.registry = &registry;
  return options;
}

TEST(ExecutorCacheFailoverTest, ASchedulerThatFailsIsReportedAndTheNextIsUsed) {
  test::IsolatedOptions isolated;
  isolated.install.install("fixture_throws", "test::throws", "1.0.0", 1);
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  const SchedulerRegistry registry(isolated.options);
  FusionExecutorCache cache(doubling(), optionsWith(registry));

  const HostTensor input = rampInput(3, 5, 0.5, -3);
  expectRunMatchesReference(cache, input);

  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  EXPECT_EQ(runtime->kernels()[0].choice.scheduler->id, "test::good");
  EXPECT_NE(runtime->explain().find("test::throws@1.0.0 failed at schedule, lower and compile"),
            std::string::npos)
      << runtime->explain();
  EXPECT_NE(runtime->explain().find("fixture schedule failed on purpose"), std::string::npos)
      << runtime->explain();

  // Forced by name, the failing scheduler is an error with its reason, and nothing is cached.
  RunOptions forced;
  forced.scheduler = "test::throws";
  try {
    cache.run({input}, forced);
    ADD_FAILURE() << "a forced scheduler that fails must not fall back";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("fixture schedule failed on purpose"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(cache.numRuntimes(), 1u);
}

// Plugins that could not be loaded (here: no scanner to probe them) leave no scheduler; the
// run's error says so and why, not only that no scheduler accepted the first op.
TEST(ExecutorCacheFailoverTest, WithNoSchedulerLoadedTheErrorSaysWhy) {
  test::IsolatedOptions isolated;
  isolated.install.install("fixture_good", "test::good", "1.0.0");
  isolated.options.scanner = std::filesystem::path();
  const SchedulerRegistry registry(isolated.options);
  FusionExecutorCache cache(doubling(), optionsWith(registry));
  try {
    cache.run({rampInput(3, 5, 0.5, -3)});
    ADD_FAILURE() << "no scheduler is loaded; the run must fail";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("no scheduler accepts"), std::string::npos) << message;
    EXPECT_NE(message.find("no scheduler is available"), std::string::npos) << message;
    EXPECT_NE(message.find("test::good@1.0.0"), std::string::npos) << message;
    EXPECT_NE(message.find("no scanner"), std::string::npos) << message;
  }
}

TEST(ExecutorCacheFailoverTest, ASegmentNoSchedulerCanBuildIsSplit) {
  // The only scheduler accepts the whole fusion but builds single ops only: the runtime
  // segments again without that segment and runs the fusion as one kernel per op.
  test::IsolatedOptions isolated;
  isolated.install.install("fixture_one_op", "test::one_op", "1.0.0");
  const SchedulerRegistry registry(isolated.options);
  ExecutorCacheOptions options;
  options.registry = &registry;
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  fusion->addOutput(mul(exp(x), 2.0));
  FusionExecutorCache cache(std::move(fusion), options);

  const HostTensor input = rampInput(4, 6, 0.25, -2);
  expectRunMatchesReference(cache, input);
  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  EXPECT_EQ(runtime->segmentation().segments.size(), 2u) << runtime->describe();

  // Forced on the whole fusion, there is nothing to split: the error says why.
  RunOptions forced;
  forced.scheduler = "test::one_op";
  try {
    cache.run({input}, forced);
    ADD_FAILURE() << "a forced scheduler that cannot build the fusion must fail";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("fixture builds one op only"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace braze
