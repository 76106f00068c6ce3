#include "braze/driver/device_memory.h"

#include <map>
#include <mutex>
#include <string>

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
  checkAllocation(driverApi().memAllocFromPoolAsync(&memory->pointer_, bytes, pool, stream),
                  "cuMemAllocFromPoolAsync", device, bytes);
  memory->stream_ordered_ = true;
  memory->stream_ = stream;
  return memory;
}

DeviceMemory::~DeviceMemory() {
  if (pointer_ == 0) return;
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
