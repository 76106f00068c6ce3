// Host time of segmentFusion on stacked transformer-like layers (tests/cpp/support/
// stacked_layers.h: a norm, GELU and a residual add per layer, and a mean over the other axis
// that forces a segment break), at 10, 100, 300 and 1000 ops. CPU only; no GPU needed.
//
//   structural/<ops>/<norm>   a checker that decides by structure in microseconds
//                             (structural_segment_checker.h): the segmenter's own cost
//   registry/<ops>/<norm>     the shipped schedulers through the registry, for bfloat16
//                             [4096, 1024] inputs (compile-time and run-time checks and
//                             heuristics per question), whole layers only
//
// Counters: exprs (the fusion's Exprs), segments, checks (questions to the checker).

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "braze/plugin/scheduler_registry.h"
#include "braze/segment/segmented_fusion.h"
#include "support/registry_segment_checker.h"
#include "support/stacked_layers.h"
#include "support/structural_segment_checker.h"

namespace braze {
namespace {

constexpr int64_t kRows = 4096;
constexpr int64_t kRowLength = 1024;

test::LayerNorm normOf(const benchmark::State& state) {
  return state.range(1) == 0 ? test::LayerNorm::Layer : test::LayerNorm::Rms;
}

void reportCounters(benchmark::State& state, const Fusion& fusion, const SegmentedFusion& segmented,
                    int64_t checks) {
  state.counters["exprs"] = static_cast<double>(fusion.exprs().size());
  state.counters["segments"] = static_cast<double>(segmented.segments.size());
  state.counters["checks"] = static_cast<double>(checks);
}

void structural(benchmark::State& state) {
  const std::unique_ptr<Fusion> fusion =
      test::stackedLayers(state.range(0), normOf(state), DataType::BFloat16);
  SegmentedFusion segmented;
  int64_t checks = 0;
  for (auto _ : state) {
    test::StructuralSegmentChecker checker;
    segmented = segmentFusion(*fusion, checker);
    checks = checker.calls;
  }
  reportCounters(state, *fusion, segmented, checks);
}

const SchedulerRegistry& registry() {
  static const SchedulerRegistry shipped;
  return shipped;
}

void registryChecks(benchmark::State& state) {
  const std::unique_ptr<Fusion> fusion =
      test::stackedLayers(state.range(0), normOf(state), DataType::BFloat16, /*whole_layers=*/true);
  // x [rows, row length], then one weight [row length] per layer.
  std::vector<std::vector<int64_t>> sizes = {{kRows, kRowLength}};
  sizes.resize(fusion->inputs().size(), {kRowLength});
  SegmentedFusion segmented;
  int64_t checks = 0;
  try {
    for (auto _ : state) {
      test::RegistrySegmentChecker checker(registry(), *fusion, sizes);
      segmented = segmentFusion(*fusion, checker);
      checks = checker.calls;
    }
  } catch (const Error& error) {
    state.SkipWithError(error.what());
    return;
  }
  reportCounters(state, *fusion, segmented, checks);
}

BENCHMARK(structural)
    ->Name("structural")
    ->ArgNames({"ops", "rms"})
    ->ArgsProduct({{10, 100, 300, 1000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

BENCHMARK(registryChecks)
    ->Name("registry")
    ->ArgNames({"ops", "rms"})
    ->ArgsProduct({{10, 100, 300, 1000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace braze

BENCHMARK_MAIN();
