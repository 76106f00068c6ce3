#include "reduction_extents.h"

#include "braze/eval/argument_binding.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"

namespace braze::reduction {

std::vector<std::optional<int64_t>> referenceExtents(const Fusion& fusion,
                                                     const ReductionLayout& layout,
                                                     const ReductionRuntimeInfo& info) {
  std::vector<ArgumentInfo> arguments;
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const ReductionInput& actual = info.inputs[i];
    if (const auto* tv = fusion.inputs()[i]->dynCast<TensorView>()) {
      TensorArgumentInfo tensor;
      tensor.dtype = tv->dtype();
      tensor.sizes = actual.sizes;
      tensor.strides = actual.strides;
      arguments.emplace_back(std::move(tensor));
    } else {
      arguments.emplace_back(actual.scalar.value_or(ScalarValue(int64_t{0})));
    }
  }
  ExpressionEvaluator evaluator;
  validateAndBindArguments(fusion, arguments, "reduction scheduler", evaluator);
  std::vector<std::optional<int64_t>> extents;
  for (const IterDomain* id : layout.reference->logical()) {
    if (id->isBroadcast()) {
      extents.emplace_back(1);
      continue;
    }
    const std::optional<ScalarValue> value = evaluator.evaluate(id->extent());
    extents.push_back(value ? std::optional<int64_t>(toInt64(*value)) : std::nullopt);
  }
  return extents;
}

}  // namespace braze::reduction
