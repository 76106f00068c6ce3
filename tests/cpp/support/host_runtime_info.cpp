#include "support/host_runtime_info.h"

namespace braze::test {

SchedulerRuntimeInfo hostRuntimeInfo(const std::vector<EvaluatorArgument>& arguments,
                                     int64_t data_alignment,
                                     const driver::DeviceProperties& device) {
  SchedulerRuntimeInfo info;
  info.device = device;
  for (const EvaluatorArgument& argument : arguments) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      info.arguments.emplace_back(argumentInfoOf(*tensor));
      info.data_alignments.push_back(data_alignment);
    } else {
      info.arguments.emplace_back(std::get<ScalarValue>(argument));
      info.data_alignments.push_back(0);
    }
  }
  return info;
}

}  // namespace braze::test
