// FusionExecutorCache on the CPU tier: one call from a definition to results, through the
// shipped schedulers (kernels compiled with NVRTC for sm_90; without a GPU the reference
// evaluator runs each segment), the input-signature and plan caches and their counters, the
// definition cache, forced schedulers, bad arguments and concurrent callers.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "braze/braze.h"
#include "braze/runtime/definition_cache.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "runtime/runtime_fusions.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::scaleBiasFusion;
using test::softmaxFusion;
using test::throwsError;

ExecutorCacheOptions shipped() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

std::vector<FusionArgument> hostArguments(const std::vector<HostTensor>& tensors) {
  return {tensors.begin(), tensors.end()};
}

HostTensor hostOutput(const FusionArgument& output) {
  return std::get<HostTensor>(output);
}

TEST(FusionExecutorCacheTest, RunsAFusionFromItsDefinitionAndCachesThePlan) {
  FusionExecutorCache cache(softmaxFusion(), shipped());
  test::RandomTensors random(1);
  const HostTensor x = random.uniform(DataType::Float32, {8, 256});
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), {x});

  std::vector<FusionArgument> outputs = cache.run(hostArguments({x}));
  ASSERT_EQ(outputs.size(), 1u);
  test::expectClose(hostOutput(outputs[0]), expected[0]);
  ExecutorCacheCounters counters = cache.counters();
  EXPECT_EQ(counters.runs, 1);
  EXPECT_EQ(counters.misses, 1);
  EXPECT_EQ(counters.hits, 0);
  EXPECT_EQ(counters.kernels_compiled, 1);
  EXPECT_GT(counters.compile_seconds, 0.0);

  outputs = cache.run(hostArguments({x}));
  test::expectClose(hostOutput(outputs[0]), expected[0]);
  counters = cache.counters();
  EXPECT_EQ(counters.runs, 2);
  EXPECT_EQ(counters.hits, 1);
  EXPECT_EQ(counters.misses, 1);
  EXPECT_EQ(counters.kernels_compiled, 1);

  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  ASSERT_NE(runtime, nullptr);
  ASSERT_EQ(runtime->segmentation().segments.size(), 1u);
  EXPECT_EQ(runtime->kernels()[0].choice.scheduler->id, "braze::inner_outer");
  EXPECT_NE(runtime->describe().find("segment 0: braze::inner_outer@1.9.0 (inner_outer{"),
            std::string::npos)
      << runtime->describe();
  EXPECT_NE(runtime->program().toString().find("launch segment 0 (T0) -> (%0)"), std::string::npos)
      << runtime->program().toString();
}

// prepare builds the runtime a run would, without running: the run that follows compiles
// nothing. For another architecture it schedules for that architecture's device.
TEST(FusionExecutorCacheTest, PrepareBuildsTheRuntimeWithoutRunning) {
  FusionExecutorCache cache(softmaxFusion(), shipped());
  test::RandomTensors random(2);
  const HostTensor x = random.uniform(DataType::Float32, {8, 256});
  const std::shared_ptr<const FusionKernelRuntime> prepared = cache.prepare(hostArguments({x}));
  ASSERT_NE(prepared, nullptr);
  EXPECT_EQ(prepared->kernels().size(), 1u);
  EXPECT_EQ(cache.counters().runs, 0);
  EXPECT_EQ(cache.counters().misses, 1);
  const std::vector<FusionArgument> outputs = cache.run(hostArguments({x}));
  test::expectClose(hostOutput(outputs[0]), evaluateFusionTensors(cache.fusion(), {x})[0]);
  EXPECT_EQ(cache.counters().misses, 1);
  EXPECT_EQ(cache.counters().kernels_compiled, 1);

  RunOptions sm100;
  sm100.arch = driver::GpuArch{10, 0, false};
  const std::shared_ptr<const FusionKernelRuntime> b200 = cache.prepare(hostArguments({x}), sm100);
  EXPECT_NE(b200, prepared);
  EXPECT_EQ(b200->kernels()[0].executor->compiledKernel().arch(), *sm100.arch);
  EXPECT_EQ(cache.counters().misses, 2);
}

