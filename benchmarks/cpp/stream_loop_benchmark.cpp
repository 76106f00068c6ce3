// Stream loops against one kernel over the whole tensor, in one run: y = exp(x) * 2 + 1 on
// float32 [rows, cols], every tensor streamed over rows (ParallelType::Stream) in 4, 8 and 32
// slices on the default pool of 4 streams, beside the same fusion unstreamed.
//
//   stream_loop/<rows>x<cols>/slices:<n>/graph:<g>   (n = 0: no stream axis, one kernel;
//                                                    g = 1: replayed as a CUDA graph)
//
// Device time per call from CUDA events around back-to-back FusionExecutorCache::run calls on
// one stream (bench::timeLaunches: median_us, host_us, of_copy), and for the streamed cases the
// time over the one-kernel case divided by the slices: what each slice costs beyond its share
// of the work. Floor: bytes / copy bandwidth (of_copy = 1).

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <tuple>

#include "bandwidth_timing.h"
#include "braze/braze.h"
#include "braze/driver/pinned_host_memory.h"
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

// Seconds per call of the one-kernel case, by shape and launch form, for the streamed cases'
// overhead.
std::map<std::tuple<int64_t, int64_t, bool>, double>& oneKernelSeconds() {
  static std::map<std::tuple<int64_t, int64_t, bool>, double> seconds;
  return seconds;
}

void streamLoop(benchmark::State& state) {
  const int64_t rows = state.range(0);
  const int64_t cols = state.range(1);
  const int64_t slices = state.range(2);
  const bool graph = state.range(3) != 0;
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  bench::guarded(state, [&] {
    FusionExecutorCache cache(streamedExp(slices));
    const DeviceTensor x = DeviceTensor::empty(DataType::Float32, {rows, cols});
    x.fillBytes(0x3C, stream);
    const std::vector<FusionArgument> inputs = {x};
    RunOptions options;
    options.stream = stream;
    options.cuda_graph = graph;
    bench::timeLaunches(state, stream, 2 * rows * cols * 4, [&] { cache.run(inputs, options); });
    const double median = state.counters["median_us"] / 1e6;
    // Each form against the one kernel launched the same way (directly, or as a graph).
    const std::tuple<int64_t, int64_t, bool> key{rows, cols, graph};
    if (slices == 0) {
      oneKernelSeconds()[key] = median;
    } else if (auto one = oneKernelSeconds().find(key); one != oneKernelSeconds().end()) {
      state.counters["us_per_slice_over_one_kernel"] =
          (median - one->second) / static_cast<double>(slices) * 1e6;
    }
  });
}

void shapes(benchmark::internal::Benchmark* b) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{8192, 8192}, {1024, 1024}}) {
    for (int64_t graph : {0, 1}) {
      for (int64_t slices : {0, 4, 8, 32}) b->Args({rows, cols, slices, graph});
    }
  }
}

// Copy/compute overlap: row sums of a compute-heavy function of a 1 GiB float32 input in
// page-locked host memory ([16384, 16384]), every tensor streamed over rows in `slices` slices,
// so that slice i + 1's copy to the device overlaps slice i's kernel on another stream; one
// slice is copy-then-compute. `work` (sin steps per element) sets the compute time: about the
// copy's at the balance point, where overlap can give up to 2x. Wall time per call (the result
// comes back to the host, which waits for it); `vs_one_slice` is the one-slice time over this
// one, from the same run.
//
// With `whole_result`, the fusion returns y itself (1 GiB) instead of its row sums: the result
// comes back slice by slice too, so each slice's copy back overlaps later slices' copies in
// and kernels (host_round_trip).
std::unique_ptr<Fusion> rowSumsOfWork(int64_t slices, int64_t work, bool whole_result = false) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  std::vector<TensorView*> computed;
  TensorView* y = x;
  for (int64_t k = 0; k < work; ++k) {
    y = add(mul(sin(y), 0.5), y);
    computed.push_back(y->definition()->input(0)->definition()->input(0)->as<TensorView>());
    computed.push_back(y->definition()->input(0)->as<TensorView>());
    computed.push_back(y);
  }
  if (whole_result) {
    fusion->addOutput(y);
  } else {
    TensorView* sums = sum(y, {1});
    fusion->addOutput(sums);
    computed.push_back(sums);
  }
  for (TensorView* tv : computed) {
    tv->split(0, slices, /*inner_split=*/false);
    tv->parallelize(0, ParallelType::Stream);
  }
  return fusion;
}

// Seconds per call of the one-slice case, by (whole result, pinned input, work).
std::map<std::tuple<bool, bool, int64_t>, double>& oneSliceSeconds() {
  static std::map<std::tuple<bool, bool, int64_t>, double> seconds;
  return seconds;
}

