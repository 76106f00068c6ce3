#pragma once

// Staging of pageable host memory: a run whose plan copies host inputs to the device reads
// pageable memory at a few GB/s through the driver's own bounce buffer, one slice at a time on
// the calling thread (6.2 GB/s on an H200 host, against 54 GB/s from page-locked memory). So
// before the run enqueues anything, threads copy each pageable input's slices, in the order
// the plan copies them, into a page-locked block of the pinned pool; each copy to the device
// then waits only for its own slice and reads the page-locked block, and the slices after it
// are staged while it and the kernels before it run.
//
// Results written back into a pageable input (an output aliased to it) go the other way: each
// slice is copied from the device into the input's page-locked block, and once that copy has
// run (an event), threads copy it on into the pageable input while later slices compute.

#include <cuda.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "braze/runtime/fusion_kernel_runtime.h"

namespace braze::runtime_detail {

class PageableStaging {
 public:
  /// Starts staging every host-to-device copy of `plan` whose source is a pageable host input
  /// of `arguments`, and prepares every device-to-host copy into one, when those bytes are worth
  /// threads (at least a few MiB). `arguments` must outlive this.
  PageableStaging(const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments);
  /// finish(). The page-locked blocks go back to the pool: destroy this only once the copies
  /// that use them have run (the stream synchronized).
  ~PageableStaging();
  PageableStaging(const PageableStaging&) = delete;
  PageableStaging& operator=(const PageableStaging&) = delete;

  /// Where copy `copy` (an index into plan.copies) reads from once its bytes are staged,
  /// waiting for them; null when it is not staged (its source is page-locked already).
  const char* source(size_t copy);

  /// Where device-to-host copy `copy` writes instead of its pageable target (page-locked), or
  /// null when its target is page-locked already. After enqueueing it, call copiedToHost.
  char* target(size_t copy) const;
  /// Copy `copy` (one that target() redirected) is enqueued on `stream`: threads carry its bytes
  /// on to the pageable target once it has run.
  void copiedToHost(size_t copy, CUstream stream);
  /// Waits until every staged byte has landed where it goes: call it once the stream is
  /// synchronized. Joins the threads; rethrows a failure of theirs (a failed event wait).
  void finish();

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
  void join();

  int device_ = 0;
  std::exception_ptr failure_;       // of a write-back, guarded by mutex_
  std::vector<const char*> staged_;  // per copy: its staged source, or null
  std::vector<char*> targets_;       // per copy: its page-locked target, or null
  std::vector<size_t> chunks_left_;  // per copy, guarded by mutex_
  std::vector<Chunk> chunks_;        // in the order the plan copies them
  /// Per redirected copy: the copies to the device that read bytes it overwrites, which must be
  /// staged before its bytes land in the pageable input.
  std::vector<std::vector<size_t>> readers_;
  std::vector<CUevent> landed_;       // per redirected copy: recorded after it
  std::vector<Chunk> write_back_of_;  // per redirected copy: page-locked to pageable, whole
  std::deque<Chunk> write_backs_;     // chunks of enqueued copies to the host, guarded by mutex_
  std::vector<std::shared_ptr<void>> blocks_;
  std::mutex mutex_;
  std::condition_variable staged_one_;
  std::condition_variable work_;
  size_t next_ = 0;  // the next chunk to take, guarded by mutex_
  bool closing_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace braze::runtime_detail
