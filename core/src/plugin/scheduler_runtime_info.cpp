#include "braze/plugin/scheduler_runtime_info.h"

#include <algorithm>
#include <sstream>

#include "braze/error.h"
#include "braze/eval/strided_layout.h"
#include "braze/ir/tensor_view.h"

namespace braze {

namespace {

constexpr int64_t kMaxVectorBytes = 16;

std::string formatList(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i > 0 ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

int64_t countInputs(const Fusion& fusion, bool tensors) {
  return std::count_if(fusion.inputs().begin(), fusion.inputs().end(),
                       [&](const Val* input) { return input->isA<TensorView>() == tensors; });
}

}  // namespace

int64_t vectorAlignment(const SchedulerRuntimeInfo& info, size_t input) {
  const int64_t alignment = input < info.data_alignments.size() ? info.data_alignments[input] : 0;
  return std::clamp<int64_t>(alignment, 1, kMaxVectorBytes);
}

SchedulerRuntimeInfo contiguousRuntimeInfo(const Fusion& fusion,
                                           const std::vector<std::vector<int64_t>>& tensor_sizes,
                                           const std::vector<ScalarValue>& scalars,
                                           const driver::DeviceProperties& device) {
  const int64_t tensor_inputs = countInputs(fusion, /*tensors=*/true);
  const int64_t scalar_inputs = countInputs(fusion, /*tensors=*/false);
  BRAZE_USER_CHECK(static_cast<int64_t>(tensor_sizes.size()) == tensor_inputs)
      << "contiguousRuntimeInfo: the fusion has " << tensor_inputs << " tensor inputs but "
      << tensor_sizes.size() << " sizes were given; give one list of sizes per tensor input, "
      << "in input order";
  BRAZE_USER_CHECK(static_cast<int64_t>(scalars.size()) == scalar_inputs)
      << "contiguousRuntimeInfo: the fusion has " << scalar_inputs << " scalar inputs but "
      << scalars.size() << " values were given; give one value per scalar input, in input order";
  SchedulerRuntimeInfo info;
  info.device = device;
  size_t tensor = 0;
  size_t scalar = 0;
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr) {
      info.arguments.emplace_back(scalars[scalar++]);
      info.data_alignments.push_back(0);
      continue;
    }
    TensorArgumentInfo argument;
    argument.dtype = tv->dtype();
    argument.sizes = tensor_sizes[tensor++];
    // Dense in the input's declared allocation order (row-major unless declared otherwise); a
    // dim of size 0 keeps the strides of its neighbours as if it had size 1.
    argument.strides = argument.sizes.size() == tv->allocationOrder().size()
                           ? denseStrides(argument.sizes, tv->allocationOrder())
                           : denseStrides(argument.sizes, {});
    std::ostringstream description;
    description << argument.dtype << formatList(argument.sizes) << " strides "
                << formatList(argument.strides);
    argument.description = description.str();
    info.arguments.emplace_back(std::move(argument));
    info.data_alignments.push_back(kMaxVectorBytes);
  }
  return info;
}

}  // namespace braze
