#include "braze/driver/device_properties.h"

#include <map>
#include <mutex>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"

namespace braze::driver {

std::string GpuArch::toString() const {
  return "sm_" + std::to_string(major) + std::to_string(minor) + (arch_specific ? "a" : "");
}

std::optional<GpuArch> GpuArch::parse(std::string_view text) {
  // Digits only: from_chars alone would accept "-9", "+9" or "9.0x".
  const auto number = [](std::string_view digits) -> std::optional<int> {
    if (digits.empty() || digits.size() > 4) return std::nullopt;
    int value = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return value;
  };
  if (text.starts_with("sm_")) text.remove_prefix(3);
  GpuArch arch;
  if (!text.empty() && text.back() == 'a') {
    arch.arch_specific = true;
    text.remove_suffix(1);
  }
  if (const size_t dot = text.find('.'); dot != std::string_view::npos) {
    const std::optional<int> major = number(text.substr(0, dot));
    const std::optional<int> minor = number(text.substr(dot + 1));
    if (!major || !minor || *major == 0 || *minor > 9) return std::nullopt;
    arch.major = *major;
    arch.minor = *minor;
    return arch;
  }
  // "90", "100", "120": the last digit is the minor version.
  const std::optional<int> both = number(text);
  if (!both || *both < 10) return std::nullopt;
  arch.major = *both / 10;
  arch.minor = *both % 10;
  return arch;
}

namespace {

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  BRAZE_CU(deviceGetAttribute, &value, which, device);
  return value;
}

DeviceProperties readProperties(int ordinal) {
  driverApi();  // without a driver, its own error says why
  const int count = deviceCount();
  BRAZE_USER_CHECK(ordinal >= 0 && ordinal < count)
      << "deviceProperties: CUDA device " << ordinal << " does not exist: the driver sees " << count
      << " device" << (count == 1 ? "" : "s") << "; check CUDA_VISIBLE_DEVICES";
  CUdevice device = 0;
  BRAZE_CU(deviceGet, &device, ordinal);
  DeviceProperties properties;
  properties.ordinal = ordinal;
  char name[256] = {};
  BRAZE_CU(deviceGetName, name, sizeof(name), device);
  properties.name = name;
  properties.arch.major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  properties.arch.minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  properties.sm_count = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  properties.max_threads_per_block = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  properties.max_threads_per_sm =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  properties.warp_size = attribute(device, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  properties.max_shared_memory_per_block =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  properties.max_shared_memory_per_block_optin =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  properties.shared_memory_per_sm =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  properties.registers_per_sm =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  properties.l2_cache_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t total_memory = 0;
  BRAZE_CU(deviceTotalMem, &total_memory, device);
  properties.global_memory_bytes = static_cast<int64_t>(total_memory);
  BRAZE_CU(driverGetVersion, &properties.driver_version);
  return properties;
}

}  // namespace

const DeviceProperties& deviceProperties(int ordinal) {
  static std::mutex mutex;
  static std::map<int, DeviceProperties> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(ordinal);
  if (it == cache.end()) it = cache.emplace(ordinal, readProperties(ordinal)).first;
  return it->second;
}

DeviceProperties h100Properties() {
  DeviceProperties properties;
  properties.name = "NVIDIA H100 80GB HBM3 (assumed)";
  properties.arch = {9, 0, false};
  properties.sm_count = 132;
  properties.max_threads_per_block = 1024;
  properties.max_threads_per_sm = 2048;
  properties.max_shared_memory_per_block = 48 * 1024;
  properties.max_shared_memory_per_block_optin = 227 * 1024;
  properties.shared_memory_per_sm = 228 * 1024;
  properties.registers_per_sm = 65536;
  properties.l2_cache_bytes = 50 * 1024 * 1024;
  properties.global_memory_bytes = 80LL * 1024 * 1024 * 1024;
  return properties;
}

DeviceProperties b200Properties() {
  // The same per-SM and per-block limits as Hopper; more SMs and L2.
  DeviceProperties properties = h100Properties();
  properties.name = "NVIDIA B200 (assumed)";
  properties.arch = {10, 0, false};
  properties.sm_count = 148;
  properties.l2_cache_bytes = 126LL * 1024 * 1024;
  properties.global_memory_bytes = 180LL * 1024 * 1024 * 1024;
  return properties;
}

std::optional<DeviceProperties> propertiesForArch(const GpuArch& arch) {
  if (arch.major == 9 && arch.minor == 0) return h100Properties();
  if (arch.major == 10 && arch.minor == 0) return b200Properties();
  return std::nullopt;
}

}  // namespace braze::driver
