#include "braze/driver/nccl_library.h"

#include <dlfcn.h>

#include <string_view>

#include "braze/error.h"

namespace braze::driver {

namespace {

// The wheel matching the CUDA major version Braze was built with: nvidia-nccl-cu13 for 13.x.
std::string ncclWheelName() {
  return "nvidia-nccl-cu" + std::to_string(CUDA_VERSION / 1000);
}

template <typename Fn>
bool resolve(void* library, const char* name, Fn& slot, std::string& missing) {
  void* pointer = dlsym(library, name);
  if (pointer == nullptr) {
    missing = name;
    return false;
  }
  slot = reinterpret_cast<Fn>(pointer);
  return true;
}

// Resolves every entry point from one library; empty on success, else why this file is unusable.
std::string resolveAll(void* library, NcclApi& api) {
  std::string missing;
  const bool ok = resolve(library, "ncclGetVersion", api.getVersion, missing) &&
                  resolve(library, "ncclGetUniqueId", api.getUniqueId, missing) &&
                  resolve(library, "ncclCommInitRank", api.commInitRank, missing) &&
                  resolve(library, "ncclCommDestroy", api.commDestroy, missing) &&
                  resolve(library, "ncclCommAbort", api.commAbort, missing) &&
                  resolve(library, "ncclCommGetAsyncError", api.commGetAsyncError, missing) &&
                  resolve(library, "ncclGetErrorString", api.getErrorString, missing) &&
                  resolve(library, "ncclGetLastError", api.getLastError, missing) &&
                  resolve(library, "ncclAllReduce", api.allReduce, missing) &&
                  resolve(library, "ncclAllGather", api.allGather, missing) &&
                  resolve(library, "ncclReduceScatter", api.reduceScatter, missing) &&
                  resolve(library, "ncclBroadcast", api.broadcast, missing) &&
                  resolve(library, "ncclSend", api.send, missing) &&
                  resolve(library, "ncclRecv", api.recv, missing) &&
                  resolve(library, "ncclGroupStart", api.groupStart, missing) &&
                  resolve(library, "ncclGroupEnd", api.groupEnd, missing);
  if (ok) {
    // Optional: only sharded fusions on 2-D meshes split the communicator.
    std::string absent;
    (void)resolve(library, "ncclCommSplit", api.commSplit, absent);
  }
  if (!ok && api.getVersion == nullptr) return "it has no " + missing + ": not an NCCL library";
  if (!ok) return "it has no " + missing + " (an NCCL older than 2.13?)";
  if (api.getVersion(&api.version) != NcclResult::Success) return "ncclGetVersion failed";
  // bfloat16 and ncclAvg, which Braze's collectives map to, came with 2.10.
  if (api.version < 21000) {
    return "it is NCCL " + ncclVersionString(api.version) + "; Braze needs 2.10 or newer";
  }
  return {};
}

const NcclLoadResult& loadedNccl() {
  static const NcclLoadResult loaded = loadNcclLibrary(ncclLibraryCandidates());
  return loaded;
}

}  // namespace

std::vector<std::string> ncclLibraryCandidates(
    const std::function<const char*(const char*)>& getenv) {
  const char* chosen = getenv("BRAZE_NCCL_LIBRARY");
  if (chosen != nullptr && *chosen != '\0') return {chosen};
  std::vector<std::string> candidates = {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                         "/usr/local/cuda/lib/libnccl.so.2"};
  const char* site_packages = getenv("BRAZE_PYTHON_SITE_PACKAGES");
  std::string_view dirs = site_packages != nullptr ? site_packages : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    if (!dir.empty()) candidates.push_back(std::string(dir) + "/nvidia/nccl/lib/libnccl.so.2");
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
  }
  return candidates;
}

NcclLoadResult loadNcclLibrary(const std::vector<std::string>& candidates) {
  NcclLoadResult result;
  std::string tried;
  for (const std::string& path : candidates) {
    // Never unloaded: communicators and their threads live as long as the process.
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string why;
    if (library == nullptr) {
      const char* error = dlerror();
      why = error != nullptr ? error : "cannot be loaded";
    } else {
      NcclApi api{};
      why = resolveAll(library, api);
      if (why.empty()) {
        api.path = path;
        result.api = api;
        return result;
      }
    }
    tried += "\n  " + path + ": " + why;
  }
  result.failure = "cannot load libnccl.so.2; tried:" + tried + "\nInstall NCCL (pip install " +
                   ncclWheelName() +
                   ", then set BRAZE_PYTHON_SITE_PACKAGES to that site-packages directory) or "
                   "set BRAZE_NCCL_LIBRARY to the path of a libnccl.so.2";
  return result;
}

bool ncclAvailable(std::string* why) {
  const NcclLoadResult& loaded = loadedNccl();
  if (why != nullptr) *why = loaded.failure;
  return loaded.failure.empty();
}

const NcclApi& ncclApi() {
  const NcclLoadResult& loaded = loadedNccl();
  BRAZE_USER_CHECK(loaded.failure.empty()) << "NCCL is not available: " << loaded.failure;
  return loaded.api;
}

std::string ncclVersionString(int code) {
  // NCCL_VERSION(X, Y, Z) was X*1000 + Y*100 + Z until 2.9 and X*10000 + Y*100 + Z since.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

void checkNccl(NcclResult result, std::string_view call, NcclComm comm, std::string_view context) {
  if (result == NcclResult::Success) return;
  const NcclApi& api = ncclApi();
  const char* description = api.getErrorString(result);
  const char* last = api.getLastError(comm);
  BRAZE_THROW() << call << " failed: " << (description ? description : "unknown NCCL error")
                << " (ncclResult_t " << static_cast<int>(result) << ")"
                << (last != nullptr && *last != '\0' ? std::string(": ") + last : std::string())
                << (context.empty() ? "" : " ") << context;
}

}  // namespace braze::driver
