#include "braze/driver/cuda_driver.h"

#include <dlfcn.h>

#include <cctype>

#include "braze/error.h"

namespace braze::driver {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

struct LoadedDriver {
  DriverApi api{};
  std::string failure;  // empty when the driver is usable
};

// Resolves one entry point for the CUDA version Braze was built against, so that versioned
// symbols (cuMemAlloc -> cuMemAlloc_v2) match the prototypes in cuda.h.
template <typename Fn>
bool resolve(GetProcAddress get_proc, const char* name, Fn& slot, std::string& failure,
             int cuda_version = CUDA_VERSION) {
  void* pointer = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult result =
      get_proc(name, &pointer, cuda_version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (result != CUDA_SUCCESS || pointer == nullptr || status != CU_GET_PROC_ADDRESS_SUCCESS) {
    failure = std::string("the driver has no ") + name + " for CUDA " +
              std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10) +
              "; update the NVIDIA driver";
    return false;
  }
  slot = reinterpret_cast<Fn>(pointer);
  return true;
}

LoadedDriver loadDriver() {
  LoadedDriver loaded;
  // Never unloaded: kernels and modules live as long as the process.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.failure = std::string("cannot load libcuda.so.1 (") + (why ? why : "unknown") +
                     "); install the NVIDIA driver or run where a GPU is present";
    return loaded;
  }
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    loaded.failure =
        "libcuda.so.1 has no cuGetProcAddress_v2; a driver for CUDA 12 or newer is needed";
    return loaded;
  }
  DriverApi& api = loaded.api;
  std::string& failure = loaded.failure;
  const bool ok =
      resolve(get_proc, "cuInit", api.init, failure) &&
      resolve(get_proc, "cuDriverGetVersion", api.driverGetVersion, failure) &&
      resolve(get_proc, "cuGetErrorName", api.getErrorName, failure) &&
      resolve(get_proc, "cuGetErrorString", api.getErrorString, failure) &&
      resolve(get_proc, "cuDeviceGetCount", api.deviceGetCount, failure) &&
      resolve(get_proc, "cuDeviceGet", api.deviceGet, failure) &&
      resolve(get_proc, "cuDeviceGetName", api.deviceGetName, failure) &&
      resolve(get_proc, "cuDeviceGetAttribute", api.deviceGetAttribute, failure) &&
      resolve(get_proc, "cuDeviceTotalMem", api.deviceTotalMem, failure) &&
      resolve(get_proc, "cuDevicePrimaryCtxRetain", api.devicePrimaryCtxRetain, failure) &&
      resolve(get_proc, "cuCtxSetCurrent", api.ctxSetCurrent, failure) &&
      resolve(get_proc, "cuCtxGetCurrent", api.ctxGetCurrent, failure) &&
      // CUDA 13 gave these two a second version under the same name that takes a context
      // (cuCtxSynchronize_v2(CUcontext)); cuda.h's unversioned prototypes are the CUDA 2.0
      // ones, so ask for those. Every other entry's prototype is its newest version.
      resolve(get_proc, "cuCtxSynchronize", api.ctxSynchronize, failure, 2000) &&
      resolve(get_proc, "cuCtxGetDevice", api.ctxGetDevice, failure, 2000) &&
      resolve(get_proc, "cuModuleLoadData", api.moduleLoadData, failure) &&
      resolve(get_proc, "cuModuleUnload", api.moduleUnload, failure) &&
      resolve(get_proc, "cuModuleGetFunction", api.moduleGetFunction, failure) &&
      resolve(get_proc, "cuFuncGetAttribute", api.funcGetAttribute, failure) &&
      resolve(get_proc, "cuFuncSetAttribute", api.funcSetAttribute, failure) &&
      resolve(get_proc, "cuLaunchKernelEx", api.launchKernelEx, failure) &&
      resolve(get_proc, "cuOccupancyMaxActiveClusters", api.occupancyMaxActiveClusters, failure) &&
      resolve(get_proc, "cuTensorMapEncodeTiled", api.tensorMapEncodeTiled, failure) &&
      resolve(get_proc, "cuTensorMapReplaceAddress", api.tensorMapReplaceAddress, failure) &&
      resolve(get_proc, "cuMemAlloc", api.memAlloc, failure) &&
      resolve(get_proc, "cuMemFree", api.memFree, failure) &&
      resolve(get_proc, "cuMemAllocAsync", api.memAllocAsync, failure) &&
      resolve(get_proc, "cuMemFreeAsync", api.memFreeAsync, failure) &&
      resolve(get_proc, "cuMemPoolCreate", api.memPoolCreate, failure) &&
      resolve(get_proc, "cuMemPoolSetAttribute", api.memPoolSetAttribute, failure) &&
      resolve(get_proc, "cuMemAllocFromPoolAsync", api.memAllocFromPoolAsync, failure) &&
      resolve(get_proc, "cuPointerGetAttribute", api.pointerGetAttribute, failure) &&
      resolve(get_proc, "cuPointerGetAttributes", api.pointerGetAttributes, failure) &&
      resolve(get_proc, "cuMemcpyHtoD", api.memcpyHtoD, failure) &&
      resolve(get_proc, "cuMemcpyDtoH", api.memcpyDtoH, failure) &&
      resolve(get_proc, "cuMemcpyDtoHAsync", api.memcpyDtoHAsync, failure) &&
      resolve(get_proc, "cuMemcpyDtoDAsync", api.memcpyDtoDAsync, failure) &&
      resolve(get_proc, "cuMemcpy2DAsync", api.memcpy2DAsync, failure) &&
      resolve(get_proc, "cuMemcpyHtoDAsync", api.memcpyHtoDAsync, failure) &&
      resolve(get_proc, "cuMemHostAlloc", api.memHostAlloc, failure) &&
      resolve(get_proc, "cuMemFreeHost", api.memFreeHost, failure) &&
      resolve(get_proc, "cuMemsetD8Async", api.memsetD8Async, failure) &&
      resolve(get_proc, "cuMemsetD32Async", api.memsetD32Async, failure) &&
      resolve(get_proc, "cuIpcGetMemHandle", api.ipcGetMemHandle, failure) &&
      resolve(get_proc, "cuIpcOpenMemHandle", api.ipcOpenMemHandle, failure) &&
      resolve(get_proc, "cuIpcCloseMemHandle", api.ipcCloseMemHandle, failure) &&
      resolve(get_proc, "cuStreamWriteValue32", api.streamWriteValue32, failure) &&
      resolve(get_proc, "cuStreamWaitValue32", api.streamWaitValue32, failure) &&
      resolve(get_proc, "cuStreamCreate", api.streamCreate, failure) &&
      resolve(get_proc, "cuStreamCreateWithPriority", api.streamCreateWithPriority, failure) &&
      resolve(get_proc, "cuCtxGetStreamPriorityRange", api.ctxGetStreamPriorityRange, failure) &&
      resolve(get_proc, "cuStreamDestroy", api.streamDestroy, failure) &&
      resolve(get_proc, "cuStreamSynchronize", api.streamSynchronize, failure) &&
      resolve(get_proc, "cuStreamQuery", api.streamQuery, failure) &&
      resolve(get_proc, "cuLaunchHostFunc", api.launchHostFunc, failure) &&
      resolve(get_proc, "cuEventCreate", api.eventCreate, failure) &&
      resolve(get_proc, "cuEventDestroy", api.eventDestroy, failure) &&
      resolve(get_proc, "cuEventRecord", api.eventRecord, failure) &&
      resolve(get_proc, "cuEventSynchronize", api.eventSynchronize, failure) &&
      resolve(get_proc, "cuEventQuery", api.eventQuery, failure) &&
      resolve(get_proc, "cuEventElapsedTime", api.eventElapsedTime, failure) &&
      resolve(get_proc, "cuStreamWaitEvent", api.streamWaitEvent, failure) &&
      resolve(get_proc, "cuGraphCreate", api.graphCreate, failure) &&
      resolve(get_proc, "cuGraphAddKernelNode", api.graphAddKernelNode, failure) &&
      resolve(get_proc, "cuGraphAddMemcpyNode", api.graphAddMemcpyNode, failure) &&
      resolve(get_proc, "cuGraphExecMemcpyNodeSetParams", api.graphExecMemcpyNodeSetParams,
              failure) &&
      resolve(get_proc, "cuGraphInstantiateWithFlags", api.graphInstantiate, failure) &&
      resolve(get_proc, "cuGraphExecKernelNodeSetParams", api.graphExecKernelNodeSetParams,
              failure) &&
      resolve(get_proc, "cuGraphKernelNodeSetAttribute", api.graphKernelNodeSetAttribute,
              failure) &&
      resolve(get_proc, "cuGraphLaunch", api.graphLaunch, failure) &&
      resolve(get_proc, "cuGraphExecDestroy", api.graphExecDestroy, failure) &&
      resolve(get_proc, "cuGraphDestroy", api.graphDestroy, failure);
  if (!ok) return loaded;

  if (CUresult result = api.init(0); result != CUDA_SUCCESS) {
    const char* name = nullptr;
    api.getErrorName(result, &name);
    loaded.failure = std::string("cuInit failed with ") + (name ? name : "an unknown error") +
                     "; check that a GPU is visible (nvidia-smi) and the driver is loaded";
    return loaded;
  }
  int count = 0;
  if (api.deviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    loaded.failure = "the driver sees no CUDA device; check CUDA_VISIBLE_DEVICES and nvidia-smi";
  }
  return loaded;
}

