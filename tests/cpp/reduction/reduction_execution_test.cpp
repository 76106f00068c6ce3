// The GPU tier: every reduction case, scheduled by the reduction scheduler for its own
// arguments, runs through KernelExecutor on fresh random inputs (outputs poisoned first) and
// matches the reference evaluator within the tolerance of its dtype, for two seeds. Skipped
// without a GPU. A row-sum timing test runs only when BRAZE_REDUCTION_TIMING is set.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"
#include "reduction/reduction_cases.h"
#include "support/gpu_run.h"
#include "support/poisoned_outputs.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

class ReductionExecutionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReductionExecutionTest, MatchesTheReferenceEvaluatorOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const test::ReductionCase& c = test::findReductionCase(GetParam());
  for (const uint64_t seed : {uint64_t{101}, uint64_t{202}}) {
    const std::vector<EvaluatorArgument> host =
        test::makeSuiteArguments(test::asSuiteCase(c), seed);
    std::unique_ptr<Fusion> fusion = c.build();
    SchedulerRuntimeInfo info = test::runtimeInfoOf(c, host);
    info.device = driver::deviceProperties();
    const reduction::ReductionParams params = reduction::computeHeuristics(*fusion, info);
    reduction::schedule(*fusion, params);
    const std::string what =
        c.name + " seed " + std::to_string(seed) + " " + reduction::toString(params);

    const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
    const std::vector<ExecutorArgument> inputs = test::deviceArguments(host);
    // Twice on the same executor: a grid reduction must leave its semaphores ready.
    for (int run = 0; run < 2; ++run) {
      const test::GpuRun gpu = test::runWithPoisonedOutputs(*executor, inputs);
      const std::vector<HostTensor>& outputs = gpu.outputs;
      const LaunchPlan& plan = gpu.plan;
      // The oracle evaluates a fresh, unscheduled fusion.
      const std::vector<EvaluatorArgument> expected = evaluateFusion(*c.build(), host);
      ASSERT_EQ(outputs.size(), expected.size());
      for (size_t j = 0; j < outputs.size(); ++j) {
        const HostTensor& reference = std::get<HostTensor>(expected[j]);
        EXPECT_TRUE(test::isClose(outputs[j], reference,
                                  c.tolerance.value_or(test::toleranceFor(reference.dtype()))))
            << what << ", run " << run << ", output " << j
            << "\nlaunch: " << plan.launch.toString();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ReductionExecutionTest,
                         ::testing::ValuesIn(test::reductionCaseNames()),
                         [](const auto& info) { return info.param; });

// NaN wins in max and min, elementwise and along a row, as in torch.maximum and torch.amax:
// rows holding a NaN in either input reduce to NaN, the others to their exact extreme. The
// device code takes a single NaN-propagating instruction for float on sm_80 and newer.
TEST(ReductionNanTest, MaxAndMinPropagateNanOnTheGpu) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  for (const bool is_max : {true, false}) {
    for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      const auto build = [dtype, is_max] {
        auto fusion = std::make_unique<Fusion>();
        TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
        TensorView* y = makeSymbolicTensor(*fusion, 2, dtype);
        fusion->addOutput(is_max ? amax(maximum(x, y), {1}) : amin(minimum(x, y), {1}));
        return fusion;
      };
      test::RandomTensors random(is_max ? 31 : 32);
      constexpr int64_t kRows = 37;
      constexpr int64_t kLength = 1000;
      HostTensor x = random.uniform(dtype, {kRows, kLength});
      HostTensor y = random.uniform(dtype, {kRows, kLength});
      const ScalarValue nan(std::numeric_limits<double>::quiet_NaN());
      x.setFlat(3 * kLength + 0, nan);     // first element of a row
      x.setFlat(17 * kLength + 999, nan);  // last element of a row
      y.setFlat(5 * kLength + 500, nan);   // the other input
      const std::vector<EvaluatorArgument> host = {x, y};

      std::unique_ptr<Fusion> fusion = build();
      SchedulerRuntimeInfo info =
          contiguousRuntimeInfo(*fusion, {{kRows, kLength}, {kRows, kLength}});
      info.device = driver::deviceProperties();
      reduction::schedule(*fusion, reduction::computeHeuristics(*fusion, info));
      const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
      const test::GpuRun gpu = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
      const HostTensor expected = std::get<HostTensor>(evaluateFusion(*build(), host)[0]);
      EXPECT_TRUE(test::isClose(gpu.outputs[0], expected, test::toleranceFor(dtype)))
          << (is_max ? "amax(maximum)" : "amin(minimum)") << " " << dtype;
      for (const int64_t row : {3, 5, 17}) {
        EXPECT_TRUE(std::isnan(toDouble(gpu.outputs[0].atFlat(row)))) << "row " << row;
      }
      EXPECT_FALSE(std::isnan(toDouble(gpu.outputs[0].atFlat(0))));
    }
  }
}

