#pragma once

// Staging of pageable host inputs: a run whose plan copies host inputs to the device reads
// pageable memory at a few GB/s through the driver's own bounce buffer, one slice at a time on
// the calling thread (6.2 GB/s on an H200 host, against 54 GB/s from page-locked memory). So
// before the run enqueues anything, threads copy each pageable input's slices, in the order
// the plan copies them, into a page-locked block of the pinned pool; each copy to the device
// then waits only for its own slice and reads the page-locked block, and the slices after it
// are staged while it and the kernels before it run.

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "braze/runtime/fusion_kernel_runtime.h"

namespace braze::runtime_detail {

class PageableStaging {
 public:
  /// Starts staging every host-to-device copy of `plan` whose source is a pageable host input
  /// of `arguments`, when those bytes are worth threads (at least a few MiB). `arguments` must
  /// outlive this.
  PageableStaging(const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments);
  /// Waits for the threads. The page-locked blocks go back to the pool: destroy this only once
  /// the copies that read them have run (the stream synchronized).
  ~PageableStaging();
  PageableStaging(const PageableStaging&) = delete;
  PageableStaging& operator=(const PageableStaging&) = delete;

  /// Where copy `copy` (an index into plan.copies) reads from once its bytes are staged,
  /// waiting for them; null when it is not staged (its source is page-locked already).
  const char* source(size_t copy);

  /// Threads that stage: BRAZE_HOST_COPY_THREADS, or the hardware threads, at most 8.
  static int threads();

 private:
  struct Chunk {
    size_t copy = 0;
    const char* from = nullptr;
    char* into = nullptr;
    size_t bytes = 0;
  };
  void work();

  std::vector<const char*> staged_;  // per copy: its staged source, or null
  std::vector<size_t> chunks_left_;  // per copy, guarded by mutex_
  std::vector<Chunk> chunks_;        // in the order the plan copies them
  std::vector<std::shared_ptr<void>> blocks_;
  std::mutex mutex_;
  std::condition_variable staged_one_;
  size_t next_ = 0;  // the next chunk to take, guarded by mutex_
  std::vector<std::thread> workers_;
};

}  // namespace braze::runtime_detail
