// group-block-reductions: block reductions of one scope that do not depend on each other run
// as one blockReduceGroup call, so the block meets at one pair of barriers for all of them. A
// row of layer norm backward reduces sum(w * dy) and sum(w * dy * xhat), each with its own two
// barriers; grouped:
//
//   T18 = serial partial of w dy xhat                T18 = serial partial of w dy xhat
//   T18 = blockReduce(T18)                     ->    T14 = serial partial of w dy
//   T14 = serial partial of w dy                     T18, T14 = blockReduceGroup(T18, T14)
//   T14 = blockReduce(T14)
//
// A finishing block reduction (its serial part already in its output) moves down its scope to
// the next one of the same op, value type and thread dims, with the statements that read its
// result (they move to after the pair), past statements that neither synchronize nor write what
// the moving ones touch; the pair is then marked (ReductionOp::grouped_with_next) for the
// printer. Pairs only: a row of layer norm backward has two such sums. Grid reductions, Welford
// and reductions that read another's result are left alone.

#include <algorithm>
#include <set>

#include "lower/passes.h"
#include "lower/stmt_effects.h"

namespace braze::lower {

namespace {

const kir::ReductionOp* groupable(const kir::Stmt& stmt) {
  const auto* op = stmt.dynCast<kir::ReductionOp>();
  if (op == nullptr || !op->finish || !op->block.any() || op->grid.any() ||
      op->expr->op() == OpKind::Welford || op->outputs.size() != 1 || op->grouped_with_next)
    return nullptr;
  return op;
}

bool compatible(const kir::ReductionOp& a, const kir::ReductionOp& b) {
  return a.block == b.block && a.expr->op() == b.expr->op() &&
         a.outputs[0].tv->dtype() == b.outputs[0].tv->dtype();
}

bool intersects(const std::set<const TensorView*>& a, const std::set<const TensorView*>& b) {
  return std::any_of(a.begin(), a.end(), [&](const TensorView* tv) { return b.count(tv) > 0; });
}

// Pairs the finishing block reduction at scope[i] with the next compatible one, if the
// statements between allow: those that read its result (its dependents) move down with it, to
// after the partner; the others stay, and must not write what the moving statements touch.
// Returns whether a pair was made.
bool pairFrom(kir::Scope& scope, size_t i) {
  const kir::ReductionOp* first = groupable(*scope[i]);
  if (first == nullptr) return false;
  std::vector<size_t> moving = {i};
  std::set<const TensorView*> moving_writes = {first->outputs[0].tv};
  std::set<const TensorView*> moving_touched;
  touchedTensors(*scope[i], moving_touched);
  for (size_t k = i + 1; k < scope.size(); ++k) {
    std::set<const TensorView*> touched;
    touchedTensors(*scope[k], touched);
    const kir::ReductionOp* next = groupable(*scope[k]);
    if (next != nullptr && compatible(*first, *next) && !intersects(touched, moving_writes)) {
      // [crossed..., first, next, dependents...] in place of scope[i..k].
      std::vector<kir::StmtPtr> dependents;
      kir::StmtPtr lead = std::move(scope[i]);
      for (size_t m = 1; m < moving.size(); ++m) dependents.push_back(std::move(scope[moving[m]]));
      for (size_t m = moving.size(); m-- > 0;)
        scope.erase(scope.begin() + static_cast<std::ptrdiff_t>(moving[m]));
      const size_t partner = k - moving.size();
      lead->as<kir::ReductionOp>()->grouped_with_next = true;
      scope.insert(scope.begin() + static_cast<std::ptrdiff_t>(partner), std::move(lead));
      scope.insert(scope.begin() + static_cast<std::ptrdiff_t>(partner + 2),
                   std::make_move_iterator(dependents.begin()),
                   std::make_move_iterator(dependents.end()));
      return true;
    }
    if (synchronizes(*scope[k])) return false;
    if (intersects(touched, moving_writes)) {
      // Reads (or writes) the result: moves down with it.
      moving.push_back(k);
      touchedTensors(*scope[k], moving_touched);
      std::set<const TensorView*> written;
      writtenTensors(*scope[k], written);
      moving_writes.insert(written.begin(), written.end());
      continue;
    }
    std::set<const TensorView*> written;
    writtenTensors(*scope[k], written);
    if (intersects(written, moving_touched)) return false;
  }
  return false;
}

void group(kir::Scope& scope) {
  for (kir::StmtPtr& stmt : scope) {
    if (auto* loop = stmt->dynCast<kir::ForLoop>()) group(loop->body);
    if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      group(branch->then_body);
      group(branch->else_body);
    }
  }
  for (size_t i = 0; i < scope.size(); ++i) pairFrom(scope, i);
}

}  // namespace

kir::Kernel groupBlockReductions(kir::Kernel kernel, const LowerContext& ctx) {
  (void)ctx;
  group(kernel.body);
  return kernel;
}

}  // namespace braze::lower
