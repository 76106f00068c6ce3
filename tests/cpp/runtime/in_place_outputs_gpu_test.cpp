// Outputs written into inputs on the GPU: the kernel stores into the input's memory (no
// buffer, no copy) where that is safe, through launches, CUDA graphs and host tensors; an
// input that other kernels read is written by a copy after them.

#include <gtest/gtest.h>

#include <cmath>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/ops/shape.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

class InPlaceOutputsGpuTest : public ::testing::Test {
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

// Adam's moment updates and step, each written into its input (bfloat16 parameters, float32
// moments): m = 0.9 m + 0.1 g; v = 0.999 v + 0.001 g^2; p = p - lr m / (sqrt(v) + eps).
std::unique_ptr<Fusion> adamStep() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* g = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* m = makeSymbolicTensor(*fusion, 2);
  TensorView* v = makeSymbolicTensor(*fusion, 2);
  TensorView* gf = cast(g, DataType::Float32);
  TensorView* m_next = add(mul(m, 0.9), mul(gf, 0.1));
  TensorView* v_next = add(mul(v, 0.999), mul(mul(gf, gf), 0.001));
  TensorView* step = div(mul(m_next, 1e-2), add(sqrt(v_next), 1e-8));
  TensorView* p_next = cast(sub(cast(p, DataType::Float32), step), DataType::BFloat16);
  fusion->addOutput(p_next);
  fusion->addOutput(m_next);
  fusion->addOutput(v_next);
  fusion->aliasOutputToInput(p_next, p);
  fusion->aliasOutputToInput(m_next, m);
  fusion->aliasOutputToInput(v_next, v);
  return fusion;
}

TEST_F(InPlaceOutputsGpuTest, AdamStepsWriteEveryStateIntoItsInput) {
  FusionExecutorCache cache(adamStep(), shipped());
  test::RandomTensors random(21);
  const std::vector<HostTensor> host = {random.uniform(DataType::BFloat16, {300, 257}),
                                        random.uniform(DataType::BFloat16, {300, 257}),
                                        random.uniform(DataType::Float32, {300, 257}),
                                        random.uniform(DataType::Float32, {300, 257}, 0.1, 1.0)};
  std::vector<DeviceTensor> device;
  for (const HostTensor& tensor : host) device.push_back(DeviceTensor::fromHost(tensor));
  std::vector<HostTensor> state = host;
  for (int round = 0; round < 3; ++round) {
    RunOptions options;
    options.cuda_graph = round == 2;
    const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), state);
    const std::vector<FusionArgument> outputs = cache.run({device.begin(), device.end()}, options);
    BRAZE_CU(ctxSynchronize);
    ASSERT_EQ(outputs.size(), 3u);
    const size_t written_into[] = {0, 2, 3};
    for (size_t i = 0; i < 3; ++i) {
      const auto& output = std::get<DeviceTensor>(outputs[i]);
      EXPECT_EQ(output.data(), device[written_into[i]].data()) << "output " << i;
      const HostTensor actual = device[written_into[i]].toHost();
      EXPECT_TRUE(test::isClose(actual, expected[i], test::toleranceFor(expected[i].dtype())))
          << "round " << round << " output " << i;
      state[written_into[i]] = actual;
    }
  }
  EXPECT_EQ(cache.counters().misses, 1);
  EXPECT_EQ(cache.lastRuntime()->kernels().size(), 1u);
}

TEST_F(InPlaceOutputsGpuTest, AnInputOtherKernelsReadIsWrittenAfterThem) {
  // softmax(x) into x, with x's row sums as another output: x is read by the normalization and
  // by the sum, so the result goes through a buffer and a copy into x after both.
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* e = exp(sub(x, amax(x, {1}, /*keepdim=*/true)));
  TensorView* softmax = div(e, sum(e, {1}, /*keepdim=*/true));
  fusion->addOutput(softmax);
  fusion->addOutput(sum(x, {0}));
  fusion->aliasOutputToInput(softmax, x);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(22);
  const HostTensor host = random.uniform(DataType::Float32, {1000, 384});
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), {host});
  DeviceTensor input = DeviceTensor::fromHost(host);
  const std::vector<FusionArgument> outputs = cache.run({input});
  BRAZE_CU(ctxSynchronize);
  EXPECT_EQ(std::get<DeviceTensor>(outputs[0]).data(), input.data());
  EXPECT_TRUE(test::isClose(input.toHost(), expected[0]));
  EXPECT_TRUE(test::isClose(std::get<DeviceTensor>(outputs[1]).toHost(), expected[1]))
      << cache.lastRuntime()->describe();
}

TEST_F(InPlaceOutputsGpuTest, HostTensorsAreUpdatedThroughTheGpu) {
  FusionExecutorCache cache(adamStep(), shipped());
  test::RandomTensors random(23);
  const std::vector<HostTensor> host = {random.uniform(DataType::BFloat16, {64, 64}),
                                        random.uniform(DataType::BFloat16, {64, 64}),
                                        random.uniform(DataType::Float32, {64, 64}),
                                        random.uniform(DataType::Float32, {64, 64}, 0.1, 1.0)};
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), host);
  const std::vector<FusionArgument> outputs = cache.run({host.begin(), host.end()});
  EXPECT_EQ(std::get<HostTensor>(outputs[0]).data(), host[0].data());
  EXPECT_TRUE(test::isClose(host[0], expected[0], test::toleranceFor(DataType::BFloat16)));
  EXPECT_TRUE(test::isClose(host[2], expected[1]));
  EXPECT_TRUE(test::isClose(host[3], expected[2]));
}