// Random factories are scheduled by the pointwise scheduler as one kernel, compiled without a
// GPU; without one the run is the reference evaluator's, reproducible by seed and offset.
TEST(FusionExecutorCacheTest, RandomFactoriesArePointwiseKernels) {
  FusionExecutorCache cache(test::randomNoiseFusion(), shipped());
  test::RandomTensors random(3);
  const HostTensor x = random.uniform(DataType::Float32, {40, 300});
  std::vector<FusionArgument> arguments = {x, ScalarValue(int64_t{5}), ScalarValue(int64_t{9})};
  const std::shared_ptr<const FusionKernelRuntime> prepared = cache.prepare(arguments);
  ASSERT_EQ(prepared->kernels().size(), 1u);
  EXPECT_EQ(prepared->kernels()[0].choice.scheduler->id, "braze::pointwise");
  const std::vector<FusionArgument> first = cache.run(arguments);
  test::expectClose(hostOutput(first[1]), hostOutput(cache.run(arguments)[1]), test::Tolerance{});
  arguments[2] = ScalarValue(int64_t{10});
  EXPECT_FALSE(
      test::isClose(hostOutput(first[1]), hostOutput(cache.run(arguments)[1]), test::Tolerance{}));

  // A fusion of factories alone, without inputs: one pointwise kernel over constant extents.
  auto factories = std::make_unique<Fusion>();
  TensorView* noise = normal(*factories, {64, 100}, 0.0, 1.0);
  factories->addOutput(add(noise, full(*factories, {64, 100}, 1.0, DataType::Float32)));
  FusionExecutorCache alone(std::move(factories), shipped());
  const std::shared_ptr<const FusionKernelRuntime> runtime = alone.prepare({});
  ASSERT_EQ(runtime->kernels().size(), 1u);
  EXPECT_EQ(runtime->kernels()[0].choice.scheduler->id, "braze::pointwise");
}

TEST(FusionExecutorCacheTest, NewSizesReuseKernelsWhenTheParamsAreEqual) {
  FusionExecutorCache cache(softmaxFusion(1024), shipped());
  test::RandomTensors random(2);
  for (const int64_t rows : {64, 65, 64}) {
    const HostTensor x = random.uniform(DataType::Float32, {rows, 1024});
    const std::vector<FusionArgument> outputs = cache.run(hostArguments({x}));
    test::expectClose(hostOutput(outputs[0]), evaluateFusionTensors(cache.fusion(), {x})[0]);
  }
  // 64 rows: built; 65: a new exact signature whose params match (one row length), so the
  // kernel is reused; 64 again: the frozen plan.
  const ExecutorCacheCounters counters = cache.counters();
  EXPECT_EQ(counters.misses, 1);
  EXPECT_EQ(counters.heuristic_reuses, 1);
  EXPECT_EQ(counters.hits, 1);
  EXPECT_EQ(counters.kernels_compiled, 1);
  EXPECT_EQ(cache.numRuntimes(), 1u);
}

TEST(FusionExecutorCacheTest, ParamsThatChangeBuildAnotherRuntime) {
  FusionExecutorCache cache(softmaxFusion(), shipped());
  test::RandomTensors random(3);
  for (const int64_t n : {128, 4096}) {
    const HostTensor x = random.uniform(DataType::Float32, {4, n});
    const std::vector<FusionArgument> outputs = cache.run(hostArguments({x}));
    test::expectClose(hostOutput(outputs[0]), evaluateFusionTensors(cache.fusion(), {x})[0]);
  }
  const ExecutorCacheCounters counters = cache.counters();
  EXPECT_EQ(counters.misses, 2);
  EXPECT_EQ(counters.kernels_compiled, 2);
  EXPECT_EQ(cache.numRuntimes(), 2u);
}

