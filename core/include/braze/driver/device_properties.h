#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace braze::driver {

/// A GPU architecture as NVRTC names it: sm_90, sm_90a, sm_100a ...
struct GpuArch {
  int major = 9;
  int minor = 0;
  /// The "a" targets (sm_90a, sm_100a) unlock wgmma, setmaxnreg and TMA multicast, but the
  /// code then runs only on that exact architecture.
  bool arch_specific = false;

  bool operator==(const GpuArch&) const = default;
  /// "sm_90a".
  std::string toString() const;
  /// Parses "sm_90", "sm_90a", "90", "9.0"; nullopt when malformed.
  static std::optional<GpuArch> parse(std::string_view text);
};

/// What schedulers and the executor need to know of a device; read once per device.
struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  GpuArch arch;
  int sm_count = 0;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int warp_size = 32;
  int64_t max_shared_memory_per_block = 48 * 1024;        ///< without opting in
  int64_t max_shared_memory_per_block_optin = 48 * 1024;  ///< with cuFuncSetAttribute
  int64_t shared_memory_per_sm = 0;
  int registers_per_sm = 65536;
  int64_t l2_cache_bytes = 0;
  int64_t global_memory_bytes = 0;
  int driver_version = 0;  ///< e.g. 13000
  /// SMs that thread block clusters of 1, 2, 4, 8 and 16 CTAs (one per SM) cover when as many
  /// as fit are resident: a cluster's CTAs share a GPU processing cluster, whose SM counts
  /// differ from one chip to the next (an H200: 132, 132, 120, 120, 112). 0 where not known
  /// (no sm_90 device, or no driver): see residentClusters.
  std::array<int, 5> cluster_sms = {0, 0, 0, 0, 0};
};

/// CTAs per cluster that every sm_90 device runs; beyond it a kernel must opt in
/// (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) and the device may refuse.
inline constexpr int64_t kMaxPortableCluster = 8;

/// The largest cluster `device` runs: 16 (non-portable) where it ran clusters of 16 when its
/// properties were read (cluster_sms), else kMaxPortableCluster.
int64_t largestCluster(const DeviceProperties& device);

/// Clusters of `cluster` CTAs (1, 2, 4, 8 or 16) resident at once with `ctas_per_sm` CTAs per
/// SM: from cluster_sms where the device reported it (a lower bound: CTAs of one cluster may also
/// share an SM), else assuming GPCs of 16 SMs of every 18.
int64_t residentClusters(const DeviceProperties& device, int64_t cluster, int64_t ctas_per_sm);

/// Properties of device `ordinal`, cached after the first call. Needs the driver; throws the
/// driver's "no CUDA driver or device" error without one.
const DeviceProperties& deviceProperties(int ordinal = 0);

/// Properties an H100 SXM reports, for heuristics and tests on machines without a GPU.
DeviceProperties h100Properties();

/// Properties a B200 reports (sm_100), for heuristics on machines without a GPU.
DeviceProperties b200Properties();

/// The properties of the GPU a build for `arch` targets, for a machine without one: sm_90 ->
/// h100Properties(), sm_100 -> b200Properties() (the "a" variants alike); nullopt for any other
/// architecture. A run without a GPU that names its architecture (RunOptions::arch) schedules
/// for these properties.
std::optional<DeviceProperties> propertiesForArch(const GpuArch& arch);

}  // namespace braze::driver
