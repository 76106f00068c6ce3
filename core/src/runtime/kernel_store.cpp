#include "braze/runtime/kernel_store.h"

#include <mutex>

#include "braze/plugin/sha256.h"

namespace braze {

namespace {

void appendField(std::string& bytes, std::string_view field) {
  const uint64_t size = field.size();
  bytes.append(reinterpret_cast<const char*>(&size), sizeof(size));
  bytes.append(field);
}

struct DefaultStore {
  std::mutex mutex;
  bool decided = false;  // made by the factory, or set explicitly
  std::shared_ptr<KernelStore> store;
  std::function<std::shared_ptr<KernelStore>()> factory;
};

DefaultStore& defaultStore() {
  static DefaultStore instance;
  return instance;
}

}  // namespace

std::string kernelKey(std::string_view source, std::string_view kernel_name,
                      const std::vector<std::string>& nvrtc_options,
                      std::pair<int, int> nvrtc_version) {
  std::string bytes = "braze-kernel-key-1";
  appendField(bytes, source);
  appendField(bytes, kernel_name);
  appendField(bytes, std::to_string(nvrtc_options.size()));
  for (const std::string& option : nvrtc_options) appendField(bytes, option);
  appendField(bytes,
              std::to_string(nvrtc_version.first) + "." + std::to_string(nvrtc_version.second));
  return sha256Hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

std::shared_ptr<KernelStore> defaultKernelStore() {
  DefaultStore& state = defaultStore();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.decided && state.factory) {
    state.store = state.factory();
    state.decided = true;
  }
  return state.store;
}

void setDefaultKernelStore(std::shared_ptr<KernelStore> store) {
  DefaultStore& state = defaultStore();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.store = std::move(store);
  state.decided = true;
}

void registerDefaultKernelStoreFactory(std::function<std::shared_ptr<KernelStore>()> factory) {
  DefaultStore& state = defaultStore();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.factory = std::move(factory);
}

}  // namespace braze
