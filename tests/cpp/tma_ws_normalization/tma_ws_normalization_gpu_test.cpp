// The TMA warp-specialized normalization kernels on an sm_90 or newer GPU (skipped elsewhere),
// against the reference evaluator on fresh random inputs with poisoned outputs, two seeds each:
// what the plugin takes through the executor cache (softmax backward in bf16, fp16 and fp32 on
// long rows, float rows of 262144 on clusters of 16; layer norm and RMS norm backward from rows
// of 32 KiB), every forward normalization
// with the heuristics' plan scheduled directly (the plugin refuses them as slower than
// inner_outer), norm backward with the heuristics' plan for rows short and long, and forced plans
// for the edges the heuristics rarely make:
// more rows than clusters (every CTA walks several rows, both parities of every barrier), chunks
// that leave the last CTA short or some CTAs empty, one part per chunk and parts that do not
// divide it, column sums across a cooperative grid of clusters.

#include <gtest/gtest.h>

#include <functional>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_properties.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "support/gpu_run.h"
#include "support/normalization_fusions.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"
#include "tma_ws_normalization_scheduler.h"

namespace braze {
namespace {

namespace tws = tma_ws_normalization;
using test::Normalization;

class TmaWsNormalizationGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA device: " << reason;
    const driver::GpuArch arch = driver::deviceProperties(0).arch;
    if (arch.major < 9) GTEST_SKIP() << "needs sm_90 or newer; device 0 is " << arch.toString();
  }
};

test::Tolerance toleranceOf(Normalization kind, DataType dtype) {
  // Softmax backward's dy - sum(dy * y) cancels: a row sum of n products, in another order than
  // the reference's, lands in dx unscaled.
  if (kind == Normalization::SoftmaxBackward && dtype == DataType::Float32) return {1e-4, 1e-4};
  // Column sums over thousands of rows, added in another order than the reference's: fp32
  // differs in the last bits, and a 16-bit result may round to the neighbouring value.
  if (test::hasColumnReduction(kind)) {
    if (dtype == DataType::Float32) return {1e-4, 1e-4};
    if (dtype == DataType::Float16) return {2e-3, 2e-3};
  }
  return test::toleranceFor(dtype);
}

void expectOutputsMatch(Normalization kind, DataType dtype, const std::vector<HostTensor>& outputs,
                        const std::vector<EvaluatorArgument>& host, const std::string& what) {
  const std::vector<EvaluatorArgument> expected =
      evaluateFusion(*test::makeNormalization(kind, dtype), host);
  ASSERT_EQ(outputs.size(), expected.size()) << what;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const HostTensor& reference = std::get<HostTensor>(expected[j]);
    EXPECT_TRUE(test::isClose(outputs[j], reference, toleranceOf(kind, reference.dtype())))
        << what << ", output " << j;
  }
}

// Scheduled with the heuristics' params changed by `adjust`, compiled and run directly.
void expectForcedPlanMatches(Normalization kind, DataType dtype, int64_t rows, int64_t n,
                             const std::function<void(tws::TmaWsNormalizationParams&)>& adjust) {
  for (const uint64_t seed : {uint64_t{11}, uint64_t{12}}) {
    const std::vector<HostTensor> tensors =
        test::normalizationArguments(kind, dtype, rows, n, seed);
    const std::vector<EvaluatorArgument> host(tensors.begin(), tensors.end());
    std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, dtype);
    SchedulerRuntimeInfo info = contiguousRuntimeInfo(
        *fusion, test::normalizationInputSizes(kind, rows, n), {}, driver::deviceProperties());
    // The heuristics plan rows of any length; only the plugin's refusal keeps short ones away.
    tws::TmaWsNormalizationParams params;
    params.cluster = 1;
    params.chunk = n;
    params.vector = 4;
    adjust(params);
    tws::schedule(*fusion, params);
    const std::unique_ptr<KernelExecutor> executor = test::compileForGpu(*fusion);
    const test::GpuRun run = test::runWithPoisonedOutputs(*executor, test::deviceArguments(host));
    expectOutputsMatch(kind, dtype, run.outputs, host,
                       test::toString(kind) + " " + std::string(toString(dtype)) + " " +
                           std::to_string(rows) + " x " + std::to_string(n) + " seed " +
                           std::to_string(seed) + " " + tws::toString(params));
  }
}

