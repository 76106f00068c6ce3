// Stream-parallel fusions on the CPU tier: the host programs their stream axes lower to (golden
// dumps), run slice by slice by the reference evaluator and compared with the whole fusion's
// reference result, and the errors for stream axes that cannot be sliced.

#include <gtest/gtest.h>

#include <sstream>

#include "braze/braze.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/prepare_for_scheduling.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"
#include "host/stream_fusions.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using test::streamOver;
using test::throwsError;

ExecutorCacheOptions shipped() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

struct StreamRun {
  std::string program;
  std::vector<HostTensor> outputs;
  std::vector<HostTensor> expected;
};

// Runs `fusion` on `inputs` (on the CPU, GPU or not: the reference evaluator runs each launch) with
// the host program dumped, and evaluates the whole fusion for comparison.
StreamRun run(std::unique_ptr<Fusion> fusion, const std::vector<HostTensor>& inputs,
              int stream_pool = 4) {
  FusionExecutorCache cache(std::move(fusion), shipped());
  std::ostringstream dump;
  RunOptions options;
  options.dump = DumpOptions::parse("host_ir");
  options.dump.stream = &dump;
  options.stream_pool = stream_pool;
  options.reference_evaluator = true;  // the same program with or without a GPU
  StreamRun result;
  for (const FusionArgument& output : cache.run({inputs.begin(), inputs.end()}, options))
    result.outputs.push_back(std::get<HostTensor>(output));
  result.expected = evaluateFusionTensors(cache.fusion(), inputs);
  const std::string text = dump.str();
  const size_t start = text.find("=== host program\n");
  result.program = start == std::string::npos ? text : text.substr(start + 17);
  return result;
}

void expectMatches(const StreamRun& run) {
  ASSERT_EQ(run.outputs.size(), run.expected.size());
  for (size_t i = 0; i < run.outputs.size(); ++i)
    test::expectClose(run.outputs[i], run.expected[i]);
}

TEST(StreamLoopsTest, OneSetOfOpsIsOneLoopWithShorterLastSlice) {
  std::unique_ptr<Fusion> fusion = test::streamedPointwise(4);
  test::RandomTensors random(1);
  // 10 rows in 4 slices: 3, 3, 3 and 1.
  const StreamRun result = run(std::move(fusion), {random.uniform(DataType::Float32, {10, 33})});
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1]  (T3)\n"
            "for loop 0 over T1 axis 0 in 4 slices (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %1 = select T0 dim 0, slice of loop 0\n"
            "  %2 = select %0 dim 0, slice of loop 0\n"
            "  launch segment 0 (%1) -> (%2)\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "return (%0)\n");
}

TEST(StreamLoopsTest, TwoSetsMergeIntoOneLoopAndShareARing) {
  std::unique_ptr<Fusion> fusion = test::streamedTwoKernels();
  test::RandomTensors random(2);
  const StreamRun result =
      run(std::move(fusion), {random.uniform(DataType::Float32, {7, 20})}, /*stream_pool=*/2);
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1] ring of 2 slices of loop 0 along dim 0  (T2)\n"
            "%1 = allocate float32[s0, s1]  (T3)\n"
            "for loop 0 over T1 axis 0 per index (extent s0) on 2 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %2 = select T0 dim 0, slice of loop 0\n"
            "  %3 = select %0 dim 0, ring slot of loop 0\n"
            "  launch segment 0 (%2) -> (%3)\n"
            "  %4 = select %1 dim 0, slice of loop 0\n"
            "  launch segment 1 (%3) -> (%4)\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "deallocate %0\n"
            "return (%1)\n");
}

TEST(StreamLoopsTest, AnUnparallelizedMiddleSplitsTheLoops) {
  // The multiply has no stream axis: it runs between two loops.
  std::unique_ptr<Fusion> fusion = test::streamedPointwise(4, /*stream_middle=*/false);
  test::RandomTensors random(3);
  const StreamRun result = run(std::move(fusion), {random.uniform(DataType::Float32, {10, 33})});
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1]  (T1)\n"
            "for loop 0 over T1 axis 0 in 4 slices (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %1 = select T0 dim 0, slice of loop 0\n"
            "  %2 = select %0 dim 0, slice of loop 0\n"
            "  launch segment 0 (%1) -> (%2)\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "%3 = allocate float32[s0, s1]  (T2)\n"
            "launch segment 1 (%0) -> (%3)\n"
            "deallocate %0\n"
            "%4 = allocate float32[s0, s1]  (T3)\n"
            "for loop 1 over T3 axis 0 in 4 slices (extent s0) on 4 streams:\n"
            "  set_current_stream loop 1 stream\n"
            "  synchronize %s0\n"
            "  %5 = select %3 dim 0, slice of loop 1\n"
            "  %6 = select %4 dim 0, slice of loop 1\n"
            "  launch segment 2 (%5) -> (%6)\n"
            "set_current_stream %s0\n"
            "synchronize loop 1 streams\n"
            "deallocate %3\n"
            "return (%4)\n");
}

