#include "braze/runtime/kernel_store.h"

#include "braze/runtime/content_hash.h"
#include "runtime/default_store.h"

namespace braze {

namespace {

runtime_detail::DefaultStoreSlot<KernelStore>& defaultStore() {
  static runtime_detail::DefaultStoreSlot<KernelStore> slot;
  return slot;
}

}  // namespace

std::string kernelKey(std::string_view source, std::string_view kernel_name,
                      const std::vector<std::string>& nvrtc_options,
                      std::pair<int, int> nvrtc_version) {
  ContentHasher hasher("braze-kernel-key-1");
  hasher.add(source).add(kernel_name).add(static_cast<int64_t>(nvrtc_options.size()));
  for (const std::string& option : nvrtc_options) hasher.add(option);
  hasher.add(std::to_string(nvrtc_version.first) + "." + std::to_string(nvrtc_version.second));
  return hasher.hex();
}

std::shared_ptr<KernelStore> defaultKernelStore() {
  return defaultStore().get();
}

void setDefaultKernelStore(std::shared_ptr<KernelStore> store) {
  defaultStore().set(std::move(store));
}

void registerDefaultKernelStoreFactory(std::function<std::shared_ptr<KernelStore>()> factory) {
  defaultStore().setFactory(std::move(factory));
}

}  // namespace braze
