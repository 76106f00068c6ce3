#include "braze/driver/primary_context.h"

#include <map>
#include <mutex>

#include "braze/driver/cuda_driver.h"
#include "braze/error.h"

namespace braze::driver {

namespace {

CUcontext retainedPrimaryContext(int ordinal) {
  static std::mutex mutex;
  static std::map<int, CUcontext> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = contexts.find(ordinal); it != contexts.end()) return it->second;
  driverApi();  // without a driver, its own error says why
  const int count = deviceCount();
  BRAZE_USER_CHECK(ordinal >= 0 && ordinal < count)
      << "CUDA device " << ordinal << " does not exist: the driver sees " << count << " device"
      << (count == 1 ? "" : "s") << " (ordinals 0 .. " << count - 1
      << "); check CUDA_VISIBLE_DEVICES";
  CUdevice device = 0;
  BRAZE_CU(deviceGet, &device, ordinal);
  CUcontext context = nullptr;
  // Never released: modules, functions and allocations made in it live as long as the process.
  BRAZE_CU(devicePrimaryCtxRetain, &context, device);
  contexts.emplace(ordinal, context);
  return context;
}

}  // namespace

int deviceCount() {
  if (!isDriverAvailable()) return 0;
  int count = 0;
  BRAZE_CU(deviceGetCount, &count);
  return count;
}

CUcontext makePrimaryContextCurrent(int ordinal) {
  // Every launch comes here: the retained contexts' lock is taken once per thread and device.
  thread_local int cached_ordinal = -1;
  thread_local CUcontext cached_context = nullptr;
  if (ordinal != cached_ordinal) {
    cached_context = retainedPrimaryContext(ordinal);
    cached_ordinal = ordinal;
  }
  const CUcontext context = cached_context;
  CUcontext current = nullptr;
  BRAZE_CU(ctxGetCurrent, &current);
  if (current != context) BRAZE_CU(ctxSetCurrent, context);
  return context;
}

}  // namespace braze::driver
