#include "braze/sched/outputs_problem.h"

#include "braze/ir/tensor_view.h"

namespace braze {

std::optional<std::string> outputsProblem(const Fusion& fusion) {
  if (fusion.outputs().empty()) return "the fusion has no outputs";
  for (const Val* output : fusion.outputs()) {
    if (!output->isA<TensorView>())
      return "output " + output->name() + " is a scalar, not a tensor";
    if (fusion.isInput(output))
      return "output " + output->name() + " is also an input: there is nothing to compute";
  }
  return std::nullopt;
}

std::optional<std::string> outputRankProblem(const Fusion& fusion, const TensorView* reference) {
  for (const Val* output : fusion.outputs()) {
    const auto* tv = output->as<TensorView>();
    if (tv->rank() != reference->rank()) {
      return "outputs " + reference->name() + " and " + tv->name() +
             " have different ranks; one loop cannot cover both";
    }
  }
  return std::nullopt;
}

}  // namespace braze
