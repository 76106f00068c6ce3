// unswitch: the bounds predicates inside an Unswitch loop are hoisted in front of it, taken
// at the largest value of every loop variable inside; when that holds, a copy of the nest
// without those predicates runs, otherwise the original, predicated nest:
//
//   for u in 0..1 (unswitch):                 if (bidx * 512 + 511 < n) {
//     for i in 0..4 (unroll):        ->         for i: for v: T2[...] = ...    (no checks)
//       for v in 0..128:                      } else {
//         if (p(u, i, v)) T2[...] = ...         ...the original nest...
//                                             }
//
// Only predicates that grow with their loop variables can be checked at the maximum (sums
// with positive coefficients, divisions); a nest with any other predicate, or with
// synchronization inside (which must not sit in a thread-dependent branch), keeps its
// predicates where they are.

#include <set>

#include "lower/passes.h"

namespace braze::lower {

namespace {

bool dependsOnAny(const kir::Value& v, const std::vector<kir::Value>& symbols) {
  for (const kir::Value& s : symbols)
    if (kir::dependsOn(v, s)) return true;
  return false;
}

// True when `v` does not decrease as any of `symbols` grows (for comparisons: is no more true
// at smaller values than at the largest ones).
bool isMonotonic(const kir::Value& v, const std::vector<kir::Value>& symbols) {
  if (!dependsOnAny(v, symbols)) return true;
  const auto& ops = v.node().operands;
  switch (v.kind()) {
    case kir::ValueKind::Symbol:
      return true;
    case kir::ValueKind::Sum:
      for (const kir::Value& o : ops)
        if (!isMonotonic(o, symbols)) return false;
      return true;
    case kir::ValueKind::Product:
      if (v.node().constant < 0) return false;
      for (const kir::Value& o : ops)
        if (!kir::isNonNegative(o) || !isMonotonic(o, symbols)) return false;
      return true;
    case kir::ValueKind::Div:
    case kir::ValueKind::CeilDiv:
      return !dependsOnAny(ops[1], symbols) && isMonotonic(ops[0], symbols);
    case kir::ValueKind::Lt:
    case kir::ValueKind::Le:
      return !dependsOnAny(ops[1], symbols) && isMonotonic(ops[0], symbols);
    case kir::ValueKind::And:
      for (const kir::Value& o : ops)
        if (!isMonotonic(o, symbols)) return false;
      return true;
    default:
      return false;
  }
}

struct Survey {
  std::vector<kir::Value> loop_indices;
  std::map<std::string, kir::Value> last;
  std::vector<kir::Value> predicates;
  bool blocked = false;
};

void survey(const kir::Scope& scope, const LowerContext& ctx, Survey& s) {
  for (const kir::StmtPtr& stmt : scope) {
    if (const auto* loop = stmt->dynCast<kir::ForLoop>()) {
      if (loop->index.kind() == kir::ValueKind::Symbol) {
        s.loop_indices.push_back(loop->index);
        s.last.emplace(loop->index.key(), loop->extent - kir::constant(1));
      }
      survey(loop->body, ctx, s);
    } else if (const auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      if (branch->predicate_kind == kir::PredicateKind::Bounds)
        s.predicates.push_back(branch->predicate);
      survey(branch->then_body, ctx, s);
      survey(branch->else_body, ctx, s);
    } else if (stmt->kind() == kir::StmtKind::Sync) {
      s.blocked = true;
    } else if (const auto* red = stmt->dynCast<kir::ReductionOp>()) {
      if (red->block.any() || red->grid.any()) s.blocked = true;
    }
    // Shared memory and global intermediates may need barriers between their accesses, and a
    // barrier must not sit in a branch that depends on the thread.
    auto check = [&](const TensorView* tv) {
      if (tv != nullptr && (ctx.memoryOf(tv) == MemoryType::Shared ||
                            (ctx.memoryOf(tv) == MemoryType::Global && !ctx.fusion().isInput(tv) &&
                             !ctx.graph().consumersOf(tv).empty())))
        s.blocked = true;
    };
    if (const auto* op = stmt->dynCast<kir::TensorOp>()) {
      check(op->output.tv);
      for (const kir::Operand& o : op->inputs) check(o.access.tv);
    } else if (const auto* red = stmt->dynCast<kir::ReductionOp>()) {
      check(red->input.access.tv);
      for (const kir::TensorAccess& a : red->outputs) check(a.tv);
    } else if (const auto* copy = stmt->dynCast<kir::VectorCopy>()) {
      check(copy->src.tv);
      check(copy->dst.tv);
    } else if (const auto* init = stmt->dynCast<kir::InitOp>()) {
      check(init->output.tv);
    }
  }
}

// The nest with its bounds checks removed (their statements run unconditionally).
void stripBounds(kir::Scope& scope) {
  kir::Scope out;
  for (kir::StmtPtr& stmt : scope) {
    if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
      stripBounds(loop->body);
    } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      if (branch->predicate_kind == kir::PredicateKind::Bounds && branch->else_body.empty()) {
        stripBounds(branch->then_body);
        for (kir::StmtPtr& inner : branch->then_body) out.push_back(std::move(inner));
        continue;
      }
      stripBounds(branch->then_body);
      stripBounds(branch->else_body);
    }
    out.push_back(std::move(stmt));
  }
  scope = std::move(out);
}

void run(kir::Scope& scope, const LowerContext& ctx) {
  for (kir::StmtPtr& stmt : scope) {
    if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      run(branch->then_body, ctx);
      run(branch->else_body, ctx);
      continue;
    }
    auto* loop = stmt->dynCast<kir::ForLoop>();
    if (loop == nullptr) continue;
    if (loop->parallel_type != ParallelType::Unswitch) {
      run(loop->body, ctx);
      continue;
    }
    kir::Scope single;
    single.push_back(std::move(stmt));
    Survey s;
    survey(single, ctx, s);
    stmt = std::move(single[0]);
    loop = stmt->as<kir::ForLoop>();
    bool hoistable = !s.blocked && !s.predicates.empty();
    std::vector<kir::Value> hoisted;
    for (const kir::Value& p : s.predicates) {
      if (!isMonotonic(p, s.loop_indices)) hoistable = false;
      hoisted.push_back(kir::substitute(p, s.last));
    }
    if (!hoistable) {
      run(loop->body, ctx);
      continue;
    }
    auto fast = std::make_unique<kir::ForLoop>(*loop);
    stripBounds(fast->body);
    auto branch = std::make_unique<kir::IfThenElse>();
    branch->predicate = kir::conjunction(hoisted);
    branch->predicate_kind = kir::PredicateKind::Unswitch;
    branch->then_body.push_back(std::move(fast));
    branch->else_body.push_back(std::move(stmt));
    stmt = std::move(branch);
  }
}

}  // namespace

kir::Kernel unswitch(kir::Kernel kernel, const LowerContext& ctx) {
  run(kernel.body, ctx);
  return kernel;
}

}  // namespace braze::lower
