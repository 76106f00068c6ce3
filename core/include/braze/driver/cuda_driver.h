#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace braze::driver {

/// The subset of the CUDA driver API Braze calls, resolved at run time from libcuda.so.1 with
/// cuGetProcAddress. Nothing links against libcuda, so libbraze_core loads (and compiles
/// kernels with NVRTC) on a machine without a GPU or driver.
struct DriverApi {
  decltype(&::cuInit) init;
  decltype(&::cuDriverGetVersion) driverGetVersion;
  decltype(&::cuGetErrorName) getErrorName;
  decltype(&::cuGetErrorString) getErrorString;
  decltype(&::cuDeviceGetCount) deviceGetCount;
  decltype(&::cuDeviceGet) deviceGet;
  decltype(&::cuDeviceGetName) deviceGetName;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute;
  decltype(&::cuDeviceTotalMem) deviceTotalMem;
  decltype(&::cuDevicePrimaryCtxRetain) devicePrimaryCtxRetain;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent;
  decltype(&::cuCtxSynchronize) ctxSynchronize;
  decltype(&::cuCtxGetDevice) ctxGetDevice;
  decltype(&::cuModuleLoadData) moduleLoadData;
  decltype(&::cuModuleUnload) moduleUnload;
  decltype(&::cuModuleGetFunction) moduleGetFunction;
  decltype(&::cuFuncGetAttribute) funcGetAttribute;
  decltype(&::cuFuncSetAttribute) funcSetAttribute;
  decltype(&::cuLaunchKernelEx) launchKernelEx;
  decltype(&::cuOccupancyMaxActiveClusters) occupancyMaxActiveClusters;
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled;
  decltype(&::cuTensorMapReplaceAddress) tensorMapReplaceAddress;
  decltype(&::cuMemAlloc) memAlloc;
  decltype(&::cuMemFree) memFree;
  decltype(&::cuMemAllocAsync) memAllocAsync;
  decltype(&::cuMemFreeAsync) memFreeAsync;
  decltype(&::cuMemPoolCreate) memPoolCreate;
  decltype(&::cuMemPoolSetAttribute) memPoolSetAttribute;
  decltype(&::cuMemAllocFromPoolAsync) memAllocFromPoolAsync;
  decltype(&::cuPointerGetAttribute) pointerGetAttribute;
  decltype(&::cuPointerGetAttributes) pointerGetAttributes;
  decltype(&::cuMemcpyHtoD) memcpyHtoD;
  decltype(&::cuMemcpyDtoH) memcpyDtoH;
  decltype(&::cuMemcpyDtoHAsync) memcpyDtoHAsync;
  decltype(&::cuMemcpyDtoDAsync) memcpyDtoDAsync;
  decltype(&::cuMemcpy2DAsync) memcpy2DAsync;
  decltype(&::cuMemcpyHtoDAsync) memcpyHtoDAsync;
  decltype(&::cuMemHostAlloc) memHostAlloc;
  decltype(&::cuMemFreeHost) memFreeHost;
  decltype(&::cuMemsetD8Async) memsetD8Async;
  decltype(&::cuMemsetD32Async) memsetD32Async;
  decltype(&::cuIpcGetMemHandle) ipcGetMemHandle;
  decltype(&::cuIpcOpenMemHandle) ipcOpenMemHandle;
  decltype(&::cuIpcCloseMemHandle) ipcCloseMemHandle;
  decltype(&::cuStreamWriteValue32) streamWriteValue32;
  decltype(&::cuStreamWaitValue32) streamWaitValue32;
  decltype(&::cuStreamCreate) streamCreate;
  decltype(&::cuStreamCreateWithPriority) streamCreateWithPriority;
  decltype(&::cuCtxGetStreamPriorityRange) ctxGetStreamPriorityRange;
  decltype(&::cuStreamDestroy) streamDestroy;
  decltype(&::cuStreamSynchronize) streamSynchronize;
  decltype(&::cuStreamQuery) streamQuery;
  decltype(&::cuLaunchHostFunc) launchHostFunc;
  decltype(&::cuEventCreate) eventCreate;
  decltype(&::cuEventDestroy) eventDestroy;
  decltype(&::cuEventRecord) eventRecord;
  decltype(&::cuEventSynchronize) eventSynchronize;
  decltype(&::cuEventQuery) eventQuery;
  decltype(&::cuEventElapsedTime) eventElapsedTime;
  decltype(&::cuStreamWaitEvent) streamWaitEvent;
  decltype(&::cuGraphCreate) graphCreate;
  decltype(&::cuGraphAddKernelNode) graphAddKernelNode;
  decltype(&::cuGraphAddMemcpyNode) graphAddMemcpyNode;
  decltype(&::cuGraphExecMemcpyNodeSetParams) graphExecMemcpyNodeSetParams;
  decltype(&::cuGraphInstantiate) graphInstantiate;
  decltype(&::cuGraphExecKernelNodeSetParams) graphExecKernelNodeSetParams;
  decltype(&::cuGraphKernelNodeSetAttribute) graphKernelNodeSetAttribute;
  decltype(&::cuGraphLaunch) graphLaunch;
  decltype(&::cuGraphExecDestroy) graphExecDestroy;
  decltype(&::cuGraphDestroy) graphDestroy;
};

/// True when libcuda.so.1 loads, cuInit succeeds and at least one device exists. When false
/// and `reason` is given, it says which step failed.
bool isDriverAvailable(std::string* reason = nullptr);

/// The loaded driver API (loaded and initialized on first use, thread-safely). Throws a
/// braze::Error starting "no CUDA driver or device: " with the failing step when the driver
/// cannot be used; call isDriverAvailable() first to decide without an exception.
const DriverApi& driverApi();

/// Throws a braze::Error naming `call`, the error name and the driver's description when
/// `result` is not CUDA_SUCCESS; a non-empty `context` ("while launching kernel k") follows.
void checkDriver(CUresult result, const char* call, std::string_view context = {});
/// As checkDriver, for a DriverApi member name ("deviceGet"), reported as the driver function
/// it stands for ("cuDeviceGet"); the name is only formatted on failure.
void checkDriverMember(CUresult result, const char* member);

}  // namespace braze::driver

/// Calls a DriverApi member and checks its result: BRAZE_CU(memAlloc, &ptr, bytes).
#define BRAZE_CU(function, ...) \
  ::braze::driver::checkDriverMember(::braze::driver::driverApi().function(__VA_ARGS__), #function)