TEST(StreamLoopsTest, AReductionInsideALoopSlicedByLength) {
  std::unique_ptr<Fusion> fusion = test::streamedSoftmax(3);
  test::RandomTensors random(4);
  const StreamRun result = run(std::move(fusion), {random.uniform(DataType::Float32, {11, 64})});
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1]  (T7)\n"
            "for loop 0 over T1 axis 0 in slices of 3 (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %1 = select T0 dim 0, slice of loop 0\n"
            "  %2 = select %0 dim 0, slice of loop 0\n"
            "  launch segment 0 (%1) -> (%2)\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "return (%0)\n");
}

TEST(StreamLoopsTest, AMatmulWithAStreamParallelM) {
  std::unique_ptr<Fusion> fusion = test::streamedMatmul(2);
  test::RandomTensors random(5);
  const StreamRun result = run(std::move(fusion), {random.uniform(DataType::BFloat16, {256, 64}),
                                                   random.uniform(DataType::BFloat16, {64, 128})});
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate bfloat16[s0, s3]  (T2)\n"
            "for loop 0 over T2 axis 0 in 2 slices (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %1 = select T0 dim 0, slice of loop 0\n"
            "  %2 = select %0 dim 0, slice of loop 0\n"
            "  launch segment 0 (%1, T1) -> (%2)\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "return (%0)\n");
}

TEST(StreamLoopsTest, ALoopResultIsReadWholeAfterTheLoop) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* columns = sum(y, {0});  // every row of y: after the loop
  fusion->addOutput(columns);
  fusion->addOutput(y);
  streamOver(y, 0, 3);
  test::RandomTensors random(10);
  const StreamRun result = run(std::move(fusion), {random.uniform(DataType::Float32, {8, 24})});
  expectMatches(result);
  EXPECT_NE(result.program.find("synchronize loop 0 streams\n%3 = allocate float32"),
            std::string::npos)
      << result.program;
}

TEST(StreamLoopsTest, AnOutputWrittenIntoItsInputSliceBySlice) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* updated = sub(p, mul(g, 0.1));
  fusion->addOutput(updated);
  fusion->aliasOutputToInput(updated, p);
  for (TensorView* tv :
       {fusion->outputs()[0]->as<TensorView>(), updated->definition()->input(1)->as<TensorView>()})
    streamOver(tv, 0, 2);
  test::RandomTensors random(11);
  const HostTensor p_value = random.uniform(DataType::Float32, {6, 16});
  const HostTensor g_value = random.uniform(DataType::Float32, {6, 16});
  const HostTensor p_before = p_value.contiguous();
  FusionExecutorCache cache(std::move(fusion), shipped());
  const HostTensor expected = evaluateFusionTensors(cache.fusion(), {p_before, g_value})[0];
  // On the reference evaluator on every machine: a GPU run stages host inputs instead
  // (AHostInputWrittenInPlaceGetsEachSliceBack).
  RunOptions options;
  options.reference_evaluator = true;
  const std::vector<FusionArgument> outputs = cache.run({p_value, g_value}, options);
  test::expectClose(std::get<HostTensor>(outputs[0]), expected);
  test::expectClose(p_value, expected);  // written in place, slice by slice
  const std::string program = cache.lastRuntime()->program().toString();
  EXPECT_NE(program.find("written in place"), std::string::npos) << program;
  EXPECT_NE(program.find("for loop 0"), std::string::npos) << program;
}

TEST(StreamLoopsTest, ANewRowCountReusesTheKernels) {
  FusionExecutorCache cache(test::streamedSoftmax(4), shipped());
  test::RandomTensors random(12);
  for (int64_t rows : {9, 13, 4}) {
    const HostTensor x = random.uniform(DataType::Float32, {rows, 32});
    const std::vector<FusionArgument> outputs = cache.run({x});
    test::expectClose(std::get<HostTensor>(outputs[0]),
                      evaluateFusionTensors(cache.fusion(), {x})[0]);
  }
  EXPECT_EQ(cache.counters().misses, 1);
}

