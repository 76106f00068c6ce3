#include "braze/driver/device_memory.h"

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"

namespace braze::driver {

namespace {

/// Braze's stream-ordered pool of `device`, or null where the device has none. A pool of its
/// own rather than the device's default one: it keeps what it has (release threshold: never),
/// so allocations after a synchronization do not map memory again, without changing how the
/// default pool behaves for anyone else in the process.
CUmemoryPool streamOrderedPool(int device) {
  thread_local int cached_device = -1;
  thread_local CUmemoryPool cached_pool = nullptr;
  if (device == cached_device) return cached_pool;
  static std::mutex mutex;
  static std::map<int, CUmemoryPool> pools;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = pools.find(device);
  if (it == pools.end()) {
    CUdevice handle = 0;
    BRAZE_CU(deviceGet, &handle, device);
    int supported = 0;
    BRAZE_CU(deviceGetAttribute, &supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, handle);
    CUmemoryPool pool = nullptr;
    if (supported != 0) {
      CUmemPoolProps props{};
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
      props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      props.location.id = device;
      BRAZE_CU(memPoolCreate, &pool, &props);
      cuuint64_t keep_everything = ~cuuint64_t{0};
      BRAZE_CU(memPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_everything);
    }
    it = pools.emplace(device, pool).first;
  }
  cached_device = device;
  cached_pool = it->second;
  return cached_pool;
}

// An allocation failure names the size and the device: the driver's message alone does not.
void checkAllocation(CUresult result, const char* call, int device, size_t bytes) {
  if (result == CUDA_SUCCESS) return;
  try {
    checkDriver(result, call);
  } catch (const Error& error) {
    BRAZE_THROW() << error.what() << " while allocating " << bytes << " bytes on cuda:" << device
                  << (result == CUDA_ERROR_OUT_OF_MEMORY
                          ? "; free device memory or use smaller tensors"
                          : "");
  }
}

/// Blocks of the legacy default stream kept after their last reference is gone, for the next
/// allocation of the same rounded size on that stream: a run from Python on a cache hit then
/// allocates its outputs and frees them without a driver call (cuMemAllocFromPoolAsync and
/// cuMemFreeAsync cost about a microsecond each on a busy host). Reuse is safe in stream
/// order: work enqueued on the stream after the allocation runs after the work that used the
/// block before, exactly as with the pool's own same-stream reuse. Only the default stream:
/// it lives as long as the context, so no cached block can outlive its stream. Bounded per
/// size and in total; everything above the bounds, and everything when an allocation fails,
/// goes back to the pool.
class DefaultStreamBlocks {
 public:
  static DefaultStreamBlocks& instance() {
    // Never destroyed: at exit the driver may be gone, and the pool frees the blocks anyway.
    static auto* blocks = new DefaultStreamBlocks;
    return *blocks;
  }

  /// The size a block of `bytes` is allocated with, so that similar requests share blocks.
  static size_t roundedSize(size_t bytes) {
    constexpr size_t kSmall = 512;
    constexpr size_t kLarge = size_t{2} << 20;
    const size_t granule = bytes < kLarge ? kSmall : kLarge;
    return (bytes + granule - 1) / granule * granule;
  }

  /// A kept block of exactly `rounded` bytes on `device`, or 0.
  CUdeviceptr take(int device, size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(Key{device, rounded});
    if (it == free_.end() || it->second.empty()) return 0;
    const CUdeviceptr pointer = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= rounded;
    return pointer;
  }

  /// Keeps a block whose last use is enqueued on the default stream; false when the bounds
  /// are reached (the caller frees it).
  bool keep(int device, size_t rounded, CUdeviceptr pointer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_bytes_ + rounded > kMaxCachedBytes) return false;
    std::vector<CUdeviceptr>& blocks = free_[Key{device, rounded}];
    if (blocks.size() >= kMaxBlocksPerSize) return false;
    blocks.push_back(pointer);
    cached_bytes_ += rounded;
    return true;
  }