// Seconds per launch of `fusion` scheduled with `params` on `inputs`, from CUDA events around
// back-to-back launches (after one that loads the module).
double secondsPerLaunch(const std::function<std::unique_ptr<Fusion>()>& build,
                        const reduction::ReductionParams& params,
                        const std::vector<ExecutorArgument>& inputs) {
  std::unique_ptr<Fusion> fusion = build();
  reduction::schedule(*fusion, params);
  const std::unique_ptr<KernelExecutor> compiled = test::compileForGpu(*fusion);
  KernelExecutor& executor = *compiled;
  const LaunchPlan plan = executor.plan(inputs);
  std::vector<DeviceTensor> outputs = test::poisonedOutputs(executor, plan);
  executor.run(inputs, nullptr, outputs);
  BRAZE_CU(ctxSynchronize);
  CUevent start = nullptr;
  CUevent stop = nullptr;
  BRAZE_CU(eventCreate, &start, 0);
  BRAZE_CU(eventCreate, &stop, 0);
  constexpr int kLaunches = 20;
  BRAZE_CU(eventRecord, start, nullptr);
  for (int i = 0; i < kLaunches; ++i) executor.run(inputs, nullptr, outputs);
  BRAZE_CU(eventRecord, stop, nullptr);
  BRAZE_CU(eventSynchronize, stop);
  float ms = 0.0f;
  BRAZE_CU(eventElapsedTime, &ms, start, stop);
  BRAZE_CU(eventDestroy, start);
  BRAZE_CU(eventDestroy, stop);
  return static_cast<double>(ms) / 1e3 / kLaunches;
}

