#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace braze::driver {

/// Page-locked host memory, `bytes` of it, from a process-wide pool: what a run copies results
/// back into, so that the copies are asynchronous and overlap kernels. The block goes back to
/// the pool when its last owner drops it, and the next request of the same rounded size takes
/// it without a driver call: cuMemHostAlloc and cuMemFreeHost map and unmap every page for the
/// device, about a millisecond per hundred MiB. The pool keeps at most
/// pinnedHostPoolCapacity() bytes of free blocks; the rest go back to the driver. Zero bytes
/// allocate nothing (a null pointer). Throws braze::Error when the driver refuses.
std::shared_ptr<void> allocatePinnedHost(size_t bytes);

/// Whether `pointer` is page-locked host memory the driver knows (cuMemHostAlloc'd or
/// registered, as torch's pin_memory() makes): copies from it can be asynchronous and captured
/// in a CUDA graph. False for pageable memory.
bool isPinnedHost(const void* pointer);

struct PinnedHostPoolCounters {
  int64_t driver_allocations = 0;  ///< blocks the driver made
  int64_t reuses = 0;              ///< requests served by a kept block
  size_t kept_bytes = 0;           ///< free blocks kept now
};
PinnedHostPoolCounters pinnedHostPoolCounters();

/// The most bytes of free blocks the pool keeps: BRAZE_PINNED_POOL_MIB, or 2 GiB.
size_t pinnedHostPoolCapacity();

/// Frees every kept block now.
void releaseKeptPinnedHost();

}  // namespace braze::driver
