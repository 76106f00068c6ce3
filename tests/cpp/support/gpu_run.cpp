#include "support/gpu_run.h"

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "support/poisoned_outputs.h"

namespace braze::test {

std::unique_ptr<KernelExecutor> compileForGpu(const Fusion& scheduled) {
  GeneratedKernel generated = generateCuda(scheduled);
  CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name);
  return std::make_unique<KernelExecutor>(scheduled, std::move(generated), std::move(compiled));
}

std::vector<ExecutorArgument> deviceArguments(const std::vector<EvaluatorArgument>& host) {
  std::vector<ExecutorArgument> inputs;
  for (const EvaluatorArgument& argument : host) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      inputs.emplace_back(DeviceTensor::fromHost(*tensor));
    } else {
      inputs.emplace_back(std::get<ScalarValue>(argument));
    }
  }
  return inputs;
}

GpuRun runWithPoisonedOutputs(KernelExecutor& executor,
                              const std::vector<ExecutorArgument>& inputs) {
  GpuRun run{executor.plan(inputs), {}};
  const std::vector<DeviceTensor> outputs =
      executor.run(inputs, nullptr, poisonedOutputs(executor, run.plan));
  BRAZE_CU(ctxSynchronize);
  for (const DeviceTensor& output : outputs) run.outputs.push_back(output.toHost());
  return run;
}

}  // namespace braze::test