// The outputs of one call of `cache` on `tensors`, on the host.
std::vector<HostTensor> runThroughCache(FusionExecutorCache& cache,
                                        const std::vector<HostTensor>& tensors) {
  std::vector<FusionArgument> arguments;
  for (const HostTensor& t : tensors) arguments.push_back(DeviceTensor::fromHost(t));
  const std::vector<FusionArgument> outputs = cache.run(arguments);
  BRAZE_CU(ctxSynchronize);
  std::vector<HostTensor> host_outputs;
  for (const FusionArgument& out : outputs)
    host_outputs.push_back(std::get<DeviceTensor>(out).toHost());
  return host_outputs;
}

TEST_F(TmaWsNormalizationGpuTest, WhatItTakesThroughTheExecutorCache) {
  struct Case {
    int64_t rows, n;
  };
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  // What the plugin takes by rank: softmax backward's one pass over long rows, softmax forward
  // from rows of 128 KiB (2-byte rows from shared memory, float rows in registers with the
  // exponentials computed again), and norm backward from rows of 32 KiB; the others run forced
  // below.
  for (const Normalization kind :
       {Normalization::SoftmaxBackward, Normalization::Softmax, Normalization::LayerNormBackward,
        Normalization::RmsNormBackward}) {
    const bool softmax = kind == Normalization::SoftmaxBackward || kind == Normalization::Softmax;
    const std::vector<Case> cases =
        softmax ? std::vector<Case>{{1, 65536}, {37, 65536}, {7, 262144}, {13, 131080}}
                : std::vector<Case>{{37, 16384}, {301, 8200}, {3, 65536}};
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16, DataType::Float32}) {
      FusionExecutorCache cache(test::makeNormalization(kind, dtype), options);
      for (const Case& c : cases) {
        for (const uint64_t seed : {uint64_t{21}, uint64_t{22}}) {
          const std::vector<HostTensor> tensors =
              test::normalizationArguments(kind, dtype, c.rows, c.n, seed);
          const std::vector<HostTensor> host_outputs = runThroughCache(cache, tensors);
          const std::string described = cache.lastRuntime()->describe();
          const std::string what = test::toString(kind) + " " + std::string(toString(dtype)) + " " +
                                   std::to_string(c.rows) + " x " + std::to_string(c.n) + " seed " +
                                   std::to_string(seed) + "\n" + described;
          EXPECT_NE(described.find("tma_ws_normalization"), std::string::npos) << what;
          expectOutputsMatch(kind, dtype, host_outputs,
                             std::vector<EvaluatorArgument>(tensors.begin(), tensors.end()), what);
        }
      }
    }
  }
}

// Layer norm and RMS norm forward from rows of 256 KiB of 2-byte elements: taken by rank, rows in
// registers; float rows of 256 KiB stay on braze::inner_outer (measured faster there).
TEST_F(TmaWsNormalizationGpuTest, LongForwardNormsThroughTheExecutorCache) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  for (const Normalization kind : {Normalization::LayerNorm, Normalization::RmsNorm}) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16, DataType::Float32}) {
      FusionExecutorCache cache(test::makeNormalization(kind, dtype), options);
      const int64_t n = dtype == DataType::Float32 ? 65536 : 262144;
      for (const int64_t rows : {int64_t{1}, int64_t{37}}) {
        const std::vector<HostTensor> tensors =
            test::normalizationArguments(kind, dtype, rows, n, 23);
        const std::vector<HostTensor> host_outputs = runThroughCache(cache, tensors);
        const std::string described = cache.lastRuntime()->describe();
        const std::string what = test::toString(kind) + " " + std::string(toString(dtype)) + " " +
                                 std::to_string(rows) + " x " + std::to_string(n) + "\n" +
                                 described;
        if (dtype == DataType::Float32) {
          EXPECT_EQ(described.find("tma_ws_normalization"), std::string::npos) << what;
        } else {
          EXPECT_NE(described.find("register_rows=1"), std::string::npos) << what;
        }
        expectOutputsMatch(kind, dtype, host_outputs,
                           std::vector<EvaluatorArgument>(tensors.begin(), tensors.end()), what);
      }
    }
  }
}

