#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

#include "braze/codegen/generated_kernel.h"
#include "braze/driver/device_properties.h"
#include "braze/eval/expression_evaluator.h"

namespace braze {

/// The geometry of one launch, evaluated from a GeneratedKernel's LaunchExtents.
struct LaunchParams {
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t dynamic_shared_memory_bytes = 0;
  /// CTAs per thread block cluster along each dim (sm_90 and later): the CTAs of a cluster
  /// run at once on one GPU processing cluster and can reach each other's shared memory. Each
  /// grid dim must be a multiple of it. (1, 1, 1), the default, launches without clusters.
  std::array<int64_t, 3> cluster = {1, 1, 1};
  /// Every block resident at once (a cooperative launch): the driver refuses a grid larger
  /// than the device holds at once, which a kernel with grid barriers needs.
  bool cooperative = false;

  bool operator==(const LaunchParams&) const = default;
  int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
  /// True when some grid or block dim is 0: there is nothing to launch (zero-size tensors).
  bool isEmpty() const;
  int64_t ctasPerCluster() const { return cluster[0] * cluster[1] * cluster[2]; }
  /// "grid (4, 1, 1) block (128, 1, 1) dynamic smem 0 bytes", then " cluster (2, 1, 1)" when
  /// clustered and " cooperative" when cooperative.
  std::string toString() const;
};

/// The driver's launch configuration for `params` on `stream`, with a cluster-dimension
/// attribute when params.cluster is not (1, 1, 1) and the cooperative attribute when
/// params.cooperative. `config` points at `attributes`, so the
/// object is neither copied nor moved: build it where the launch happens and pass &config.
struct DriverLaunchConfig {
  DriverLaunchConfig(const LaunchParams& params, CUstream stream);
  DriverLaunchConfig(const DriverLaunchConfig&) = delete;
  DriverLaunchConfig& operator=(const DriverLaunchConfig&) = delete;

  CUlaunchConfig config{};
  std::array<CUlaunchAttribute, 2> attributes{};
};

/// Evaluates `extents` with the scalars bound in `scalars` (null entries are 1). An extent
/// that depends on something unbound, or is negative, is an Error naming it and
/// `kernel_name`.
LaunchParams evaluateLaunchParams(const LaunchExtents& extents, ExpressionEvaluator& scalars,
                                  std::string_view kernel_name);

/// Checks `params` against the hardware's limits on `device` (grid dims, block dims, threads
/// per block, dynamic shared memory with opt-in, given the kernel's static shared memory, and
/// for a clustered launch: sm_90 or later, grid dims multiples of the cluster dims, at most 8
/// CTAs per cluster, the portable limit, or driver::largestCluster where the device ran larger
/// ones; KernelExecutor opts such a kernel in).
/// Each Error names the kernel, the value and the limit.
void checkLaunchLimits(const LaunchParams& params, const driver::DeviceProperties& device,
                       int64_t static_shared_memory_bytes, std::string_view kernel_name);

}  // namespace braze