const LoadedDriver& loadedDriver() {
  static const LoadedDriver loaded = loadDriver();
  return loaded;
}

}  // namespace

bool isDriverAvailable(std::string* reason) {
  const LoadedDriver& loaded = loadedDriver();
  if (reason != nullptr) *reason = loaded.failure;
  return loaded.failure.empty();
}

const DriverApi& driverApi() {
  const LoadedDriver& loaded = loadedDriver();
  BRAZE_USER_CHECK(loaded.failure.empty()) << "no CUDA driver or device: " << loaded.failure;
  return loaded.api;
}

void checkDriver(CUresult result, const char* call, std::string_view context) {
  if (result == CUDA_SUCCESS) return;
  const DriverApi& api = driverApi();
  const char* name = nullptr;
  const char* description = nullptr;
  api.getErrorName(result, &name);
  api.getErrorString(result, &description);
  BRAZE_THROW() << call << " failed: " << (name ? name : "unknown error") << " ("
                << (description ? description : "no description") << ")"
                << (context.empty() ? "" : " ") << context;
}

void checkDriverMember(CUresult result, const char* member) {
  if (result == CUDA_SUCCESS) return;
  std::string call = std::string("cu") + member;
  if (call.size() > 2)
    call[2] = static_cast<char>(std::toupper(static_cast<unsigned char>(call[2])));
  checkDriver(result, call.c_str());
}

}  // namespace braze::driver