TEST_F(TmaWsNormalizationGpuTest, EveryForwardNormalizationWithTheHeuristicsPlan) {
  // Ranked after inner_outer for these (slower), but scheduled directly they must be right:
  // the heuristics' plan for each, weights read a vector at a time.
  for (const Normalization kind : {Normalization::Softmax, Normalization::LogSoftmax,
                                   Normalization::LayerNorm, Normalization::RmsNorm}) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16, DataType::Float32}) {
      for (const auto& [rows, n] :
           std::vector<std::pair<int64_t, int64_t>>{{37, 65536}, {5, 262144}}) {
        std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, dtype);
        const tws::TmaWsNormalizationParams heuristics = tws::computeHeuristics(
            *fusion, contiguousRuntimeInfo(*fusion, test::normalizationInputSizes(kind, rows, n),
                                           {}, driver::deviceProperties()));
        expectForcedPlanMatches(kind, dtype, rows, n,
                                [&](tws::TmaWsNormalizationParams& p) { p = heuristics; });
      }
    }
  }
}

// Layer norm and RMS norm backward: dx per element, and the weight's (and bias's) gradients
// summed over every row by the whole grid after a barrier. The heuristics' plan for each shape,
// scheduled directly; rows fewer and more than the resident CTAs, odd row counts.
TEST_F(TmaWsNormalizationGpuTest, NormBackwardWithColumnSums) {
  for (const Normalization kind :
       {Normalization::LayerNormBackward, Normalization::RmsNormBackward}) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float16, DataType::Float32}) {
      for (const auto& [rows, n] : std::vector<std::pair<int64_t, int64_t>>{
               {1, 4096}, {37, 16384}, {1000, 4104}, {301, 8192}, {3, 65536}, {2000, 1024}}) {
        std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, dtype);
        const SchedulerRuntimeInfo info = contiguousRuntimeInfo(
            *fusion, test::normalizationInputSizes(kind, rows, n), {}, driver::deviceProperties());
        const tws::TmaWsNormalizationParams heuristics = tws::computeHeuristics(*fusion, info);
        expectForcedPlanMatches(kind, dtype, rows, n,
                                [&](tws::TmaWsNormalizationParams& p) { p = heuristics; });
      }
    }
  }
}

TEST_F(TmaWsNormalizationGpuTest, ForcedPlansAtTheEdges) {
  // Ten rows over three clusters of eight: rows 0, 3, 6, 9 on the first, four rounds through
  // two stages (both parities of every barrier); weights and biases read as vectors.
  expectForcedPlanMatches(Normalization::LayerNorm, DataType::BFloat16, 10, 65536,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 8, p.chunk = 8192, p.clusters = 3, p.vector = 8,
                            p.contiguous_columns = 1, p.stages = 2;
                          });
  // A short last chunk: 65544 = 7 x 8200 + 8144; parts of 2056 that do not divide 8200.
  expectForcedPlanMatches(Normalization::Softmax, DataType::Float32, 37, 65544,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 8, p.chunk = 8200, p.clusters = 5, p.pieces = 4;
                          });
  // Rows of 16 over eight CTAs of 8: six CTAs hold nothing and still take part.
  expectForcedPlanMatches(
      Normalization::RmsNorm, DataType::BFloat16, 9, 16, [](tws::TmaWsNormalizationParams& p) {
        p.cluster = 8, p.chunk = 8, p.clusters = 2, p.vector = 8, p.contiguous_columns = 1;
      });
  // One part per chunk and one stage, one CTA per row, 64 consumer threads, more rows than CTAs.
  expectForcedPlanMatches(Normalization::SoftmaxBackward, DataType::Float16, 50, 4096,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 1, p.chunk = 4096, p.clusters = 7, p.pieces = 1,
                            p.stages = 1, p.consumer_threads = 64, p.vector = 8;
                          });
  // A cluster of two CTAs per row (cooperative and clustered), two stages, a short last chunk
  // (4104 = 2056 + 2048), more rows than clusters; one stage and one part.
  expectForcedPlanMatches(Normalization::LayerNormBackward, DataType::BFloat16, 501, 4104,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 2, p.chunk = 2056, p.clusters = 9, p.vector = 8,
                            p.consumer_threads = 128, p.stages = 2, p.contiguous_columns = 1,
                            p.staged_columns = 1;
                          });
  expectForcedPlanMatches(Normalization::RmsNormBackward, DataType::Float32, 77, 2048,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 1, p.chunk = 2048, p.clusters = 5, p.vector = 4,
                            p.consumer_threads = 256, p.stages = 1, p.pieces = 1;
                          });

  // One cluster per row (no persistent loop), two CTAs, three parts, log-softmax's two passes.
  expectForcedPlanMatches(Normalization::LogSoftmax, DataType::Float32, 65, 20000,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 2, p.chunk = 10000, p.clusters = 0, p.pieces = 3;
                          });
}

