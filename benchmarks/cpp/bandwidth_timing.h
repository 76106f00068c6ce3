#pragma once

// What the C++ benchmarks share: timing device work with CUDA events and reporting it as
// bandwidth, next to the device-to-device copy bandwidth measured in the same run.
//
// Method (the Python side-by-side script times PyTorch the same way): one untimed launch that
// keeps the device busy while the host enqueues the timed ones, then CUDA events around
// kLaunchesPerSample back-to-back launches on one stream; a sample is the elapsed time divided
// by the launches. Bandwidth counts bytes read plus bytes written.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/runtime/device_tensor.h"

namespace braze::bench {

inline constexpr int kLaunchesPerSample = 10;

/// Times `launch` (which enqueues one unit of work on `stream`) with CUDA events.
class EventTimer {
 public:
  explicit EventTimer(CUstream stream) : stream_(stream) {
    BRAZE_CU(eventCreate, &start_, CU_EVENT_DEFAULT);
    BRAZE_CU(eventCreate, &stop_, CU_EVENT_DEFAULT);
  }
  ~EventTimer() {
    driver::driverApi().eventDestroy(start_);
    driver::driverApi().eventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Seconds per launch: one sample.
  template <typename Launch>
  double time(Launch&& launch) {
    launch();  // untimed: keeps the device busy while the timed launches are enqueued
    BRAZE_CU(eventRecord, start_, stream_);
    const auto host_start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunchesPerSample; ++i) launch();
    host_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count() /
        kLaunchesPerSample;
    BRAZE_CU(eventRecord, stop_, stream_);
    BRAZE_CU(eventSynchronize, stop_);
    float milliseconds = 0.0f;
    BRAZE_CU(eventElapsedTime, &milliseconds, start_, stop_);
    return milliseconds / 1000.0 / kLaunchesPerSample;
  }

  /// Host seconds per launch to enqueue the last sample's launches. When it is close to the
  /// sample itself, the device waited for the host and the sample measures the host.
  double hostSecondsPerLaunch() const { return host_seconds_; }

 private:
  CUstream stream_;
  double host_seconds_ = 0.0;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

/// A stream for the whole program, or null after marking `state` skipped when there is no GPU.
inline CUstream benchmarkStream(benchmark::State& state) {
  static CUstream stream = nullptr;
  std::string reason;
  if (!driver::isDriverAvailable(&reason)) {
    state.SkipWithError(("no CUDA driver or device: " + reason).c_str());
    return nullptr;
  }
  if (stream == nullptr) {
    driver::makePrimaryContextCurrent(0);
    BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  }
  return stream;
}

/// Runs `body`, turning an exception into a skipped benchmark with its message, so that one
/// kernel that fails to schedule, build or launch does not end the whole run.
template <typename Body>
void guarded(benchmark::State& state, Body&& body) {
  try {
    body();
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

/// Bytes of the reference copy: 256 MiB read and 256 MiB written.
inline constexpr int64_t kCopyBytes = int64_t{256} << 20;

/// `samples` timings of cuMemcpyDtoDAsync of kCopyBytes (seconds per copy).
inline std::vector<double> copySamples(CUstream stream, int samples) {
  const DeviceTensor source = DeviceTensor::empty(DataType::Float32, {kCopyBytes / 4});
  const DeviceTensor target = DeviceTensor::empty(DataType::Float32, {kCopyBytes / 4});
  source.fillBytes(0x3C, stream);
  target.fillBytes(0x00, stream);
  EventTimer timer(stream);
  std::vector<double> result;
  for (int i = 0; i < samples; ++i) {
    result.push_back(timer.time([&] {
      BRAZE_CU(memcpyDtoDAsync, target.data(), source.data(), static_cast<size_t>(kCopyBytes),
               stream);
    }));
  }
  BRAZE_CU(streamSynchronize, stream);
  return result;
}

inline constexpr int kCopySamples = 9;

/// The samples of the reference copy in this run, taken on first use.
inline const std::vector<double>& copyReferenceSamples(CUstream stream) {
  static const std::vector<double> samples = copySamples(stream, kCopySamples);
  return samples;
}

/// The device-to-device copy's bandwidth in this run (bytes read + written per second, from the
/// median of copyReferenceSamples).
inline double copyBandwidth(CUstream stream) {
  return 2.0 * static_cast<double>(kCopyBytes) / median(copyReferenceSamples(stream));
}

/// Reports `bytes_per_launch` moved in `seconds_per_launch`: bytes/s, "GB/s", and "of_copy"
/// (the fraction of copyBandwidth).
inline void reportBandwidth(benchmark::State& state, CUstream stream, int64_t bytes_per_launch,
                            double seconds_per_launch) {
  state.SetBytesProcessed(bytes_per_launch * static_cast<int64_t>(state.iterations()));
  const double bandwidth = static_cast<double>(bytes_per_launch) / seconds_per_launch;
  state.counters["GB/s"] = bandwidth / 1e9;
  state.counters["of_copy"] = bandwidth / copyBandwidth(stream);
}

/// Times `launch` (which enqueues one call on `stream`): two untimed calls, then one sample per
/// iteration of `state`. Reports the bandwidth of `bytes` moved per call, `median_us`, `host_us`
/// (host time per call while enqueuing: when it is near `median_us`, the device waited for the
/// host) and `bytes`. Nothing synchronizes between the calls of a sample.
template <typename Launch>
void timeLaunches(benchmark::State& state, CUstream stream, int64_t bytes, Launch&& launch) {
  launch();
  launch();
  BRAZE_CU(streamSynchronize, stream);
  EventTimer timer(stream);
  std::vector<double> samples;
  std::vector<double> host_samples;
  for (auto _ : state) {
    samples.push_back(timer.time(launch));
    host_samples.push_back(timer.hostSecondsPerLaunch());
    state.SetIterationTime(samples.back());
  }
  const double seconds = median(samples);
  reportBandwidth(state, stream, bytes, seconds);
  state.counters["median_us"] = seconds * 1e6;
  state.counters["host_us"] = median(host_samples) * 1e6;
  state.counters["bytes"] = static_cast<double>(bytes);
}

}  // namespace braze::bench
