#include "braze/ir/redundant_expands.h"

#include <unordered_map>
#include <vector>

#include "braze/ir/iter_domain.h"
#include "braze/ir/op_kind.h"
#include "braze/ir/scalar.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/shape.h"
#include "ir/replace_tensor.h"

namespace braze {

namespace {

// Extents known equal: one Val, constants of one value, or one class of the caller's
// equalities (a union-find over them).
class SameExtents {
 public:
  explicit SameExtents(std::span<const std::pair<const Val*, const Val*>> equal) {
    for (const auto& [a, b] : equal) parent_[root(a)] = root(b);
  }

  bool operator()(const Scalar* a, const Scalar* b) {
    if (a == b || (a->isConstant() && b->isConstant() && a->value() == b->value())) return true;
    return root(a) == root(b);
  }

 private:
  const Val* root(const Val* v) {
    auto it = parent_.find(v);
    if (it == parent_.end() || it->second == v) return v;
    const Val* r = root(it->second);
    parent_[v] = r;
    return r;
  }

  std::unordered_map<const Val*, const Val*> parent_;
};

// Whether `use` reads `expanded` where another tensor operand of the same rank has, at every
// dim the expand gave an extent, an iteration dim of that very extent: those operands fix the
// extents (and the use's output took one of them), so the unexpanded broadcast gives the same
// result and no extent goes unchecked.
bool othersSpanExpandedDims(const Expr* use, const TensorView* expanded, SameExtents& same) {
  if (!isElementwise(use->op())) return false;
  const std::vector<IterDomain*>& dims = expanded->logical();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!dims[d]->hasExpandedExtent()) continue;
    bool spanned = false;
    for (const Val* input : use->inputs()) {
      const auto* other = input->isA<TensorView>() ? input->as<TensorView>() : nullptr;
      if (other == nullptr || other == expanded || other->logical().size() != dims.size()) continue;
      const IterDomain* dim = other->logical()[d];
      spanned = spanned || (!dim->isBroadcast() && same(dim->extent(), dims[d]->expandedExtent()));
    }
    if (!spanned) return false;
  }
  return true;
}

// `use` computed on the unexpanded `source` instead, its result expanded as `expanded` was: an
// elementwise op whose only tensor operand is the expanded one (exp, reciprocal, a cast,
// `mul(t, 2.0)`) is the expanded op of the tensor, computed once per broadcast element. The
// new expand sits closer to the ops that may make it redundant. False for other ops, and when
// `source` has an expanded dim of its own.
bool sinkBelow(Fusion& fusion, Expr* use, TensorView* expanded, TensorView* source) {
  if (!isElementwise(use->op())) return false;
  std::vector<Val*> inputs;
  for (Val* input : use->inputs()) {
    if (input == expanded) {
      inputs.push_back(source);
    } else if (input->isA<TensorView>()) {
      return false;
    } else {
      inputs.push_back(input);
    }
  }
  std::vector<IterDomain*> dims;
  for (const IterDomain* dim : source->logical()) {
    if (dim->hasExpandedExtent()) return false;
    dims.push_back(fusion.create<IterDomain>(dim->extent(), dim->iterType()));
  }
  auto* result = use->outputs()[0]->as<TensorView>();
  auto* unexpanded = fusion.create<TensorView>(result->dtype(), dims);
  fusion.create<Expr>(use->op(), std::move(inputs), std::vector<Val*>{unexpanded},
                      use->attributes());
  std::vector<Operand> sizes;
  for (const IterDomain* dim : expanded->logical()) sizes.emplace_back(dim->logicalExtent());
  ir_detail::replaceTensorEverywhere(fusion, result, expand(unexpanded, sizes));
  return true;
}

}  // namespace

int64_t bypassRedundantExpands(Fusion& fusion,
                               std::span<const std::pair<const Val*, const Val*>> equal_extents) {
  SameExtents same(equal_extents);
  int64_t rewired = 0;
  // Sinking an expand below an op makes a new one; repeat until no read changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (Expr* expr : fusion.exprs()) {
      if (expr->op() != OpKind::Expand) continue;
      auto* expanded = expr->outputs()[0]->as<TensorView>();
      auto* source = expr->inputs()[0]->as<TensorView>();
      // A copy: rewiring a use removes it from the expand's list.
      const std::vector<Expr*> uses = expanded->uses();
      for (Expr* use : uses) {
        if (othersSpanExpandedDims(use, expanded, same)) {
          use->replaceInput(expanded, source);
        } else if (sinkBelow(fusion, use, expanded, source)) {
          // This reader's result is now a new expand, below it.
        } else {
          continue;
        }
        ++rewired;
        changed = true;
      }
    }
  }
  return rewired;
}

}  // namespace braze