// Rows in registers (register_rows): each consumer thread takes its vectors out of shared memory
// in the first pass and releases the stage at once; softmax keeps its exponentials for the
// outputs (kept operands).
TEST_F(TmaWsNormalizationGpuTest, RowsInRegisters) {
  // More rows than clusters, and a last vector per thread that only some threads have: 65552
  // bf16 elements as 2 x (8 x 4096 + 8), fp32 as 4 x (8 x 2048 + 4).
  expectForcedPlanMatches(Normalization::Softmax, DataType::BFloat16, 37, 65552,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 2, p.chunk = 32776, p.clusters = 5, p.vector = 8,
                            p.consumer_threads = 512, p.register_rows = 1;
                          });
  expectForcedPlanMatches(Normalization::Softmax, DataType::Float32, 37, 65552,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 4, p.chunk = 16388, p.clusters = 5, p.vector = 4,
                            p.consumer_threads = 512, p.register_rows = 1;
                          });
  // Weights and biases staged once per CTA, two CTAs' worth of threads, three parts that do not
  // line up with the threads' vectors.
  expectForcedPlanMatches(
      Normalization::LayerNorm, DataType::Float16, 10, 65536, [](tws::TmaWsNormalizationParams& p) {
        p.cluster = 4, p.chunk = 16384, p.clusters = 3, p.vector = 8, p.consumer_threads = 256,
        p.pieces = 3, p.contiguous_columns = 1, p.staged_columns = 1, p.register_rows = 1;
      });
  // One row; weights read from global memory a vector at a time.
  expectForcedPlanMatches(Normalization::RmsNorm, DataType::Float32, 1, 65536,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 4, p.chunk = 16384, p.clusters = 1, p.vector = 4,
                            p.consumer_threads = 512, p.contiguous_columns = 1, p.register_rows = 1;
                          });
  // Softmax's exponentials computed again in the outputs (recompute_operands), nine vectors a
  // thread (36 registers, more than a CTA with a producer warp holds): the first consumer thread
  // issues the next row's copies, and the last vector only some threads have.
  expectForcedPlanMatches(Normalization::Softmax, DataType::Float32, 37, 65552,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 4, p.chunk = 16388, p.clusters = 5, p.vector = 4,
                            p.consumer_threads = 512, p.register_rows = 1, p.recompute_operands = 1;
                          });
  // A whole 2-byte row per CTA (no exchange), 768 threads of 11 vectors, the last vector held
  // by some threads only, exponentials computed again; fp16 as bf16.
  for (const DataType dtype : {DataType::BFloat16, DataType::Float16}) {
    expectForcedPlanMatches(
        Normalization::Softmax, dtype, 37, 65552, [](tws::TmaWsNormalizationParams& p) {
          p.cluster = 1, p.chunk = 65552, p.clusters = 20, p.vector = 8, p.consumer_threads = 768,
          p.register_rows = 1, p.recompute_operands = 1;
        });
  }
  // Two CTAs per SM (no producer warp either), more rows than clusters, two parts.
  expectForcedPlanMatches(Normalization::LayerNorm, DataType::BFloat16, 21, 65536,
                          [](tws::TmaWsNormalizationParams& p) {
                            p.cluster = 4, p.chunk = 16384, p.clusters = 4, p.vector = 8,
                            p.consumer_threads = 256, p.pieces = 2, p.min_blocks_per_sm = 2,
                            p.contiguous_columns = 1, p.register_rows = 1;
                          });
  // Rows of 16 over eight CTAs of 8: most threads hold nothing; log-softmax keeps nothing.
  expectForcedPlanMatches(
      Normalization::LogSoftmax, DataType::BFloat16, 9, 16, [](tws::TmaWsNormalizationParams& p) {
        p.cluster = 8, p.chunk = 8, p.clusters = 2, p.vector = 8, p.register_rows = 1;
      });
}

}  // namespace
}  // namespace braze
