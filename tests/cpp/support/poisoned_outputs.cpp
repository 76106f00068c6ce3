#include "support/poisoned_outputs.h"

namespace braze::test {

std::vector<DeviceTensor> poisonedOutputs(const KernelExecutor& executor, const LaunchPlan& plan) {
  const GeneratedKernel& kernel = executor.generatedKernel();
  std::vector<DeviceTensor> outputs(executor.fusion().outputs().size());
  for (size_t i = 0; i < kernel.parameters.size(); ++i) {
    const KernelParameter& p = kernel.parameters[i];
    if (p.kind != KernelParameter::Kind::OutputTensor) continue;
    DeviceTensor& output = outputs[static_cast<size_t>(p.fusion_position)];
    output = DeviceTensor::empty(p.dtype, plan.parameters[i].sizes, plan.device);
    output.fillBytes(0xFF);
  }
  return outputs;
}

}  // namespace braze::test
