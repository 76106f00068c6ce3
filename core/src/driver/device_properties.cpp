#include "braze/driver/device_properties.h"

#include <algorithm>
#include <bit>
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

// An empty kernel, JIT-compiled by the driver for the device: what the occupancy calculator
// needs to count resident clusters.
constexpr const char* kClusterProbePtx = R"PTX(
.version 8.0
.target sm_90
.address_size 64
.visible .entry braze_cluster_probe()
{
  ret;
}
)PTX";

// DeviceProperties::cluster_sms: clusters of each size with one CTA per SM (all of the opt-in
// shared memory each), as the driver's occupancy calculator counts them. Left 0 where the
// device has no clusters or the probe fails: heuristics then estimate.
void probeClusterSms(int ordinal, DeviceProperties& properties) {
  if (properties.arch.major < 9) return;
  const DriverApi& api = driverApi();
  // The caller's current context stays current afterwards.
  CUcontext previous = nullptr;
  api.ctxGetCurrent(&previous);
  makePrimaryContextCurrent(ordinal);
  struct Restore {
    const DriverApi& api;
    CUcontext context;
    ~Restore() {
      if (context != nullptr) api.ctxSetCurrent(context);
    }
  } restore{api, previous};
  CUmodule module = nullptr;
  if (api.moduleLoadData(&module, kClusterProbePtx) != CUDA_SUCCESS) return;
  CUfunction probe = nullptr;
  const int shared = static_cast<int>(properties.max_shared_memory_per_block_optin);
  if (api.moduleGetFunction(&probe, module, "braze_cluster_probe") == CUDA_SUCCESS &&
      api.funcSetAttribute(probe, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared) ==
          CUDA_SUCCESS) {
    api.funcSetAttribute(probe, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    for (size_t i = 0; i < properties.cluster_sms.size(); ++i) {
      const unsigned cluster = 1u << i;
      CUlaunchAttribute attribute{};
      attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attribute.value.clusterDim.x = cluster;
      attribute.value.clusterDim.y = 1;
      attribute.value.clusterDim.z = 1;
      CUlaunchConfig config{};
      config.gridDimX = cluster;
      config.gridDimY = config.gridDimZ = 1;
      config.blockDimX = 32;
      config.blockDimY = config.blockDimZ = 1;
      config.sharedMemBytes = static_cast<unsigned>(shared);
      config.attrs = &attribute;
      config.numAttrs = 1;
      int clusters = 0;
      if (api.occupancyMaxActiveClusters(&clusters, probe, &config) == CUDA_SUCCESS)
        properties.cluster_sms[i] = clusters * static_cast<int>(cluster);
    }
  }
  api.moduleUnload(module);
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
  probeClusterSms(ordinal, properties);
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
  // What the driver reports on an H200 (same chip); other H100 boards may differ by a GPC's SMs.
  properties.cluster_sms = {132, 132, 120, 120, 112};
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
  properties.cluster_sms = {0, 0, 0, 0, 0};  // not measured: estimated
  return properties;
}

int64_t largestCluster(const DeviceProperties& device) {
  return device.cluster_sms.back() > 0 ? int64_t{1} << (device.cluster_sms.size() - 1)
                                       : kMaxPortableCluster;
}

int64_t residentClusters(const DeviceProperties& device, int64_t cluster, int64_t ctas_per_sm) {
  BRAZE_USER_CHECK(cluster >= 1 && cluster <= 16 && (cluster & (cluster - 1)) == 0 &&
                   ctas_per_sm >= 1)
      << "residentClusters: clusters of " << cluster << " CTAs at " << ctas_per_sm
      << " per SM; a power of two up to 16, and at least one CTA per SM";
  const size_t index = static_cast<size_t>(std::countr_zero(static_cast<uint64_t>(cluster)));
  int64_t sms = std::min<int64_t>(device.cluster_sms[index], device.sm_count);
  // Unknown: GPCs of 16 to 18 SMs, so clusters of up to 16 surely fit 16 of every 18.
  if (sms == 0) sms = cluster <= 2 ? device.sm_count : device.sm_count / 18 * 16;
  return sms * ctas_per_sm / cluster;
}

std::optional<DeviceProperties> propertiesForArch(const GpuArch& arch) {
  if (arch.major == 9 && arch.minor == 0) return h100Properties();
  if (arch.major == 10 && arch.minor == 0) return b200Properties();
  return std::nullopt;
}

}  // namespace braze::driver
