#pragma once

// One run of a scheduled fusion on the GPU as the GPU tiers do it: compiled for this device,
// host arguments copied over, outputs poisoned first, the device synchronized after.

#include <memory>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/kernel_executor.h"

namespace braze::test {

/// `scheduled` lowered, generated and compiled for the current device. Requires a GPU.
std::unique_ptr<KernelExecutor> compileForGpu(const Fusion& scheduled);

/// Device copies of host arguments (tensors copied with their layout, scalars as they are).
std::vector<ExecutorArgument> deviceArguments(const std::vector<EvaluatorArgument>& host);

struct GpuRun {
  LaunchPlan plan;
  std::vector<HostTensor> outputs;  ///< copied back, in the fusion's output order
};

/// Runs `executor` on `inputs` into poisonedOutputs and waits for it.
GpuRun runWithPoisonedOutputs(KernelExecutor& executor,
                              const std::vector<ExecutorArgument>& inputs);

}  // namespace braze::test