TEST(FusionExecutorCacheTest, ForcedSchedulersAreTheirOwnRuntimesAndTheLeastRecentIsEvicted) {
  ExecutorCacheOptions options = shipped();
  options.runtime_capacity = 1;
  FusionExecutorCache cache(scaleBiasFusion(), options);
  test::RandomTensors random(4);
  const std::vector<HostTensor> inputs = {random.uniform(DataType::Float32, {16, 64}),
                                          random.uniform(DataType::Float32, {64}),
                                          random.uniform(DataType::Float32, {64})};
  const HostTensor expected = evaluateFusionTensors(cache.fusion(), inputs)[0];
  test::expectClose(hostOutput(cache.run(hostArguments(inputs))[0]), expected);
  RunOptions forced;
  forced.scheduler = "braze::pointwise";
  test::expectClose(hostOutput(cache.run(hostArguments(inputs), forced)[0]), expected);
  EXPECT_EQ(cache.lastRuntime()->kernels()[0].choice.scheduler->id, "braze::pointwise");
  ExecutorCacheCounters counters = cache.counters();
  EXPECT_EQ(counters.misses, 2);
  EXPECT_EQ(counters.evictions, 1);
  EXPECT_EQ(cache.numRuntimes(), 1u);
  // The automatic runtime was evicted with its plans: built again.
  test::expectClose(hostOutput(cache.run(hostArguments(inputs))[0]), expected);
  counters = cache.counters();
  EXPECT_EQ(counters.misses, 3);
  EXPECT_EQ(counters.evictions, 2);
}

TEST(FusionExecutorCacheTest, AForcedSchedulerThatDeclinesIsAnErrorWithItsReason) {
  FusionExecutorCache cache(softmaxFusion(), shipped());
  test::RandomTensors random(5);
  RunOptions forced;
  forced.scheduler = "braze::pointwise";
  EXPECT_TRUE(throwsError(
      [&] {
        cache.run(hostArguments({random.uniform(DataType::Float32, {4, 32})}), forced);
      },
      {"no scheduler accepted the fusion (forced: braze::pointwise)", "braze::pointwise@1.0.0",
       "declined"}));
  EXPECT_EQ(cache.numRuntimes(), 0u);
  EXPECT_EQ(cache.counters().misses, 0);
}

TEST(FusionExecutorCacheTest, BadArgumentsAreRefusedAndLeaveTheCacheAsItWas) {
  FusionExecutorCache cache(scaleBiasFusion(), shipped());
  test::RandomTensors random(6);
  const HostTensor x = random.uniform(DataType::Float32, {4, 8});
  const HostTensor w = random.uniform(DataType::Float32, {8});
  EXPECT_TRUE(throwsError(
      [&] {
        cache.run(hostArguments({x, w}));
      },
      {"FusionExecutorCache::run", "3", "2"}));
  EXPECT_TRUE(throwsError(
      [&] {
        cache.run(hostArguments({x, random.uniform(DataType::Float16, {8}), w}));
      },
      {"input 1", "float16", "float32"}));
  EXPECT_TRUE(throwsError([&] { cache.run(hostArguments({x, x, w})); }, {"input 1", "rank"}));
  EXPECT_TRUE(throwsError(
      [&] {
        cache.run(hostArguments({x, random.uniform(DataType::Float32, {9}), w}));
      },
      {"9", "8"}));
  EXPECT_TRUE(throwsError(
      [&] {
        cache.run({FusionArgument(x), ScalarValue(1.0), w});
      },
      {"input 1"}));
  EXPECT_EQ(cache.numRuntimes(), 0u);
  const ExecutorCacheCounters counters = cache.counters();
  EXPECT_EQ(counters.misses, 0);
  EXPECT_EQ(counters.kernels_compiled, 0);
  // And it still works.
  test::expectClose(hostOutput(cache.run(hostArguments({x, w, w}))[0]),
                    evaluateFusionTensors(cache.fusion(), {x, w, w})[0]);
}

