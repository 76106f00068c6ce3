#include "braze/runtime/argument_signature.h"

namespace braze {

ArgumentSignature::ArgumentSignature(
    const std::vector<std::variant<DeviceTensor, ScalarValue>>& arguments) {
  for (const auto& input : arguments) {
    if (const auto* tensor = std::get_if<DeviceTensor>(&input)) {
      words_.push_back(static_cast<int64_t>(tensor->dtype()));
      words_.push_back(tensor->device());
      words_.push_back(tensor->defined() ? 1 : 0);
      words_.push_back(static_cast<int64_t>(tensor->sizes().size()));
      words_.insert(words_.end(), tensor->sizes().begin(), tensor->sizes().end());
      words_.insert(words_.end(), tensor->strides().begin(), tensor->strides().end());
    } else {
      words_.push_back(-1);  // a scalar: its value in scalars_, in order
      scalars_.push_back(std::get<ScalarValue>(input));
    }
  }
}

}  // namespace braze
