// hoist-parallel-reductions: a block or grid reduction inside serial loops over its own
// reduction axes reduces across threads once, after those loops, instead of once per
// iteration. Each thread first accumulates its share serially in its register accumulator:
//
//   T1 = init                                     T1 = init
//   for i in 0..4:                         ->     for i in 0..4: if (p(i)) T1 = T1 + x(i)
//     T1 = T1 + blockReduce(p(i) ? x(i) : 0)      T1 = blockReduce(T1)       (finish)
//
// which is the same sum (the operators are associative and the accumulator starts at the
// identity in every thread). Only register accumulators qualify: a global one holds one value
// per element, not per thread. Afterwards every grid reduction must be outside all serial
// loops: one launch synchronizes the blocks through a workspace once per grid reduction.

#include <algorithm>

#include "lower/passes.h"

namespace braze::lower {

namespace {

bool isReductionLoopOf(const kir::ForLoop& loop, const kir::ReductionOp& op) {
  if (loop.id == nullptr || !loop.id->isReduction()) return false;
  return std::any_of(op.nest.begin(), op.nest.end(),
                     [&](const kir::NestPosition& p) { return p.id == loop.id; });
}

// The reductions in `scope` (any depth) for which every loop from `outer` down to them is one
// of their reduction loops.
void collectHoistable(kir::Scope& scope, const std::vector<const kir::ForLoop*>& chain,
                      const LowerContext& ctx, std::vector<kir::StmtPtr*>& found) {
  for (kir::StmtPtr& stmt : scope) {
    if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
      std::vector<const kir::ForLoop*> inner = chain;
      inner.push_back(loop);
      collectHoistable(loop->body, inner, ctx, found);
      continue;
    }
    auto* op = stmt->dynCast<kir::ReductionOp>();
    if (op == nullptr || op->finish || (!op->block.any() && !op->grid.any())) continue;
    const bool registers = std::all_of(op->outputs.begin(), op->outputs.end(), [&](const auto& a) {
      return ctx.memoryOf(a.tv) == MemoryType::Local;
    });
    const bool all_reduction_loops =
        std::all_of(chain.begin(), chain.end(),
                    [&](const kir::ForLoop* l) { return isReductionLoopOf(*l, *op); });
    if (registers && all_reduction_loops) found.push_back(&stmt);
  }
}

void hoist(kir::Scope& scope, const LowerContext& ctx) {
  for (size_t i = 0; i < scope.size(); ++i) {
    auto* loop = scope[i]->dynCast<kir::ForLoop>();
    if (loop == nullptr) {
      if (auto* branch = scope[i]->dynCast<kir::IfThenElse>()) {
        hoist(branch->then_body, ctx);
        hoist(branch->else_body, ctx);
      }
      continue;
    }
    std::vector<kir::StmtPtr*> found;
    collectHoistable(loop->body, {loop}, ctx, found);
    std::vector<kir::StmtPtr> finishes;
    for (kir::StmtPtr* slot : found) {
      auto* op = (*slot)->as<kir::ReductionOp>();
      auto finish = std::make_unique<kir::ReductionOp>(*op);
      finish->finish = true;
      finish->input_predicate = kir::Value();
      // The serial part: this thread's share, where in bounds.
      op->block = {};
      op->grid = {};
      op->workspace = -1;
      op->grid_flag.clear();
      op->write_predicate = kir::Value();
      kir::Value predicate = op->input_predicate;
      op->input_predicate = kir::Value();
      if (predicate.defined() && !predicate.isTrue()) {
        auto branch = std::make_unique<kir::IfThenElse>();
        branch->predicate = predicate;
        branch->predicate_kind = kir::PredicateKind::Bounds;
        branch->then_body.push_back(std::move(*slot));
        *slot = std::move(branch);
      }
      finishes.push_back(std::move(finish));
    }
    hoist(loop->body, ctx);
    scope.insert(scope.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                 std::make_move_iterator(finishes.begin()),
                 std::make_move_iterator(finishes.end()));
    i += finishes.size();
  }
}

void checkGridReductions(const kir::Scope& scope, std::vector<const kir::ForLoop*>& chain) {
  for (const kir::StmtPtr& stmt : scope) {
    if (const auto* loop = stmt->dynCast<kir::ForLoop>()) {
      chain.push_back(loop);
      checkGridReductions(loop->body, chain);
      chain.pop_back();
    } else if (const auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      checkGridReductions(branch->then_body, chain);
      checkGridReductions(branch->else_body, chain);
    } else if (const auto* op = stmt->dynCast<kir::ReductionOp>()) {
      if (!op->grid.any()) continue;
      for (const kir::ForLoop* loop : chain) {
        BRAZE_USER_CHECK(loop->index.isConstant())
            << "lowering: " << op->outputs[0].tv->name()
            << " is reduced across blocks inside the serial loop over " << loop->id->name()
            << "; a grid reduction can run only once per launch: parallelize that axis, or "
               "keep the reduction in registers with the loop over its own reduction axes";
      }
    }
  }
}

}  // namespace

kir::Kernel hoistParallelReductions(kir::Kernel kernel, const LowerContext& ctx) {
  hoist(kernel.body, ctx);
  std::vector<const kir::ForLoop*> chain;
  checkGridReductions(kernel.body, chain);
  return kernel;
}

}  // namespace braze::lower