// `pinned` false: the input is ordinary (pageable) memory, as most tensors a user has.
void hostOverlap(benchmark::State& state, bool whole_result, bool pinned_input) {
  const int64_t slices = state.range(0);
  const int64_t work = state.range(1);
  constexpr int64_t kRows = 16384;
  constexpr int64_t kCols = 16384;
  if (bench::benchmarkStream(state) == nullptr) return;
  bench::guarded(state, [&] {
    const size_t bytes = static_cast<size_t>(kRows * kCols) * sizeof(float);
    const std::shared_ptr<void> memory =
        pinned_input ? driver::allocatePinnedHost(bytes)
                     : std::shared_ptr<void>(new float[static_cast<size_t>(kRows * kCols)],
                                             [](void* p) { delete[] static_cast<float*>(p); });
    auto* values = static_cast<float*>(memory.get());
    for (int64_t i = 0; i < kRows * kCols; ++i) values[i] = 0.001f * static_cast<float>(i % 1000);
    const HostTensor x =
        HostTensor::borrow(DataType::Float32, {kRows, kCols}, {kCols, 1}, memory.get(), memory);
    FusionExecutorCache cache(rowSumsOfWork(slices, work, whole_result));
    RunOptions options;
    options.stream_pool = 8;
    cache.run({x}, options);  // compiles and freezes the plan
    std::vector<double> samples;
    for (auto _ : state) {
      const auto start = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(cache.run({x}, options));
      samples.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      state.SetIterationTime(samples.back());
    }
    const double median = bench::median(samples);
    state.counters["ms_per_call"] = median * 1e3;
    state.counters["copy_GB/s"] =
        static_cast<double>(whole_result ? 2 * bytes : bytes) / median / 1e9;
    const std::tuple<bool, bool, int64_t> key{whole_result, pinned_input, work};
    if (slices == 1) {
      oneSliceSeconds()[key] = median;
    } else if (auto one = oneSliceSeconds().find(key); one != oneSliceSeconds().end()) {
      state.counters["vs_one_slice"] = one->second / median;
    }
  });
}

BENCHMARK_CAPTURE(hostOverlap, row_sums, false, true)
    ->Name("host_overlap")
    ->ArgNames({"slices", "work"})
    // 1 vs 8 slices at each amount of work, and 16 at the balance point (64), where the
    // pipeline's fill (one slice's compute not hidden) is what separates 8 slices from 2x.
    ->Args({1, 0})
    ->Args({8, 0})
    ->Args({1, 32})
    ->Args({8, 32})
    ->Args({1, 64})
    ->Args({8, 64})
    ->Args({16, 64})
    ->Args({1, 128})
    ->Args({8, 128})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

// The 1 GiB result comes back as well: copy in, compute and copy back of different slices at
// once (the two directions on the link's two copy engines). Ceiling 3x where the three take
// the same time.
BENCHMARK_CAPTURE(hostOverlap, whole_result, true, true)
    ->Name("host_round_trip")
    ->ArgNames({"slices", "work"})
    // One step: the copies alone set the pace (a result that is the input would not be
    // staged at all).
    ->Args({1, 1})
    ->Args({8, 1})
    ->Args({1, 64})
    ->Args({8, 64})
    ->Args({16, 64})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

// The same row sums from pageable memory: the driver stages each slice through its own
// page-locked buffer while the calling thread waits, so overlap is whatever that leaves.
BENCHMARK_CAPTURE(hostOverlap, pageable, false, false)
    ->Name("host_overlap_pageable")
    ->ArgNames({"slices", "work"})
    ->Args({1, 0})
    ->Args({8, 0})
    ->Args({1, 64})
    ->Args({8, 64})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

// p -= 0.1 * g written into p, both host-resident (an optimizer step on host tensors): each
// slice of p and g goes in, and p's slice comes back into p. From pageable memory the inputs
// are staged through page-locked blocks by threads, and the slices of p come back through the
// same blocks, carried on into p by threads while later slices compute.
std::unique_ptr<Fusion> inPlaceUpdate(int64_t slices) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* step = mul(g, 0.1);
  TensorView* updated = sub(p, step);
  fusion->addOutput(updated);
  fusion->aliasOutputToInput(updated, p);
  for (TensorView* tv : {step, updated}) {
    tv->split(0, slices, /*inner_split=*/false);
    tv->parallelize(0, ParallelType::Stream);
  }
  return fusion;
}

void hostUpdate(benchmark::State& state, bool pinned) {
  const int64_t slices = state.range(0);
  constexpr int64_t kRows = 16384;
  constexpr int64_t kCols = 8192;  // 512 MiB each: 1 GiB in, 512 MiB back
  if (bench::benchmarkStream(state) == nullptr) return;
  bench::guarded(state, [&] {
    const size_t bytes = static_cast<size_t>(kRows * kCols) * sizeof(float);
    auto hostTensor = [&](float scale) {
      const std::shared_ptr<void> memory =
          pinned ? driver::allocatePinnedHost(bytes)
                 : std::shared_ptr<void>(new float[static_cast<size_t>(kRows * kCols)],
                                         [](void* m) { delete[] static_cast<float*>(m); });
      auto* values = static_cast<float*>(memory.get());
      for (int64_t i = 0; i < kRows * kCols; ++i) values[i] = scale * static_cast<float>(i % 1000);
      return HostTensor::borrow(DataType::Float32, {kRows, kCols}, {kCols, 1}, memory.get(),
                                memory);
    };
    const HostTensor p = hostTensor(0.001f);
    const HostTensor g = hostTensor(0.002f);
    FusionExecutorCache cache(inPlaceUpdate(slices));
    RunOptions options;
    options.stream_pool = 8;
    cache.run({p, g}, options);  // compiles and freezes the plan
    std::vector<double> samples;
    for (auto _ : state) {
      const auto start = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(cache.run({p, g}, options));
      samples.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      state.SetIterationTime(samples.back());
    }
    const double median = bench::median(samples);
    state.counters["ms_per_call"] = median * 1e3;
    state.counters["copy_GB/s"] = static_cast<double>(3 * bytes) / median / 1e9;
  });
}

BENCHMARK_CAPTURE(hostUpdate, pinned, true)
    ->Name("host_update")
    ->ArgNames({"slices"})
    ->Args({1})
    ->Args({8})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(hostUpdate, pageable, false)
    ->Name("host_update_pageable")
    ->ArgNames({"slices"})
    ->Args({1})
    ->Args({8})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(streamLoop)
    ->Name("stream_loop")
    ->ArgNames({"rows", "cols", "slices", "graph"})
    ->Apply(shapes)
    ->UseManualTime()
    ->Iterations(9)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace braze

BENCHMARK_MAIN();
