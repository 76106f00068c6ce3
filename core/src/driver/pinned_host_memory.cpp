// The pool of page-locked host blocks (braze/driver/pinned_host_memory.h).

#include "braze/driver/pinned_host_memory.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"

namespace braze::driver {
namespace {

// Sizes are rounded so that a run of one signature, and its neighbours, reuse blocks: powers of
// two up to 2 MiB, multiples of 2 MiB above.
size_t roundedSize(size_t bytes) {
  constexpr size_t kLarge = size_t{2} << 20;
  if (bytes >= kLarge) return (bytes + kLarge - 1) / kLarge * kLarge;
  size_t size = 4096;
  while (size < bytes) size *= 2;
  return size;
}

class PinnedHostPool {
 public:
  PinnedHostPool() {
    capacity_ = size_t{2} << 30;
    if (const char* mib = std::getenv("BRAZE_PINNED_POOL_MIB")) {
      char* end = nullptr;
      const unsigned long long value = std::strtoull(mib, &end, 10);
      if (end != mib && *end == '\0') capacity_ = static_cast<size_t>(value) << 20;
    }
  }

  void* take(size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = kept_.find(size);
      if (found != kept_.end() && !found->second.empty()) {
        void* block = found->second.back();
        found->second.pop_back();
        kept_bytes_ -= size;
        ++counters_.reuses;
        return block;
      }
      ++counters_.driver_allocations;
    }
    // cuMemHostAlloc needs a current context; the primary context of device 0 serves every
    // device (portable memory).
    makePrimaryContextCurrent(currentOrFirstDevice());
    void* block = nullptr;
    checkDriver(driverApi().memHostAlloc(&block, size, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
                "while allocating " + std::to_string(size) +
                    " bytes of page-locked host memory for results copied back to the host");
    return block;
  }

  void give(void* block, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (kept_bytes_ + size <= capacity_) {
        kept_[size].push_back(block);
        kept_bytes_ += size;
        return;
      }
    }
    driverApi().memFreeHost(block);
  }

  void releaseKept() {
    std::map<size_t, std::vector<void*>> kept;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      kept.swap(kept_);
      kept_bytes_ = 0;
    }
    for (auto& [size, blocks] : kept) {
      for (void* block : blocks) driverApi().memFreeHost(block);
    }
  }

  PinnedHostPoolCounters counters() {
    std::lock_guard<std::mutex> lock(mutex_);
    PinnedHostPoolCounters counters = counters_;
    counters.kept_bytes = kept_bytes_;
    return counters;
  }

  size_t capacity() const { return capacity_; }

 private:
  static int currentOrFirstDevice() {
    CUcontext context = nullptr;
    CUdevice device = 0;
    if (driverApi().ctxGetCurrent(&context) == CUDA_SUCCESS && context != nullptr &&
        driverApi().ctxGetDevice(&device) == CUDA_SUCCESS)
      return static_cast<int>(device);
    return 0;
  }

  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> kept_;  // free blocks by rounded size
  size_t kept_bytes_ = 0;
  size_t capacity_ = 0;
  PinnedHostPoolCounters counters_;
};

// Never destroyed: blocks may be given back while the process exits.
PinnedHostPool& pool() {
  static auto* instance = new PinnedHostPool();
  return *instance;
}

}  // namespace

std::shared_ptr<void> allocatePinnedHost(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t size = roundedSize(bytes);
  void* block = pool().take(size);
  return std::shared_ptr<void>(block, [size](void* p) { pool().give(p, size); });
}

bool isPinnedHost(const void* pointer) {
  if (pointer == nullptr) return false;
  // The plural form answers "not the driver's" with a zero instead of an error, which
  // compute-sanitizer would report.
  CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  unsigned int memory_type = 0;
  void* values[] = {&memory_type};
  const CUresult result = driverApi().pointerGetAttributes(
      1, &attribute, values, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer)));
  return result == CUDA_SUCCESS && memory_type == CU_MEMORYTYPE_HOST;
}

PinnedHostPoolCounters pinnedHostPoolCounters() {
  return pool().counters();
}

size_t pinnedHostPoolCapacity() {
  return pool().capacity();
}

void releaseKeptPinnedHost() {
  pool().releaseKept();
}

}  // namespace braze::driver
