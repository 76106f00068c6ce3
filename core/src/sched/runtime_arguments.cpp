#include "braze/sched/runtime_arguments.h"

#include "braze/ir/tensor_view.h"

namespace braze {

std::optional<std::string> argumentProblem(const Fusion& fusion,
                                           const std::vector<ArgumentInfo>& arguments) {
  if (arguments.size() != fusion.inputs().size()) {
    return "expected arguments for " + std::to_string(fusion.inputs().size()) + " inputs, found " +
           std::to_string(arguments.size());
  }
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const auto* tv = fusion.inputs()[i]->dynCast<TensorView>();
    const auto* tensor = std::get_if<TensorArgumentInfo>(&arguments[i]);
    if (tv == nullptr) {
      if (tensor != nullptr)
        return "input " + std::to_string(i) + " (" + fusion.inputs()[i]->name() +
               ") is a scalar but its argument is a tensor";
      continue;
    }
    if (tensor == nullptr)
      return "input " + std::to_string(i) + " (" + tv->name() +
             ") is a tensor but its argument is a scalar";
    if (static_cast<int64_t>(tensor->sizes.size()) != tv->rank() ||
        tensor->strides.size() != tensor->sizes.size()) {
      return "input " + std::to_string(i) + " (" + tv->name() + ") has rank " +
             std::to_string(tv->rank()) + " but its argument has " +
             std::to_string(tensor->sizes.size()) + " sizes and " +
             std::to_string(tensor->strides.size()) + " strides";
    }
  }
  return std::nullopt;
}

std::vector<std::optional<int64_t>> evaluateExtents(const Fusion& fusion,
                                                    const std::vector<ArgumentInfo>& arguments,
                                                    const std::vector<IterDomain*>& dims,
                                                    std::string_view caller,
                                                    ExpressionEvaluator& evaluator) {
  validateAndBindArguments(fusion, arguments, caller, evaluator);
  std::vector<std::optional<int64_t>> extents;
  for (const IterDomain* id : dims) {
    const std::optional<ScalarValue> value = evaluator.evaluate(id->logicalExtent());
    extents.push_back(value ? std::optional<int64_t>(toInt64(*value)) : std::nullopt);
  }
  return extents;
}

const TensorArgumentInfo* tensorArgumentOf(const Fusion& fusion,
                                           const std::vector<ArgumentInfo>& arguments,
                                           const Val* input) {
  const int64_t at = fusion.inputIndex(input);
  return at >= 0 && static_cast<size_t>(at) < arguments.size()
             ? std::get_if<TensorArgumentInfo>(&arguments[static_cast<size_t>(at)])
             : nullptr;
}

}  // namespace braze
