// Stream loops against one kernel over the whole tensor, in one run: y = exp(x) * 2 + 1 on
// float32 [rows, cols], every tensor streamed over rows (ParallelType::Stream) in 4, 8 and 32
// slices on the default pool of 4 streams, beside the same fusion unstreamed.
//
//   stream_loop/<rows>x<cols>/slices:<n>   (n = 0: no stream axis, one kernel)
//
// Device time per call from CUDA events around back-to-back FusionExecutorCache::run calls on
// one stream (bench::timeLaunches: median_us, host_us, of_copy), and for the streamed cases the
// time over the one-kernel case divided by the slices: what each slice costs beyond its share
// of the work. Floor: bytes / copy bandwidth (of_copy = 1).

#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "bandwidth_timing.h"
#include "braze/braze.h"
#include "braze/runtime/fusion_executor_cache.h"

namespace braze {
namespace {

std::unique_ptr<Fusion> streamedExp(int64_t slices) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* t = mul(y, 2.0);
  TensorView* z = add(t, 1.0);
  fusion->addOutput(z);
  if (slices > 0) {
    for (TensorView* tv : {y, t, z}) {
      tv->split(0, slices, /*inner_split=*/false);
      tv->parallelize(0, ParallelType::Stream);
    }
  }
  return fusion;
}

// Seconds per call of the one-kernel case, by shape, for the streamed cases' overhead.
std::map<std::pair<int64_t, int64_t>, double>& oneKernelSeconds() {
  static std::map<std::pair<int64_t, int64_t>, double> seconds;
  return seconds;
}

void streamLoop(benchmark::State& state) {
  const int64_t rows = state.range(0);
  const int64_t cols = state.range(1);
  const int64_t slices = state.range(2);
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  bench::guarded(state, [&] {
    FusionExecutorCache cache(streamedExp(slices));
    const DeviceTensor x = DeviceTensor::empty(DataType::Float32, {rows, cols});
    x.fillBytes(0x3C, stream);
    const std::vector<FusionArgument> inputs = {x};
    RunOptions options;
    options.stream = stream;
    bench::timeLaunches(state, stream, 2 * rows * cols * 4, [&] { cache.run(inputs, options); });
    const double median = state.counters["median_us"] / 1e6;
    if (slices == 0) {
      oneKernelSeconds()[{rows, cols}] = median;
    } else if (auto one = oneKernelSeconds().find({rows, cols}); one != oneKernelSeconds().end()) {
      state.counters["us_per_slice_over_one_kernel"] =
          (median - one->second) / static_cast<double>(slices) * 1e6;
    }
  });
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{8192, 8192}, {1024, 1024}}) {
    for (int64_t slices : {0, 4, 8, 32}) b->Args({rows, cols, slices});
  }
}

BENCHMARK(streamLoop)
    ->Name("stream_loop")
    ->ArgNames({"rows", "cols", "slices"})
    ->Apply(shapes)
    ->UseManualTime()
    ->Iterations(9)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace braze

BENCHMARK_MAIN();
