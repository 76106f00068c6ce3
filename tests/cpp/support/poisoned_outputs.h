#pragma once

// Outputs for GPU tests that must catch elements a kernel never writes.

#include <vector>

#include "braze/runtime/kernel_executor.h"

namespace braze::test {

/// One contiguous device tensor per fusion output, of the sizes `plan` gives it, every byte
/// 0xFF (a NaN for floating point types), so that an element the kernel never writes shows
/// when compared with the reference. Requires a GPU.
std::vector<DeviceTensor> poisonedOutputs(const KernelExecutor& executor, const LaunchPlan& plan);

}  // namespace braze::test
