#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace braze::driver {

// NCCL's C ABI, declared here so that building Braze never needs nccl.h. These are the facts
// of nccl.h (stable since NCCL 2.10) that the declarations rely on:
// - ncclComm_t is a pointer to an opaque struct;
// - ncclUniqueId is `struct { char internal[128]; }`, passed by value to ncclCommInitRank;
// - ncclResult_t, ncclDataType_t and ncclRedOp_t are C enums of int size with the values below
//   (ncclRedOp_t is sized to int by its ncclMaxRedOp member);
// - cudaStream_t is the driver's CUstream (both are `struct CUstream_st*`).

/// ncclComm_t: a communicator handle.
using NcclComm = struct NcclCommOpaque*;

/// ncclUniqueId: the bytes rank 0 creates and every rank passes to ncclCommInitRank.
struct NcclUniqueId {
  char internal[128];
};

/// ncclResult_t.
enum class NcclResult : int {
  Success = 0,
  UnhandledCudaError = 1,
  SystemError = 2,
  InternalError = 3,
  InvalidArgument = 4,
  InvalidUsage = 5,
  RemoteError = 6,
  InProgress = 7,
};

/// ncclDataType_t.
enum class NcclDataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  BFloat16 = 9,
};

/// ncclRedOp_t, the built-in operations only.
enum class NcclRedOp : int { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4 };

/// The NCCL entry points Braze calls, resolved with dlopen/dlsym: nothing links against NCCL,
/// so libbraze_core loads where NCCL is absent and only multi-device runs need it.
struct NcclApi {
  NcclResult (*getVersion)(int* version);
  NcclResult (*getUniqueId)(NcclUniqueId* id);
  NcclResult (*commInitRank)(NcclComm* comm, int nranks, NcclUniqueId id, int rank);
  NcclResult (*commDestroy)(NcclComm comm);
  NcclResult (*commAbort)(NcclComm comm);
  NcclResult (*commGetAsyncError)(NcclComm comm, NcclResult* async_error);
  const char* (*getErrorString)(NcclResult result);
  const char* (*getLastError)(NcclComm comm);
  NcclResult (*allReduce)(const void* send, void* recv, size_t count, NcclDataType dtype,
                          NcclRedOp op, NcclComm comm, CUstream stream);
  NcclResult (*allGather)(const void* send, void* recv, size_t send_count, NcclDataType dtype,
                          NcclComm comm, CUstream stream);
  NcclResult (*reduceScatter)(const void* send, void* recv, size_t recv_count, NcclDataType dtype,
                              NcclRedOp op, NcclComm comm, CUstream stream);
  NcclResult (*broadcast)(const void* send, void* recv, size_t count, NcclDataType dtype, int root,
                          NcclComm comm, CUstream stream);
  NcclResult (*send)(const void* send, size_t count, NcclDataType dtype, int peer, NcclComm comm,
                     CUstream stream);
  NcclResult (*recv)(void* recv, size_t count, NcclDataType dtype, int peer, NcclComm comm,
                     CUstream stream);
  NcclResult (*groupStart)();
  NcclResult (*groupEnd)();
  /// ncclCommSplit (NCCL 2.18+), or null where the library predates it. The config is passed
  /// as null: the new communicator inherits its parent's.
  NcclResult (*commSplit)(NcclComm comm, int color, int key, NcclComm* new_comm,
                          void* config) = nullptr;
  /// ncclCommCount, ncclCommUserRank and ncclCommCuDevice: what a communicator made elsewhere
  /// is (Communicator::borrow checks them), or null where the library lacks them.
  NcclResult (*commCount)(NcclComm comm, int* count) = nullptr;
  NcclResult (*commUserRank)(NcclComm comm, int* rank) = nullptr;
  NcclResult (*commCuDevice)(NcclComm comm, int* device) = nullptr;
  /// ncclCommRevoke (NCCL 2.28+), or null: stops a communicator's in-flight work without
  /// freeing it, so that its owner can still destroy it. `flags` must be 0.
  NcclResult (*commRevoke)(NcclComm comm, int flags) = nullptr;

  /// The file that was loaded, as it was named ("libnccl.so.2" or a path).
  std::string path;
  /// The file the entry points are in (dladdr), with symbolic links resolved: the library a
  /// handle made elsewhere in the process must come from too.
  std::string file;
  /// ncclGetVersion's code: 22809 for 2.28.9.
  int version = 0;
};

/// The outcome of one attempt to load NCCL: `failure` is empty when `api` is usable.
struct NcclLoadResult {
  NcclApi api{};
  std::string failure;
};

/// The files to try, in order. BRAZE_NCCL_LIBRARY, when set, is the only one: a library named
/// on purpose is never silently replaced by another. Otherwise the loader's search path
/// (libnccl.so.2, which also finds a copy PyTorch already loaded), the CUDA toolkit's lib64 and
/// lib, then nvidia/nccl/lib/libnccl.so.2 under each directory of BRAZE_PYTHON_SITE_PACKAGES
/// (colon-separated), where the nvidia-nccl-cu* wheels put it.
std::vector<std::string> ncclLibraryCandidates(
    const std::function<const char*(const char*)>& getenv = ::getenv);

/// Tries `candidates` in order and resolves every NcclApi entry from the first that loads.
/// On failure the message names every file tried, why each failed, and what to install. Each
/// call loads afresh (a library dlopen'ed once stays loaded); ncclApi() caches one result.
NcclLoadResult loadNcclLibrary(const std::vector<std::string>& candidates);

/// True when NCCL loads (from ncclLibraryCandidates(), once per process). When false and
/// `why` is given, it says what was tried.
bool ncclAvailable(std::string* why = nullptr);

/// The loaded NCCL. Throws a braze::Error starting "NCCL is not available: " that names every
/// file tried when it cannot be loaded.
const NcclApi& ncclApi();

/// Every shared object mapped into this process (dl_iterate_phdr), with symbolic links resolved
/// where the file exists.
std::vector<std::string> mappedLibraries();

/// Why a communicator handle made elsewhere in this process may not be usable through the NCCL
/// in `resolved` (NcclApi::file), given the shared objects `mapped` (mappedLibraries()); empty
/// when `resolved` is the one NCCL among them. A handle is a pointer into the state of the
/// library that made it: another copy of NCCL would read it as its own. Only files named
/// libnccl.so* count (NCCL's network and tuner plugins, libnccl-net*.so, are not NCCL). A copy
/// linked statically into another library (a PyTorch built with NCCL inside libtorch_cuda.so)
/// maps no file of its own and cannot be seen here.
std::string ncclCopiesProblem(const std::vector<std::string>& mapped, const std::string& resolved);

/// "2.28.9" for ncclGetVersion's code 22809 (and the older scheme: 2708 is "2.7.8").
std::string ncclVersionString(int code);

/// Throws a braze::Error naming `call`, NCCL's description of `result`, and the last error
/// NCCL recorded (for `comm`, or the process when null) when `result` is not Success.
void checkNccl(NcclResult result, std::string_view call, NcclComm comm = nullptr,
               std::string_view context = {});

}  // namespace braze::driver