// A layer norm written with var_mean (a Welford, which the executor cache rewrites as two sums)
// and streamed whole through transform and parallel-type propagation: the sums the rewrite
// makes inherit the stream axis, so the loop holds the whole normalization in one kernel.
TEST(StreamLoopsTest, ARewrittenWelfordStaysInItsLoop) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  const VarMeanResult stats = var_mean(x, {1}, /*correction=*/0, /*keepdim=*/true);
  TensorView* y = mul(sub(x, stats.mean), rsqrt(add(stats.var, 1e-5)));
  fusion->addOutput(y);
  streamOver(y, 0, 4);
  propagateTransforms(y);
  propagateParallelTypes(y);
  test::RandomTensors random(15);
  const StreamRun result = run(std::move(fusion), {random.uniform(DataType::Float32, {9, 48})});
  expectMatches(result);
  EXPECT_NE(result.program.find("for loop 0"), std::string::npos) << result.program;
  EXPECT_EQ(result.program.find("for loop 1"), std::string::npos) << result.program;
  EXPECT_EQ(result.program.find("launch segment 1"), std::string::npos) << result.program;
}

// A runtime whose host program copies its host inputs itself and its results back (as a GPU
// run of host tensors does): its program, and its results run slice by slice on the CPU.
StreamRun runStaged(const Fusion& definition, const std::vector<HostTensor>& inputs) {
  const std::unique_ptr<Fusion> fusion = prepareCopyForScheduling(definition);
  const std::vector<FusionArgument> arguments(inputs.begin(), inputs.end());
  RunContext context = RunContext::of(*fusion, arguments);
  context.staged_inputs.assign(inputs.size(), true);
  const FusionKernelRuntime runtime(*fusion, test::shippedSchedulers(), context, {});
  StreamRun result;
  result.program = runtime.program().toString();
  result.outputs = runtime.runOnHost(arguments, context);
  result.expected = evaluateFusionTensors(*fusion, inputs);
  return result;
}

TEST(StreamLoopsTest, HostInputsAreCopiedSliceBySliceIntoARing) {
  test::RandomTensors random(13);
  const StreamRun result =
      runStaged(*test::streamedPointwise(4), {random.uniform(DataType::Float32, {10, 33})});
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1] ring of 4 slices of loop 0 along dim 0  (T3)\n"
            "%1 = allocate_host float32[s0, s1]  (T3)\n"
            "%2 = allocate float32[s0, s1] ring of 4 slices of loop 0 along dim 0  (T0)\n"
            "for loop 0 over T1 axis 0 in 4 slices (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %3 = select T0 dim 0, slice of loop 0\n"
            "  %4 = select %2 dim 0, ring slot of loop 0\n"
            "  copy_to_device %3 -> %4\n"
            "  %5 = select %0 dim 0, ring slot of loop 0\n"
            "  launch segment 0 (%4) -> (%5)\n"
            "  %6 = select %1 dim 0, slice of loop 0\n"
            "  copy_to_host %5 -> %6\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "deallocate %0\n"
            "deallocate %2\n"
            "return (%1)\n");
}

TEST(StreamLoopsTest, AHostInputReadOutsideALoopIsCopiedWholeFirst) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  fusion->addOutput(y);
  fusion->addOutput(sum(x, {0}));  // reads every row: outside the loop
  streamOver(y, 0, 2);
  test::RandomTensors random(14);
  const StreamRun result = runStaged(*fusion, {random.uniform(DataType::Float32, {6, 40})});
  expectMatches(result);
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1]  (T0)\n"
            "copy_to_device T0 -> %0\n"
            "%1 = allocate float32[s0, s1] ring of 4 slices of loop 0 along dim 0  (T1)\n"
            "%2 = allocate_host float32[s0, s1]  (T1)\n"
            "for loop 0 over T1 axis 0 in 2 slices (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %3 = select %0 dim 0, slice of loop 0\n"
            "  %4 = select %1 dim 0, ring slot of loop 0\n"
            "  launch segment 0 (%3) -> (%4)\n"
            "  %5 = select %2 dim 0, slice of loop 0\n"
            "  copy_to_host %4 -> %5\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "deallocate %1\n"
            "%6 = allocate float32[s1]  (T2)\n"
            "launch segment 1 (%0) -> (%6)\n"
            "%7 = allocate_host float32[s1]  (T2)\n"
            "copy_to_host %6 -> %7\n"
            "deallocate %0\n"
            "deallocate %6\n"
            "return (%2, %7)\n");
}

