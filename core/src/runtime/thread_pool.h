#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace braze {

/// Runs task(0) .. task(count - 1) on up to `threads` threads (0: one per hardware thread),
/// the calling thread among them, and rethrows the first exception a task threw once every
/// task has ended. Compiling a runtime's segments is the use: each task is long (lowering and
/// NVRTC, tens of milliseconds), so threads are started per call rather than kept.
inline void runParallel(size_t count, int threads, const std::function<void(size_t)>& task) {
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = std::min(count, threads > 0 ? static_cast<size_t>(threads) : hardware);
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace braze
