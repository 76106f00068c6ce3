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

  bool operator==(const LaunchParams&) const = default;
  int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
  /// True when some grid or block dim is 0: there is nothing to launch (zero-size tensors).
  bool isEmpty() const;
  /// "grid (4, 1, 1) block (128, 1, 1) dynamic smem 0 bytes".
  std::string toString() const;
};

/// The driver's launch configuration for `params` on `stream` (no attributes).
CUlaunchConfig launchConfigOf(const LaunchParams& params, CUstream stream);

/// Evaluates `extents` with the scalars bound in `scalars` (null entries are 1). An extent
/// that depends on something unbound, or is negative, is an Error naming it and
/// `kernel_name`.
LaunchParams evaluateLaunchParams(const LaunchExtents& extents, ExpressionEvaluator& scalars,
                                  std::string_view kernel_name);

/// Checks `params` against the hardware's limits on `device` (grid dims, block dims, threads
/// per block, dynamic shared memory with opt-in, given the kernel's static shared memory).
/// Each Error names the kernel, the value and the limit.
void checkLaunchLimits(const LaunchParams& params, const driver::DeviceProperties& device,
                       int64_t static_shared_memory_bytes, std::string_view kernel_name);

}  // namespace braze