  /// Returns every kept block of `device` to the pool (before retrying a failed allocation).
  void release(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [key, blocks] : free_) {
      if (key.device != device) continue;
      for (const CUdeviceptr pointer : blocks) driverApi().memFreeAsync(pointer, nullptr);
      cached_bytes_ -= key.bytes * blocks.size();
      blocks.clear();
    }
  }

 private:
  static constexpr size_t kMaxBlocksPerSize = 16;
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;

  struct Key {
    int device;
    size_t bytes;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<size_t>{}(key.bytes) ^ (static_cast<size_t>(key.device) << 56);
    }
  };

  std::mutex mutex_;
  std::unordered_map<Key, std::vector<CUdeviceptr>, KeyHash> free_;
  size_t cached_bytes_ = 0;
};

}  // namespace

std::shared_ptr<DeviceMemory> DeviceMemory::allocate(int device, size_t bytes) {
  std::shared_ptr<DeviceMemory> memory(new DeviceMemory(device, bytes));
  if (bytes == 0) return memory;
  makePrimaryContextCurrent(device);
  checkAllocation(driverApi().memAlloc(&memory->pointer_, bytes), "cuMemAlloc", device, bytes);
  return memory;
}

std::shared_ptr<DeviceMemory> DeviceMemory::allocateOnStream(int device, size_t bytes,
                                                             CUstream stream) {
  if (bytes == 0) return allocate(device, 0);
  makePrimaryContextCurrent(device);
  CUmemoryPool pool = streamOrderedPool(device);
  if (pool == nullptr) {
    std::shared_ptr<DeviceMemory> memory = allocate(device, bytes);
    memory->synchronize_before_free_ = true;
    memory->stream_ = stream;
    return memory;
  }
  std::shared_ptr<DeviceMemory> memory(new DeviceMemory(device, bytes));
  memory->stream_ordered_ = true;
  memory->stream_ = stream;
  if (stream == nullptr) {
    memory->kept_bytes_ = DefaultStreamBlocks::roundedSize(bytes);
    memory->pointer_ = DefaultStreamBlocks::instance().take(device, memory->kept_bytes_);
    if (memory->pointer_ != 0) return memory;
  }
  const size_t size = memory->kept_bytes_ != 0 ? memory->kept_bytes_ : bytes;
  CUresult result = driverApi().memAllocFromPoolAsync(&memory->pointer_, size, pool, stream);
  if (result == CUDA_ERROR_OUT_OF_MEMORY && stream == nullptr) {
    DefaultStreamBlocks::instance().release(device);
    result = driverApi().memAllocFromPoolAsync(&memory->pointer_, size, pool, stream);
  }
  checkAllocation(result, "cuMemAllocFromPoolAsync", device, size);
  return memory;
}

std::shared_ptr<DeviceMemory> DeviceMemory::borrow(int device, CUdeviceptr pointer, size_t bytes,
                                                   std::shared_ptr<void> owner) {
  std::shared_ptr<DeviceMemory> memory(new DeviceMemory(device, bytes));
  memory->pointer_ = pointer;
  memory->owner_ = owner ? std::move(owner) : std::make_shared<int>(0);
  return memory;
}

DeviceMemory::~DeviceMemory() {
  if (pointer_ == 0 || owner_ != nullptr) return;
  if (kept_bytes_ != 0 && DefaultStreamBlocks::instance().keep(device_, kept_bytes_, pointer_))
    return;
  // Destructors must not throw; at process exit the driver may already be shut down
  // (CUDA_ERROR_DEINITIALIZED), and then there is nothing left to free.
  const DriverApi& api = driverApi();
  CUcontext current = nullptr;
  if (api.ctxGetCurrent(&current) != CUDA_SUCCESS) return;
  try {
    makePrimaryContextCurrent(device_);
  } catch (const Error&) {
    return;
  }
  if (stream_ordered_) {
    api.memFreeAsync(pointer_, stream_);
    return;
  }
  if (synchronize_before_free_) api.streamSynchronize(stream_);
  api.memFree(pointer_);
}

}  // namespace braze::driver
