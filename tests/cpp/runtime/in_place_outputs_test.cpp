// Outputs written into inputs through the executor cache on the CPU tier: the input the caller
// passed holds the result afterwards and is what the run returns; the host program writes in
// place where that is safe, and otherwise computes into a buffer and copies it after every
// other reader of the input.

#include <gtest/gtest.h>

#include <sstream>

#include "braze/braze.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

ExecutorCacheOptions shipped() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

std::string hostProgramOf(FusionExecutorCache& cache, const std::vector<HostTensor>& inputs) {
  std::ostringstream dump;
  RunOptions options;
  options.dump = DumpOptions::parse("host_ir");
  options.dump.stream = &dump;
  cache.run({inputs.begin(), inputs.end()}, options);
  return dump.str();
}

TEST(InPlaceOutputsTest, AnSgdStepIsWrittenIntoTheParameter) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* updated = sub(p, mul(g, 0.125));
  fusion->addOutput(updated);
  fusion->aliasOutputToInput(updated, p);
  FusionExecutorCache cache(std::move(fusion), shipped());

  test::RandomTensors random(3);
  const HostTensor param = random.uniform(DataType::Float32, {5, 70});
  const HostTensor grad = random.uniform(DataType::Float32, {5, 70});
  const HostTensor expected = evaluateFusionTensors(cache.fusion(), {param, grad})[0];
  const std::string program = hostProgramOf(cache, {param, grad});
  EXPECT_NE(program.find("written in place"), std::string::npos) << program;
  EXPECT_EQ(program.find("allocate"), std::string::npos) << program;
  test::expectClose(param, expected);

  // A second step reads the first one's result.
  const HostTensor twice = evaluateFusionTensors(cache.fusion(), {param, grad})[0];
  const std::vector<FusionArgument> outputs = cache.run({param, grad});
  EXPECT_EQ(std::get<HostTensor>(outputs[0]).data(), param.data());
  test::expectClose(param, twice);
}

TEST(InPlaceOutputsTest, AnInputReadAgainIsCopiedIntoAfterItsLastReader) {
  // x * 2 into x, while a row sum of the old x is another output.
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* doubled = mul(x, 2.0);
  fusion->addOutput(doubled);
  fusion->addOutput(sum(x, {1}));
  fusion->aliasOutputToInput(doubled, x);
  FusionExecutorCache cache(std::move(fusion), shipped());

  test::RandomTensors random(4);
  const HostTensor input = random.uniform(DataType::Float32, {6, 90});
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), {input});
  const HostTensor before = input.contiguous();
  const std::string program = hostProgramOf(cache, {before});
  // The copy into x is the last launch: the sum reads x before it.
  const size_t in_place = program.find("written in place");
  ASSERT_NE(in_place, std::string::npos) << program;
  EXPECT_EQ(program.find("launch", program.find("launch", in_place) + 1), std::string::npos)
      << program;
  test::expectClose(before, expected[0]);

  const HostTensor again = input.contiguous();
  const std::vector<FusionArgument> outputs = cache.run({again});
  test::expectClose(std::get<HostTensor>(outputs[1]), expected[1]);
  test::expectClose(again, expected[0]);
}

TEST(InPlaceOutputsTest, LaterKernelsReadAnOutputWrittenInPlaceFromItsInput) {
  // x * 2 into x, its row sums and its running sums down the columns: a reduction and a scan,
  // so another kernel than the one that writes x reads the result.
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* doubled = mul(x, 2.0);
  fusion->addOutput(doubled);
  fusion->addOutput(sum(doubled, {1}));
  fusion->addOutput(cumsum(doubled, 0));
  fusion->aliasOutputToInput(doubled, x);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(7);
  const HostTensor input = random.uniform(DataType::Float32, {4, 50});
  const HostTensor original = input.contiguous();
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), {input});
  const std::string program = hostProgramOf(cache, {input});
  // The second launch reads x (T0), where the first wrote the result.
  EXPECT_NE(program.find("launch segment 1 (T0)"), std::string::npos) << program;
  test::expectClose(input, expected[0]);
  const std::vector<FusionArgument> outputs = cache.run({original});
  test::expectClose(std::get<HostTensor>(outputs[1]), expected[1]);
  test::expectClose(std::get<HostTensor>(outputs[2]), expected[2]);
}

TEST(InPlaceOutputsTest, OutputsOfOtherSizesThanTheirInputAreRefused) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* into = makeSymbolicTensor(*fusion, 1);
  TensorView* source = makeSymbolicTensor(*fusion, 1);
  TensorView* result = exp(source);
  fusion->addOutput(result);
  fusion->aliasOutputToInput(result, into);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(5);
  const HostTensor small = random.uniform(DataType::Float32, {8});
  const HostTensor large = random.uniform(DataType::Float32, {9});
  try {
    cache.run({small, large});
    FAIL() << "sizes that differ were accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("is written into input"), std::string::npos)
        << error.what();
  }
  const std::vector<FusionArgument> outputs =
      cache.run({small, random.uniform(DataType::Float32, {8})});
  EXPECT_EQ(std::get<HostTensor>(outputs[0]).data(), small.data());
}

TEST(InPlaceOutputsTest, AScatterIntoACacheWritesTheCacheInPlace) {
  // cache[b, h, position[b, h, 0, d], d] = step[b, h, 0, d]: one new entry per row.
  auto fusion = std::make_unique<Fusion>();
  TensorView* cache = makeSymbolicTensor(*fusion, 4);
  TensorView* position = makeSymbolicTensor(*fusion, 4, DataType::Int64);
  TensorView* step = makeSymbolicTensor(*fusion, 4);
  TensorView* written = scatter(cache, 2, position, step);
  fusion->addOutput(written);
  fusion->aliasOutputToInput(written, cache);
  FusionExecutorCache executor(std::move(fusion), shipped());

  test::RandomTensors random(6);
  const HostTensor kv = random.uniform(DataType::Float32, {2, 3, 10, 8});
  const HostTensor at = random.uniform(DataType::Int64, {2, 3, 1, 8}, 0, 9);
  const HostTensor values = random.uniform(DataType::Float32, {2, 3, 1, 8});
  const HostTensor expected = evaluateFusionTensors(executor.fusion(), {kv, at, values})[0];
  const std::string program = hostProgramOf(executor, {kv, at, values});
  // The matches take kernels of their own; the last one stores into the cache itself.
  const size_t in_place = program.find("written in place");
  ASSERT_NE(in_place, std::string::npos) << program;
  EXPECT_NE(program.find("(T0, ", program.find("launch", in_place)), std::string::npos) << program;
  test::expectClose(kv, expected);
}

}  // namespace
}  // namespace braze