// Row sums (and a few column sums) of 256 MiB, the benchmark's shapes: prints the bandwidth
// (bytes read and written / time) of the heuristics' choice, next to a device-to-device copy.
// Only with BRAZE_REDUCTION_TIMING set: it measures, it does not check. With
// BRAZE_REDUCTION_TIMING=variants, also nearby block sizes and grid splits.
TEST(ReductionTimingTest, RowSumBandwidth) {
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA driver or device: " << reason;
  const char* mode = std::getenv("BRAZE_REDUCTION_TIMING");
  if (mode == nullptr) GTEST_SKIP() << "set BRAZE_REDUCTION_TIMING=1 to time row sums";
  const bool variants = std::string(mode) == "variants";
  constexpr int64_t kBytes = int64_t{256} << 20;
  {
    DeviceTensor a = DeviceTensor::empty(DataType::Float32, {kBytes / 4});
    DeviceTensor b = DeviceTensor::empty(DataType::Float32, {kBytes / 4});
    a.fillBytes(0x3C);
    BRAZE_CU(memcpyDtoDAsync, b.data(), a.data(), static_cast<size_t>(kBytes), nullptr);
    CUevent start = nullptr;
    CUevent stop = nullptr;
    BRAZE_CU(eventCreate, &start, 0);
    BRAZE_CU(eventCreate, &stop, 0);
    BRAZE_CU(eventRecord, start, nullptr);
    for (int i = 0; i < 20; ++i)
      BRAZE_CU(memcpyDtoDAsync, b.data(), a.data(), static_cast<size_t>(kBytes), nullptr);
    BRAZE_CU(eventRecord, stop, nullptr);
    BRAZE_CU(eventSynchronize, stop);
    float ms = 0.0f;
    BRAZE_CU(eventElapsedTime, &ms, start, stop);
    std::cout << "copy 256 MiB: " << 2.0 * kBytes / (ms / 1e3 / 20) / 1e12 << " TB/s\n";
  }
  for (const bool inner : {true, false}) {
    for (const DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      const std::vector<int64_t> lengths =
          inner ? std::vector<int64_t>{256, 1024, 4096, 16384, 65536, 262144}
                : std::vector<int64_t>{1024, 16384};
      for (const int64_t n : lengths) {
        const int64_t m = kBytes / n / sizeInBytes(dtype);
        const auto build = [dtype, inner] {
          auto fusion = std::make_unique<Fusion>();
          fusion->addOutput(sum(makeSymbolicTensor(*fusion, 2, dtype), {inner ? 1 : 0}));
          return fusion;
        };
        std::unique_ptr<Fusion> fusion = build();
        SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, {{m, n}});
        info.device = driver::deviceProperties();
        const reduction::ReductionParams chosen = reduction::computeHeuristics(*fusion, info);
        DeviceTensor x = DeviceTensor::empty(dtype, {m, n});
        x.fillBytes(0x3C);
        const std::vector<ExecutorArgument> inputs = {std::move(x)};
        const int64_t output_elements = inner ? m : n;
        const double bytes = static_cast<double>((m * n + output_elements) * sizeInBytes(dtype));
        std::vector<reduction::ReductionParams> tried = {chosen};
        const auto add = [&](reduction::ReductionParams p) {
          if (p.threads_x < 1 || p.unroll < 1 || p.threads_y < 1 ||
              p.threads_x * p.threads_y > 1024)
            return;
          // Vector lanes around a grid reduction: refused by the lowering.
          if (!p.inner && p.vector_width > 1 && p.grid_blocks > 1) return;
          for (const reduction::ReductionParams& seen : tried)
            if (seen == p) return;
          tried.push_back(p);
        };
        if (variants) {
          // Neighbors of the choice: half or twice the threads along the reduced dim with the
          // unroll keeping the bytes per step, twice the unroll, a grid split, and the other
          // unswitch.
          reduction::ReductionParams p = chosen;
          const bool reduced_on_x = chosen.inner;
          int64_t& along = reduced_on_x ? p.threads_x : p.threads_y;
          along = std::max<int64_t>(1, along / 2);
          p.unroll = chosen.unroll * 2;
          add(p);
          p = chosen;
          (reduced_on_x ? p.threads_x : p.threads_y) *= 2;
          p.unroll = std::max<int64_t>(1, chosen.unroll / 2);
          add(p);
          p = chosen;
          p.unroll = chosen.unroll * 2;
          add(p);
          p = chosen;
          p.grid_blocks = chosen.grid_blocks == 1 ? 2 : chosen.grid_blocks / 2;
          add(p);
          p = chosen;
          p.unswitch = !chosen.unswitch;
          add(p);
        }
        for (const reduction::ReductionParams& p : tried) {
          const double seconds = secondsPerLaunch(build, p, inputs);
          std::cout << (inner ? "row" : "column") << " sum " << dtype << " " << m << " x " << n
                    << ": " << seconds * 1e6 << " us, " << bytes / seconds / 1e12 << " TB/s  "
                    << reduction::toString(p) << (&p == &tried.front() ? "  (chosen)" : "") << "\n";
        }
      }
    }
  }
}

}  // namespace
}  // namespace braze
