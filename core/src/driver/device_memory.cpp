#include "braze/driver/device_memory.h"

#include <map>
#include <mutex>
#include <string>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"

namespace braze::driver {

namespace {

bool hasMemoryPools(int device) {
  static std::mutex mutex;
  static std::map<int, bool> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(device); it != cache.end()) return it->second;
  CUdevice handle = 0;
  BRAZE_CU(deviceGet, &handle, device);
  int supported = 0;
  BRAZE_CU(deviceGetAttribute, &supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, handle);
  return cache.emplace(device, supported != 0).first->second;
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
  if (!hasMemoryPools(device)) {
    std::shared_ptr<DeviceMemory> memory = allocate(device, bytes);
    memory->synchronize_before_free_ = true;
    memory->stream_ = stream;
    return memory;
  }
  std::shared_ptr<DeviceMemory> memory(new DeviceMemory(device, bytes));
  checkAllocation(driverApi().memAllocAsync(&memory->pointer_, bytes, stream), "cuMemAllocAsync",
                  device, bytes);
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
