#include "braze/ir/redundant_expands.h"

#include <vector>

#include "braze/ir/iter_domain.h"
#include "braze/ir/op_kind.h"
#include "braze/ir/scalar.h"
#include "braze/ir/tensor_view.h"

namespace braze {

namespace {

// The same extent: one Val, or constants of one value.
bool sameExtent(const Scalar* a, const Scalar* b) {
  return a == b || (a->isConstant() && b->isConstant() && a->value() == b->value());
}

// Whether `use` reads `expanded` where another tensor operand of the same rank has, at every
// dim the expand gave an extent, an iteration dim of that very extent: those operands fix the
// extents (and the use's output took one of them), so the unexpanded broadcast gives the same
// result and no extent goes unchecked.
bool othersSpanExpandedDims(const Expr* use, const TensorView* expanded) {
  if (!isElementwise(use->op())) return false;
  const std::vector<IterDomain*>& dims = expanded->logical();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!dims[d]->hasExpandedExtent()) continue;
    bool spanned = false;
    for (const Val* input : use->inputs()) {
      const auto* other = input->isA<TensorView>() ? input->as<TensorView>() : nullptr;
      if (other == nullptr || other == expanded || other->logical().size() != dims.size()) continue;
      const IterDomain* dim = other->logical()[d];
      spanned =
          spanned || (!dim->isBroadcast() && sameExtent(dim->extent(), dims[d]->expandedExtent()));
    }
    if (!spanned) return false;
  }
  return true;
}

}  // namespace

int64_t bypassRedundantExpands(Fusion& fusion) {
  int64_t rewired = 0;
  for (Expr* expr : fusion.exprs()) {
    if (expr->op() != OpKind::Expand) continue;
    auto* expanded = expr->outputs()[0]->as<TensorView>();
    Val* source = expr->inputs()[0];
    // A copy: rewiring a use removes it from the expand's list.
    const std::vector<Expr*> uses = expanded->uses();
    for (Expr* use : uses) {
      if (!othersSpanExpandedDims(use, expanded)) continue;
      use->replaceInput(expanded, source);
      ++rewired;
    }
  }
  return rewired;
}

}  // namespace braze
