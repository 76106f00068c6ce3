// issue-loads-early: a copy from a fusion input into registers moves up its scope, past the
// statements that neither read nor write its destination, to just after the previous such
// load (or the destination's allocation). Statements are placed next to their first reader,
// so a row read only after a block reduction (x in layer norm backward, read after
// sum(w * dy)) would be loaded after that reduction's barriers, one memory latency per
// reduction on every iteration of the row loop; issued early, the loads of both rows are in
// flight together:
//
//   if (p) vectorCopy(T31, dy)              if (p) vectorCopy(T31, dy)
//   T14 = blockReduce(...)            ->    if (p) vectorCopy(T32, x)
//   if (p) vectorCopy(T32, x)               T14 = blockReduce(...)
//
// Fusion inputs are never written by the kernel, so a load may cross anything that does not
// touch its destination, barriers included. Predicates and indices are index expressions of
// the enclosing loops, which stay the same. The relative order of loads is kept, and a load
// moves only when it crosses a barrier: elsewhere it stays by its reader, where its registers
// are live the shortest.

#include <algorithm>
#include <set>

#include "lower/passes.h"
#include "lower/stmt_effects.h"

namespace braze::lower {

namespace {

// The copy `stmt` makes from a fusion input into a register tensor, possibly under a bounds
// branch of its own or in a loop of such copies: its destination, or nullptr when `stmt` is
// something else.
const TensorView* loadedTensor(const kir::Stmt& stmt, const LowerContext& ctx) {
  if (const auto* loop = stmt.dynCast<kir::ForLoop>()) {
    // A loop of such loads (one vector per iteration of an unrolled batch) into one tensor.
    const TensorView* tv = nullptr;
    for (const kir::StmtPtr& s : loop->body) {
      const TensorView* loaded = loadedTensor(*s, ctx);
      if (loaded == nullptr || (tv != nullptr && loaded != tv)) return nullptr;
      tv = loaded;
    }
    return tv;
  }
  if (const auto* branch = stmt.dynCast<kir::IfThenElse>()) {
    if (branch->predicate_kind != kir::PredicateKind::Bounds || branch->then_body.size() != 1 ||
        !branch->else_body.empty())
      return nullptr;
    return loadedTensor(*branch->then_body[0], ctx);
  }
  const kir::TensorAccess* dst = nullptr;
  const kir::TensorAccess* src = nullptr;
  if (const auto* copy = stmt.dynCast<kir::VectorCopy>()) {
    dst = &copy->dst;
    src = &copy->src;
  } else if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
    if (op->expr == nullptr || op->expr->op() != OpKind::Set || op->inputs.size() != 1 ||
        op->inputs[0].kind != kir::Operand::Kind::Tensor)
      return nullptr;
    dst = &op->output;
    src = &op->inputs[0].access;
  } else {
    return nullptr;
  }
  if (!ctx.fusion().isInput(src->tv) || ctx.memoryOf(dst->tv) != MemoryType::Local) return nullptr;
  return dst->tv;
}

void issueEarly(kir::Scope& scope, const LowerContext& ctx) {
  for (size_t i = 0; i < scope.size(); ++i) {
    if (auto* loop = scope[i]->dynCast<kir::ForLoop>()) {
      if (loadedTensor(*loop, ctx) == nullptr) {
        issueEarly(loop->body, ctx);
        continue;
      }
    }
    if (auto* branch = scope[i]->dynCast<kir::IfThenElse>()) {
      if (loadedTensor(*branch, ctx) == nullptr) {
        issueEarly(branch->then_body, ctx);
        issueEarly(branch->else_body, ctx);
        continue;
      }
    }
    const TensorView* loaded = loadedTensor(*scope[i], ctx);
    if (loaded == nullptr) continue;
    size_t to = i;
    while (to > 0 && loadedTensor(*scope[to - 1], ctx) == nullptr) {
      std::set<const TensorView*> touched;
      touchedTensors(*scope[to - 1], touched);
      if (touched.count(loaded)) break;
      --to;
    }
    // Only across a barrier (a block or grid reduction), where waiting costs a memory latency;
    // elsewhere the load stays by its reader, where its registers are live the shortest.
    const bool barrier = std::any_of(scope.begin() + static_cast<std::ptrdiff_t>(to),
                                     scope.begin() + static_cast<std::ptrdiff_t>(i),
                                     [](const kir::StmtPtr& s) { return synchronizes(*s); });
    if (!barrier) continue;
    kir::StmtPtr load = std::move(scope[i]);
    scope.erase(scope.begin() + static_cast<std::ptrdiff_t>(i));
    scope.insert(scope.begin() + static_cast<std::ptrdiff_t>(to), std::move(load));
  }
}

}  // namespace

kir::Kernel issueLoadsEarly(kir::Kernel kernel, const LowerContext& ctx) {
  issueEarly(kernel.body, ctx);
  return kernel;
}

}  // namespace braze::lower
