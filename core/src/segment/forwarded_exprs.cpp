#include "segment/forwarded_exprs.h"

#include <algorithm>
#include <unordered_map>

#include "braze/sched/indexed_inputs.h"

namespace braze::segment_detail {

namespace {

// full, iota, uniform, normal: each element a function of its position, so every segment that
// needs one can compute it (random values are counter-based, hence the same in each).
bool isFactory(OpKind op) {
  return familyOf(op) == OpFamily::Factory;
}

bool hasTensorOutput(const Expr* expr) {
  return std::any_of(expr->outputs().begin(), expr->outputs().end(),
                     [](const Val* v) { return v->isA<TensorView>(); });
}

// Whether an output of `expr` is read at data-dependent positions (gather's input) or is an
// operand of a contraction (whose kernel copies tiles of it with the copy engine): a kernel
// reads such a tensor from memory written before it, so it is not computed again inside. A
// cast before a matmul is then a node of its own, merged with the matmul only where a
// scheduler accepts the merge.
bool feedsMemoryRead(const Expr* expr) {
  for (const Val* output : expr->outputs()) {
    for (const Expr* use : output->uses()) {
      if (use->op() == OpKind::Matmul || use->op() == OpKind::Linear) return true;
      for (size_t i = 0; i < use->inputs().size(); ++i) {
        if (use->input(i) == output && isIndexedOperand(*use, i)) return true;
      }
    }
  }
  return false;
}

// An input, unless an output is written into it (Fusion::aliasOutputToInput): a segment that
// recomputed from it could run after that write.
bool isForwardableInput(const TensorView* tv) {
  const Fusion& fusion = tv->fusion();
  return fusion.isInput(tv) && fusion.outputWrittenInto(tv) == nullptr;
}

}  // namespace

bool isCheapToRecompute(OpKind op) {
  switch (familyOf(op)) {
    case OpFamily::Unary:
    case OpFamily::Cast:
    case OpFamily::Binary:
    case OpFamily::Ternary:
      return true;
    default:
      break;
  }
  return op == OpKind::Broadcast || op == OpKind::Expand || op == OpKind::Squeeze ||
         op == OpKind::Set;
}

std::vector<bool> forwardedExprs(const std::vector<Expr*>& exprs) {
  std::unordered_map<const Expr*, size_t> index;
  for (size_t i = 0; i < exprs.size(); ++i) index.emplace(exprs[i], i);

  std::vector<bool> forwardable(exprs.size(), false);
  for (size_t i = 0; i < exprs.size(); ++i) {
    const Expr* expr = exprs[i];
    if (!hasTensorOutput(expr) || feedsMemoryRead(expr)) continue;
    std::vector<const TensorView*> tensors;
    for (const Val* input : expr->inputs()) {
      const auto* tv = input->dynCast<TensorView>();
      // x * x reads one tensor.
      if (tv != nullptr && std::find(tensors.begin(), tensors.end(), tv) == tensors.end())
        tensors.push_back(tv);
    }
    if (isFactory(expr->op())) {
      forwardable[i] = tensors.empty();
      continue;
    }
    if (!isCheapToRecompute(expr->op()) || tensors.size() != 1) continue;
    const Expr* def = tensors.front()->definition();
    forwardable[i] = def == nullptr ? isForwardableInput(tensors.front())
                                    : index.count(def) && forwardable[index.at(def)];
  }

  // Backwards, so that every use is decided before its producer.
  std::vector<bool> forwarded(exprs.size(), false);
  for (size_t i = exprs.size(); i-- > 0;) {
    if (!forwardable[i]) continue;
    for (const Val* output : exprs[i]->outputs()) {
      for (const Expr* use : output->uses()) {
        auto it = index.find(use);
        if (it == index.end()) continue;  // dead code: no output needs it
        if (!forwardable[it->second] || forwarded[it->second]) forwarded[i] = true;
      }
    }
  }
  return forwarded;
}

}  // namespace braze::segment_detail
