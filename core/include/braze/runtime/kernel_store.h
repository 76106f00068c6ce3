#pragma once

// Compiled kernels kept between processes. A kernel is stored under its content address: the
// CUDA source, the kernel name, the exact NVRTC options (the target architecture among them)
// and NVRTC's version. Equal addresses mean NVRTC would make the same cubin, whichever fusion,
// scheduler or Braze build generated the source, so an entry never goes stale; a different
// source, option or NVRTC is a different address.
//
// The core defines the contract; libbraze_serde implements it on disk (braze/serde/
// kernel_cache.h) and registers that cache as the process's default when it is linked.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "braze/runtime/compiled_kernel.h"

namespace braze {

/// The content address of a kernel: SHA-256, as 64 hex digits, of the source, the kernel name,
/// each NVRTC option and NVRTC's version, each length-prefixed so that no two inputs collide.
std::string kernelKey(std::string_view source, std::string_view kernel_name,
                      const std::vector<std::string>& nvrtc_options,
                      std::pair<int, int> nvrtc_version);

/// Where CompiledKernel::compile looks before calling NVRTC (CompileOptions::store).
/// Implementations are safe to call from several threads at once.
class KernelStore {
 public:
  virtual ~KernelStore() = default;
  /// The kernel stored under `key`, or nullopt: absent, or an entry that fails the store's
  /// checks (then logged with its reason, and replaced by the next insert). Never throws for
  /// a bad entry.
  virtual std::optional<CompiledKernel> find(const std::string& key) = 0;
  /// Keeps `kernel` under `key`. Best effort: a store that cannot write logs why and returns;
  /// a compile never fails because its result could not be kept.
  virtual void insert(const std::string& key, const CompiledKernel& kernel) = 0;
};

/// The store FusionExecutorCache compiles through: the one given to setDefaultKernelStore,
/// else the one the registered factory makes on first use (libbraze_serde registers the
/// on-disk cache of BRAZE_CACHE_DIR), else null (every kernel compiled by NVRTC).
std::shared_ptr<KernelStore> defaultKernelStore();
/// Replaces the default store for the rest of the process (null: no store, the factory is not
/// asked again).
void setDefaultKernelStore(std::shared_ptr<KernelStore> store);
/// Registers how the default store is made on first use; a store already made is kept.
void registerDefaultKernelStoreFactory(std::function<std::shared_ptr<KernelStore>()> factory);

}  // namespace braze
