// FusionKernelRuntime::runOnHost: the host program run on the CPU, each launch by the
// reference evaluator, stream loops slice by slice.

#include "braze/eval/argument_binding.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "runtime/host_program_run.h"

namespace braze {

std::vector<HostTensor> FusionKernelRuntime::runOnHost(const std::vector<FusionArgument>& arguments,
                                                       const RunContext& context) const {
  auto launch = [&](const host::LaunchKernel& l, std::vector<EvaluatorArgument> inputs) {
    // The kernel a GPU would launch must take these sizes: refused here as it would be there.
    if (const KernelExecutor* executor = kernels_[static_cast<size_t>(l.segment)].executor.get()) {
      std::vector<ArgumentInfo> infos;
      for (const EvaluatorArgument& input : inputs) {
        if (const auto* tensor = std::get_if<HostTensor>(&input)) {
          infos.emplace_back(argumentInfoOf(*tensor));
        } else {
          infos.emplace_back(std::get<ScalarValue>(input));
        }
      }
      ExpressionEvaluator scalars;
      executor->checkArguments(infos, scalars);
    }
    std::vector<HostTensor> outputs;
    for (EvaluatorArgument& result :
         evaluateFusion(*segmented_.segments[static_cast<size_t>(l.segment)].fusion, inputs))
      outputs.push_back(std::get<HostTensor>(std::move(result)));
    return outputs;
  };
  return runtime_detail::HostProgramRun(program_, arguments, *context.extents, launch).run();
}

}  // namespace braze
