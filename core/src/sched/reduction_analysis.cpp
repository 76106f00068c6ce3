#include "braze/sched/reduction_analysis.h"

#include <algorithm>

#include "braze/sched/logical_map.h"

namespace braze {

namespace {

bool isReductionOp(OpKind op) {
  const OpFamily family = familyOf(op);
  return family == OpFamily::Reduction || family == OpFamily::Welford ||
         family == OpFamily::Contraction;
}

// The input's innermost non-broadcast dim in memory, or nullptr.
IterDomain* innermostInMemory(const TensorView* tv) {
  const std::vector<IterDomain*> visible = tv->logicalNoReductions();
  for (auto it = tv->allocationOrder().rbegin(); it != tv->allocationOrder().rend(); ++it) {
    IterDomain* id = visible[static_cast<size_t>(*it)];
    if (!id->isBroadcast()) return id;
  }
  return nullptr;
}

}  // namespace

std::vector<ReductionInfo> reductionAxes(const Fusion& fusion) {
  std::vector<ReductionInfo> reductions;
  for (const Expr* expr : fusion.exprs()) {
    if (!isReductionOp(expr->op())) continue;
    auto* tv = expr->output(0)->as<TensorView>();
    ReductionInfo info{tv, {}, false};
    for (size_t i = 0; i < tv->logical().size(); ++i) {
      if (tv->logical()[i]->isReduction()) info.axes.push_back(static_cast<int64_t>(i));
    }
    // Inner when the first tensor input's innermost dim maps to a reduced dim.
    auto* input = expr->input(0)->as<TensorView>();
    if (IterDomain* innermost = innermostInMemory(input)) {
      for (const LogicalPair& pair : logicalMap(input, tv)) {
        if (pair.producer == innermost && pair.consumer->isReduction()) info.inner = true;
      }
    }
    reductions.push_back(std::move(info));
  }
  return reductions;
}

bool hasReductions(const Fusion& fusion) {
  const std::vector<Expr*> exprs = fusion.exprs();
  return std::any_of(exprs.begin(), exprs.end(),
                     [](const Expr* expr) { return isReductionOp(expr->op()); });
}

}  // namespace braze