// An output written into a host input: computed into a device ring slot by slot and copied
// back into the input's slice, which is what the run returns; the caller's memory holds the
// update afterwards.
TEST(StreamLoopsTest, AHostInputWrittenInPlaceGetsEachSliceBack) {
  std::unique_ptr<Fusion> fusion = test::streamedInPlaceUpdate(2);
  test::RandomTensors random(16);
  const HostTensor p_value = random.uniform(DataType::Float32, {6, 40});
  const HostTensor g_value = random.uniform(DataType::Float32, {6, 40});
  const HostTensor expected = evaluateFusionTensors(*fusion, {p_value, g_value})[0];
  const StreamRun result = runStaged(*fusion, {p_value, g_value});
  EXPECT_EQ(result.program,
            "%s0 = get_current_stream\n"
            "%0 = allocate float32[s0, s1] ring of 4 slices of loop 0 along dim 0  (T3)\n"
            "%1 = allocate float32[s0, s1] ring of 4 slices of loop 0 along dim 0  (T0)\n"
            "%4 = allocate float32[s2, s3] ring of 4 slices of loop 0 along dim 0  (T1)\n"
            "for loop 0 over T2 axis 0 in 2 slices (extent s2) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %2 = select T0 dim 0, slice of loop 0\n"
            "  %3 = select %1 dim 0, ring slot of loop 0\n"
            "  copy_to_device %2 -> %3\n"
            "  %5 = select T1 dim 0, slice of loop 0\n"
            "  %6 = select %4 dim 0, ring slot of loop 0\n"
            "  copy_to_device %5 -> %6\n"
            "  %7 = select %0 dim 0, ring slot of loop 0\n"
            "  launch segment 0 (%3, %6) -> (%7)\n"
            "  %8 = select T0 dim 0, slice of loop 0\n"
            "  copy_to_host %7 -> %8\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "deallocate %0\n"
            "deallocate %1\n"
            "deallocate %4\n"
            "return (T0)\n");
  ASSERT_EQ(result.outputs.size(), 1u);
  test::expectClose(result.outputs[0], expected);
  test::expectClose(p_value, expected);  // the caller's memory
}

TEST(StreamLoopsTest, AStreamAxisInsideTheRowsIsRefused) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  fusion->addOutput(y);
  streamOver(y, 1, 4);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(6);
  const HostTensor input = random.uniform(DataType::Float32, {8, 16});
  EXPECT_TRUE(throwsError([&] { cache.run({input}); },
                          {"T1 is sliced along dim 1", "dim 0 is outside it in memory",
                           "not one stride step", "outermost dim"}));
}

TEST(StreamLoopsTest, ATensorWithTwoDimsOnTheStreamAxisIsRefused) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = add(x, permute(x, {1, 0}));
  fusion->addOutput(y);
  streamOver(y);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(7);
  const HostTensor input = random.uniform(DataType::Float32, {8, 8});
  EXPECT_TRUE(throwsError([&] { cache.run({input}); },
                          {"T2: dims 0 and 1 are both mapped", "stream axis"}));
}

TEST(StreamLoopsTest, AReshapeThatReadsItsInputWholeIsRefused) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 1);
  TensorView* y = reshape(x, {Operand(int64_t{4}), Operand(int64_t{-1})});
  fusion->addOutput(y);
  streamOver(y);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(8);
  const HostTensor input = random.uniform(DataType::Float32, {32});
  EXPECT_TRUE(throwsError([&] { cache.run({input}); },
                          {"reshape", "T0 (input 0)", "no dim that the op maps to that axis"}));
}

TEST(StreamLoopsTest, AForcedSchedulerCannotSpanSeveralStages) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = neg(y);
  fusion->addOutput(z);
  streamOver(y);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(9);
  const HostTensor input = random.uniform(DataType::Float32, {4, 8});
  RunOptions options;
  options.scheduler = "pointwise";
  EXPECT_TRUE(throwsError([&] { cache.run({input}, options); },
                          {"forced for the whole fusion", "2 stages", "stage 0: loop over T1"}));
}

TEST(StreamLoopsTest, TheReferenceEvaluatorOptionRefusesDeviceTensors) {
  FusionExecutorCache cache(test::streamedPointwise(4), shipped());
  RunOptions options;
  options.reference_evaluator = true;
  const DeviceTensor device_input =
      DeviceTensor::borrow(DataType::Float32, {8, 16}, {16, 1}, 0, 0, nullptr);
  EXPECT_TRUE(throwsError([&] { cache.run({device_input}, options); },
                          {"reference_evaluator", "device tensors", "pass host tensors"}));
  EXPECT_EQ(cache.counters().misses, 0);
}

TEST(StreamLoopsTest, ATraceCannotTimeACudaGraph) {
  FusionExecutorCache cache(test::streamedPointwise(4), shipped());
  RunTrace trace;
  RunOptions options;
  options.trace = &trace;
  options.cuda_graph = true;
  const HostTensor x = test::RandomTensors(30).uniform(DataType::Float32, {8, 16});
  EXPECT_TRUE(
      throwsError([&] { cache.run({x}, options); }, {"RunOptions::trace", "leave cuda_graph off"}));
}

}  // namespace
}  // namespace braze