TEST_F(InPlaceOutputsGpuTest, AScatterIntoACacheWritesTheCacheInPlace) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* cache = makeSymbolicTensor(*fusion, 4, DataType::BFloat16);
  TensorView* position = makeSymbolicTensor(*fusion, 4, DataType::Int64);
  TensorView* step = makeSymbolicTensor(*fusion, 4, DataType::BFloat16);
  TensorView* written = scatter(cache, 2, position, step);
  fusion->addOutput(written);
  fusion->aliasOutputToInput(written, cache);
  FusionExecutorCache executor(std::move(fusion), shipped());
  test::RandomTensors random(24);
  const HostTensor kv = random.uniform(DataType::BFloat16, {4, 8, 300, 64});
  const HostTensor at = random.uniform(DataType::Int64, {4, 8, 2, 64}, -300, 299);
  const HostTensor values = random.uniform(DataType::BFloat16, {4, 8, 2, 64});
  const HostTensor expected = evaluateFusionTensors(executor.fusion(), {kv, at, values})[0];
  DeviceTensor device = DeviceTensor::fromHost(kv);
  const std::vector<FusionArgument> outputs =
      executor.run({device, DeviceTensor::fromHost(at), DeviceTensor::fromHost(values)});
  BRAZE_CU(ctxSynchronize);
  EXPECT_EQ(std::get<DeviceTensor>(outputs[0]).data(), device.data());
  EXPECT_TRUE(test::isClose(device.toHost(), expected)) << executor.lastRuntime()->describe();
}

// RunOptions::outputs_into: an output goes where the caller says (a slice of a bigger tensor,
// as a stream loop's buffer), another one left undefined is allocated; a destination that does
// not fit (other sizes) is ignored, not written.
TEST_F(InPlaceOutputsGpuTest, OutputsGoWhereTheCallerSays) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* doubled = mul(x, 2.0);
  TensorView* row_sums = sum(x, {1});
  fusion->addOutput(doubled);
  fusion->addOutput(row_sums);
  FusionExecutorCache cache(std::move(fusion), shipped());
  test::RandomTensors random(5);
  const HostTensor host = random.uniform(DataType::Float32, {64, 96});
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), {host});
  const DeviceTensor input = DeviceTensor::fromHost(host);
  // Rows 64 .. 127 of a [192, 96] tensor, poisoned.
  const DeviceTensor whole = DeviceTensor::empty(DataType::Float32, {192, 96});
  whole.fillBytes(0xff);
  const DeviceTensor slice =
      DeviceTensor::borrow(DataType::Float32, {64, 96}, whole.strides(),
                           whole.data() + 64 * 96 * sizeof(float), whole.device(), whole.owner());
  for (bool fits : {true, false}) {
    const std::vector<DeviceTensor> into = {
        fits ? slice : DeviceTensor::empty(DataType::Float32, {63, 96}), DeviceTensor()};
    RunOptions options;
    options.outputs_into = into;
    const std::vector<FusionArgument> outputs = cache.run({input}, options);
    BRAZE_CU(ctxSynchronize);
    const auto& first = std::get<DeviceTensor>(outputs[0]);
    EXPECT_EQ(first.data() == slice.data(), fits);
    test::expectClose(first.toHost(), expected[0]);
    test::expectClose(std::get<DeviceTensor>(outputs[1]).toHost(), expected[1]);
  }
  // Only the slice was written: the rows around it are still poisoned.
  const HostTensor after = whole.toHost();
  EXPECT_TRUE(std::isnan(toDouble(after.narrowed(0, 0, 64).atFlat(0))));
  EXPECT_TRUE(std::isnan(toDouble(after.narrowed(0, 128, 64).contiguous().atFlat(64 * 96 - 1))));
  test::expectClose(after.narrowed(0, 64, 64).contiguous(), expected[0]);

  // The input's own memory, or memory overlapping it, is refused with the places named: kernels
  // read inputs as memory nothing writes during the run (read-only loads, later segments).
  const DeviceTensor both = DeviceTensor::fromHost(random.uniform(DataType::Float32, {128, 96}));
  auto rowsFrom = [&](int64_t row) {
    return DeviceTensor::borrow(DataType::Float32, {64, 96}, both.strides(),
                                both.data() + row * 96 * sizeof(float), both.device(),
                                both.owner());
  };
  for (const int64_t row : {int64_t{0}, int64_t{32}}) {
    const std::vector<DeviceTensor> into = {rowsFrom(row), DeviceTensor()};
    RunOptions options;
    options.outputs_into = into;
    EXPECT_TRUE(test::throwsError(
        [&] { cache.run({rowsFrom(0)}, options); },
        {"outputs_into[0]", "overlaps the memory of input 0", "aliasOutputToInput"}))
        << row;
  }
  // Right after the input: apart from it, written.
  const std::vector<DeviceTensor> into = {rowsFrom(64), DeviceTensor()};
  RunOptions options;
  options.outputs_into = into;
  const std::vector<FusionArgument> outputs = cache.run({rowsFrom(0)}, options);
  EXPECT_EQ(std::get<DeviceTensor>(outputs[0]).data(), rowsFrom(64).data());
}

}  // namespace
}  // namespace braze
