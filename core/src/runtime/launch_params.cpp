#include "braze/runtime/launch_params.h"

#include <sstream>
#include <string>

#include "braze/error.h"

namespace braze {

namespace {

constexpr const char* kAxes[] = {"x", "y", "z"};

int64_t evaluateExtent(const Val* extent, ExpressionEvaluator& scalars, std::string_view what,
                       std::string_view kernel_name, int64_t absent) {
  if (extent == nullptr) return absent;
  const std::string description = std::string(what) + " of kernel " + std::string(kernel_name);
  const int64_t value = toInt64(scalars.evaluateOrThrow(extent, description));
  BRAZE_USER_CHECK(value >= 0) << description << " evaluates to " << value << " (" << extent->name()
                               << "); launch extents cannot be negative";
  return value;
}

}  // namespace

bool LaunchParams::isEmpty() const {
  for (size_t i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0) return true;
  }
  return false;
}

std::string LaunchParams::toString() const {
  std::ostringstream os;
  os << "grid (" << grid[0] << ", " << grid[1] << ", " << grid[2] << ") block (" << block[0] << ", "
     << block[1] << ", " << block[2] << ") dynamic smem " << dynamic_shared_memory_bytes
     << " bytes";
  if (cluster != std::array<int64_t, 3>{1, 1, 1})
    os << " cluster (" << cluster[0] << ", " << cluster[1] << ", " << cluster[2] << ")";
  if (cooperative) os << " cooperative";
  return os.str();
}

LaunchParams evaluateLaunchParams(const LaunchExtents& extents, ExpressionEvaluator& scalars,
                                  std::string_view kernel_name) {
  LaunchParams params;
  for (size_t i = 0; i < 3; ++i) {
    params.grid[i] =
        evaluateExtent(extents.grid[i], scalars, std::string("grid.") + kAxes[i], kernel_name, 1);
    params.block[i] =
        evaluateExtent(extents.block[i], scalars, std::string("block.") + kAxes[i], kernel_name, 1);
  }
  params.dynamic_shared_memory_bytes = evaluateExtent(extents.dynamic_shared_memory_bytes, scalars,
                                                      "dynamic shared memory", kernel_name, 0);
  params.cluster = extents.cluster;
  params.cooperative = extents.cooperative;
  return params;
}

void checkLaunchLimits(const LaunchParams& params, const driver::DeviceProperties& device,
                       int64_t static_shared_memory_bytes, std::string_view kernel_name) {
  // The limits every GPU since compute capability 3.0 has.
  constexpr int64_t kMaxGrid[] = {2147483647, 65535, 65535};
  constexpr int64_t kMaxBlock[] = {1024, 1024, 64};
  for (size_t i = 0; i < 3; ++i) {
    BRAZE_USER_CHECK(params.grid[i] <= kMaxGrid[i])
        << "kernel " << kernel_name << ": grid." << kAxes[i] << " = " << params.grid[i]
        << " exceeds the limit " << kMaxGrid[i] << " (" << params.toString()
        << "); the schedule must map more of the work to other grid dims or to loops";
    BRAZE_USER_CHECK(params.block[i] <= kMaxBlock[i])
        << "kernel " << kernel_name << ": block." << kAxes[i] << " = " << params.block[i]
        << " exceeds the limit " << kMaxBlock[i] << " (" << params.toString() << ")";
  }
  BRAZE_USER_CHECK(params.threadsPerBlock() <= device.max_threads_per_block)
      << "kernel " << kernel_name << ": " << params.threadsPerBlock()
      << " threads per block exceed the limit of " << device.max_threads_per_block << " on "
      << device.name << " (" << params.toString() << ")";
  const int64_t shared = params.dynamic_shared_memory_bytes + static_shared_memory_bytes;
  BRAZE_USER_CHECK(shared <= device.max_shared_memory_per_block_optin)
      << "kernel " << kernel_name << ": " << params.dynamic_shared_memory_bytes
      << " bytes of dynamic and " << static_shared_memory_bytes
      << " bytes of static shared memory exceed the " << device.max_shared_memory_per_block_optin
      << " bytes a block may use on " << device.name
      << "; the schedule must keep less in shared memory";
  if (params.ctasPerCluster() == 1) return;
  BRAZE_USER_CHECK(device.arch.major >= 9)
      << "kernel " << kernel_name << ": thread block clusters (" << params.toString()
      << ") need sm_90 or later, but " << device.name << " is " << device.arch.toString()
      << "; launch with cluster (1, 1, 1)";
  // Beyond 8 a kernel must opt in (non-portable cluster size; KernelExecutor does) and the GPU
  // may refuse it: only the size the device ran at start-up (driver::largestCluster).
  const int64_t largest = driver::largestCluster(device);
  BRAZE_USER_CHECK(params.ctasPerCluster() <= driver::kMaxPortableCluster ||
                   params.ctasPerCluster() == largest)
      << "kernel " << kernel_name << ": " << params.ctasPerCluster() << " CTAs per cluster ("
      << params.toString() << "); " << device.name << " runs clusters of up to "
      << driver::kMaxPortableCluster << " CTAs"
      << (largest > driver::kMaxPortableCluster ? ", and of " + std::to_string(largest)
                                                : std::string())
      << "; use one of those";
  for (size_t i = 0; i < 3; ++i) {
    BRAZE_USER_CHECK(params.cluster[i] >= 1 && params.grid[i] % params.cluster[i] == 0)
        << "kernel " << kernel_name << ": grid." << kAxes[i] << " = " << params.grid[i]
        << " is not a multiple of cluster." << kAxes[i] << " = " << params.cluster[i] << " ("
        << params.toString() << "); round the grid up to whole clusters and let the extra CTAs "
        << "exit early";
  }
}

DriverLaunchConfig::DriverLaunchConfig(const LaunchParams& params, CUstream stream) {
  config.gridDimX = static_cast<unsigned>(params.grid[0]);
  config.gridDimY = static_cast<unsigned>(params.grid[1]);
  config.gridDimZ = static_cast<unsigned>(params.grid[2]);
  config.blockDimX = static_cast<unsigned>(params.block[0]);
  config.blockDimY = static_cast<unsigned>(params.block[1]);
  config.blockDimZ = static_cast<unsigned>(params.block[2]);
  config.sharedMemBytes = static_cast<unsigned>(params.dynamic_shared_memory_bytes);
  config.hStream = stream;
  unsigned count = 0;
  if (params.ctasPerCluster() > 1) {
    CUlaunchAttribute& cluster = attributes[count++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = static_cast<unsigned>(params.cluster[0]);
    cluster.value.clusterDim.y = static_cast<unsigned>(params.cluster[1]);
    cluster.value.clusterDim.z = static_cast<unsigned>(params.cluster[2]);
  }
  if (params.cooperative) {
    CUlaunchAttribute& cooperative = attributes[count++];
    cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    cooperative.value.cooperative = 1;
  }
  if (count > 0) {
    config.attrs = attributes.data();
    config.numAttrs = count;
  }
}

}  // namespace braze
