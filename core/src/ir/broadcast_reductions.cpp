#include "braze/ir/broadcast_reductions.h"

#include <vector>

#include "braze/ir/iter_domain.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/shape.h"
#include "ir/replace_tensor.h"
#include "ops/reduction_output.h"

namespace braze {

int64_t reductionsOverBroadcastsAsSqueezes(Fusion& fusion) {
  int64_t rewritten = 0;
  for (Expr* expr : fusion.exprs()) {
    const OpKind op = expr->op();
    if (op != OpKind::Sum && op != OpKind::Prod && op != OpKind::Max && op != OpKind::Min) continue;
    auto* x = expr->inputs()[0]->as<TensorView>();
    auto* reduced = expr->outputs()[0]->as<TensorView>();
    const auto& axes = expr->attribute<std::vector<int64_t>>("axes");
    std::vector<int64_t> squeezed;
    std::vector<int64_t> remaining;  // in the squeezed tensor's dims
    for (int64_t axis : axes) {
      const IterDomain* dim = x->logical()[static_cast<size_t>(axis)];
      if (dim->isBroadcast() && !dim->hasExpandedExtent()) {
        squeezed.push_back(axis);
      } else {
        remaining.push_back(axis - static_cast<int64_t>(squeezed.size()));
      }
    }
    if (squeezed.empty()) continue;
    if (remaining.empty() && reduced->dtype() == x->dtype()) {
      // A reduction broadcast back at the same dims (keepdim, as definitions write it) is x.
      const std::vector<Expr*> uses = reduced->uses();  // a copy: rewiring edits the list
      for (Expr* use : uses) {
        if (use->op() != OpKind::Broadcast) continue;
        const auto& flags = use->attribute<std::vector<bool>>("flags");
        std::vector<bool> expected(x->logical().size(), false);
        for (int64_t axis : squeezed) expected[static_cast<size_t>(axis)] = true;
        if (flags != expected) continue;
        ir_detail::replaceTensorEverywhere(fusion, use->outputs()[0]->as<TensorView>(), x);
      }
    }
    TensorView* replacement = squeeze(x, squeezed);
    if (!remaining.empty()) replacement = ops_detail::reduceOver(op, replacement, remaining);
    replacement = ops_detail::castIfNeeded(replacement, reduced->dtype());
    ir_detail::replaceTensorEverywhere(fusion, reduced, replacement);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace braze