TEST(FusionExecutorCacheTest, DumpsSegmentsAndTheHostProgram) {
  FusionExecutorCache cache(softmaxFusion(), shipped());
  test::RandomTensors random(7);
  std::ostringstream dump;
  RunOptions options;
  options.dump = DumpOptions::parse("segments,host_ir");
  options.dump.stream = &dump;
  cache.run(hostArguments({random.uniform(DataType::Float32, {2, 64})}), options);
  EXPECT_NE(dump.str().find("=== segments\nsegment 0: braze::inner_outer@1.9.0"), std::string::npos)
      << dump.str();
  EXPECT_NE(dump.str().find("=== host program\n%0 = allocate float32"), std::string::npos)
      << dump.str();
}

TEST(FusionExecutorCacheTest, ConcurrentRunsOnOneCacheAndOnSeveral) {
  FusionExecutorCache shared(softmaxFusion(), shipped());
  FusionExecutorCache other(scaleBiasFusion(), shipped());
  test::RandomTensors random(8);
  const std::vector<HostTensor> softmax_inputs = {random.uniform(DataType::Float32, {4, 64}),
                                                  random.uniform(DataType::Float32, {6, 64}),
                                                  random.uniform(DataType::Float32, {3, 512})};
  std::vector<HostTensor> softmax_expected;
  for (const HostTensor& x : softmax_inputs)
    softmax_expected.push_back(evaluateFusionTensors(shared.fusion(), {x})[0]);
  const std::vector<HostTensor> bias_inputs = {random.uniform(DataType::Float32, {5, 32}),
                                               random.uniform(DataType::Float32, {32}),
                                               random.uniform(DataType::Float32, {32})};
  const HostTensor bias_expected = evaluateFusionTensors(other.fusion(), bias_inputs)[0];

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        try {
          const size_t which = static_cast<size_t>(t + i) % softmax_inputs.size();
          const auto out = shared.run(hostArguments({softmax_inputs[which]}));
          if (!test::isClose(hostOutput(out[0]), softmax_expected[which])) ++failures;
          if (t % 2 == 0) {
            const auto bias = other.run(hostArguments(bias_inputs));
            if (!test::isClose(hostOutput(bias[0]), bias_expected)) ++failures;
          }
        } catch (const std::exception& error) {
          ADD_FAILURE() << error.what();
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  const ExecutorCacheCounters counters = shared.counters();
  EXPECT_EQ(counters.runs, 48);
  EXPECT_EQ(counters.hits + counters.heuristic_reuses + counters.misses, 48);
  // At most one runtime per distinct params (row lengths 64 and 512, maybe rows per block).
  EXPECT_LE(counters.misses, 3);
  EXPECT_EQ(counters.kernels_compiled, counters.misses);
}

TEST(FusionExecutorCacheTest, AFusionNoSchedulerTakesWholeRunsAsSegments) {
  FusionExecutorCache cache(test::centeredSoftmaxFusion(), shipped());
  test::RandomTensors random(9);
  const HostTensor x = random.uniform(DataType::Float32, {16, 96});
  test::expectClose(hostOutput(cache.run(hostArguments({x}))[0]),
                    evaluateFusionTensors(cache.fusion(), {x})[0]);
  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  ASSERT_EQ(runtime->segmentation().segments.size(), 2u) << runtime->describe();
  EXPECT_EQ(runtime->kernels()[0].choice.scheduler->id, "braze::reduction");
  EXPECT_EQ(runtime->kernels()[1].choice.scheduler->id, "braze::inner_outer");
  EXPECT_EQ(cache.counters().kernels_compiled, 2);
  // Asked why: the inner-outer scheduler was tried first for the column mean and said why not.
  EXPECT_NE(runtime->explain().find("braze::inner_outer@1.9.0 declined at canScheduleCompileTime"),
            std::string::npos)
      << runtime->explain();
  // The column mean lives from the first launch to the second, then goes back to the pool.
  const std::string program = runtime->program().toString();
  EXPECT_NE(program.find("launch segment 1"), std::string::npos) << program;
  EXPECT_NE(program.find("deallocate %0"), std::string::npos) << program;
}

// index_select of a computed tensor, stride_order and segment_set: every segment's kernel is
// compiled, and the column-major output comes back with its strides.
TEST(FusionExecutorCacheTest, IndexingAndCopyOpsRunAsSegments) {
  FusionExecutorCache cache(test::indexingAndCopiesFusion(), shipped());
  test::RandomTensors random(19);
  const HostTensor x = random.uniform(DataType::Float32, {24, 40});
  const HostTensor rows = test::tensorOfIntegers(DataType::Int64, {5}, {3, -1, 0, 23, 3});
  const std::vector<FusionArgument> outputs = cache.run(hostArguments({x, rows}));
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), {x, rows});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(hostOutput(outputs[0]).strides(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(expected[0].strides(), (std::vector<int64_t>{1, 5}));
  test::expectClose(hostOutput(outputs[0]), expected[0]);
  test::expectClose(hostOutput(outputs[1]), expected[1]);
  const std::shared_ptr<const FusionKernelRuntime> runtime = cache.lastRuntime();
  // exp (read at data-dependent rows) with the copy (both read x), the rows laid out
  // column-major, and -copy (never in the copy's kernel).
  ASSERT_EQ(runtime->segmentation().segments.size(), 3u) << runtime->describe();
  EXPECT_EQ(cache.counters().kernels_compiled, 3);
  for (const auto& kernel : runtime->kernels())
    EXPECT_EQ(kernel.choice.scheduler->id, "braze::pointwise");
}

TEST(FusionExecutorCacheTest, WritesTheSegmentationAsAGraphvizFile) {
  FusionExecutorCache cache(test::centeredSoftmaxFusion(), shipped());
  test::RandomTensors random(10);
  std::ostringstream dump;
  RunOptions options;
  options.dump = DumpOptions::parse("segments_dot");
  options.dump.stream = &dump;
  options.dump.folder =
      std::filesystem::temp_directory_path() / ("braze_dot_test_" + std::to_string(::getpid()));
  cache.run(hostArguments({random.uniform(DataType::Float32, {8, 64})}), options);
  const std::string prefix = "=== segments graph: ";
  ASSERT_EQ(dump.str().rfind(prefix, 0), 0u) << dump.str();
  const std::string path = dump.str().substr(prefix.size(), dump.str().size() - prefix.size() - 1);
  std::ifstream file(path);
  const std::string dot((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(dot.find("digraph"), std::string::npos) << dot;
  EXPECT_NE(dot.find("braze::reduction@1.0.0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("inner_outer{"), std::string::npos) << dot;  // params summary
  EXPECT_NE(dot.find("256 B"), std::string::npos) << dot;         // the column mean: 64 floats
  std::filesystem::remove_all(options.dump.folder);
}

TEST(DefinitionCacheTest, StructurallyEqualFusionsShareOneExecutorCache) {
  DefinitionCache definitions(2, shipped());
  const std::unique_ptr<Fusion> first = softmaxFusion();
  const std::unique_ptr<Fusion> second = softmaxFusion();
  const std::shared_ptr<FusionExecutorCache> a = definitions.get(*first);
  EXPECT_EQ(definitions.get(*second), a);
  const std::shared_ptr<FusionExecutorCache> b = definitions.get(*scaleBiasFusion());
  EXPECT_NE(b, a);
  DefinitionCacheCounters counters = definitions.counters();
  EXPECT_EQ(counters.hits, 1);
  EXPECT_EQ(counters.misses, 2);
  // A third definition evicts the least recently used (the softmax).
  definitions.get(*softmaxFusion(128));
  EXPECT_EQ(definitions.size(), 2u);
  EXPECT_EQ(definitions.counters().evictions, 1);
  EXPECT_NE(definitions.get(*first), a);  // made again
}

}  // namespace
}  // namespace braze
