#include "reduction_extents.h"

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/runtime_arguments.h"

namespace braze::reduction {

std::vector<std::optional<int64_t>> referenceExtents(const Fusion& fusion,
                                                     const ReductionLayout& layout,
                                                     const SchedulerRuntimeInfo& info) {
  ExpressionEvaluator evaluator;
  std::vector<std::optional<int64_t>> extents = evaluateExtents(
      fusion, info.arguments, layout.reference->logical(), "reduction scheduler", evaluator);
  // A broadcast dim walks one element whatever it is expanded to.
  for (size_t d = 0; d < extents.size(); ++d) {
    if (layout.reference->logical()[d]->isBroadcast()) extents[d] = 1;
  }
  return extents;
}

}  // namespace braze::reduction
