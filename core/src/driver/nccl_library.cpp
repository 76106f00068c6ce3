#include "braze/driver/nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
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
    // Optional: only sharded fusions on 2-D meshes split the communicator, and only borrowed
    // communicators are queried or revoked.
    std::string absent;
    (void)resolve(library, "ncclCommSplit", api.commSplit, absent);
    (void)resolve(library, "ncclCommCount", api.commCount, absent);
    (void)resolve(library, "ncclCommUserRank", api.commUserRank, absent);
    (void)resolve(library, "ncclCommCuDevice", api.commCuDevice, absent);
    (void)resolve(library, "ncclCommRevoke", api.commRevoke, absent);
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

// `path` with symbolic links resolved, or as given when it names no file.
std::string resolvedPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  return resolved != nullptr ? std::string(resolved.get()) : path;
}

// The file that holds `symbol`, or empty.
std::string fileOf(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  return resolvedPath(info.dli_fname);
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
        api.file = fileOf(reinterpret_cast<const void*>(api.getVersion));
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

std::vector<std::string> mappedLibraries() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        // The program itself has an empty name.
        if (info->dlpi_name != nullptr && *info->dlpi_name != '\0')
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &names);
  for (std::string& name : names) name = resolvedPath(name);
  return names;
}

std::string ncclCopiesProblem(const std::vector<std::string>& mapped, const std::string& resolved) {
  std::vector<std::string> copies;
  for (const std::string& path : mapped) {
    const size_t slash = path.rfind('/');
    const std::string_view name =
        std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
    if (name.starts_with("libnccl.so") &&
        std::find(copies.begin(), copies.end(), path) == copies.end())
      copies.push_back(path);
  }
  const bool found = std::find(copies.begin(), copies.end(), resolved) != copies.end();
  if (found && copies.size() == 1) return {};
  std::string listed;
  for (const std::string& copy : copies) listed += (listed.empty() ? "" : ", ") + copy;
  const std::string braze = resolved.empty() ? std::string("(file unknown)") : resolved;
  const std::string what = found ? "this process maps " + std::to_string(copies.size()) +
                                       " NCCL libraries (" + listed + ") and Braze calls " + braze
                                 : "Braze calls the NCCL in " + braze +
                                       ", which is not among the NCCL libraries "
                                       "mapped into this process (" +
                                       (listed.empty() ? "none" : listed) + ")";
  return what +
         ": a communicator made by another copy would be read as this one's own, and crash. Let "
         "Braze use the copy that made the communicator (PyTorch's: the libnccl.so.2 it loaded): "
         "unset BRAZE_NCCL_LIBRARY, or set it to that file";
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
