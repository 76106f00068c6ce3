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
// per element, not per thread. Afterwards a grid reduction may remain only inside serial loops
// over iteration axes, each iteration synchronizing the blocks through its own workspace
// region (see GridReductionPlacer).

#include <algorithm>

#include "braze/ops/elementwise.h"
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

// Every grid reduction runs once per launch, or once per iteration of serial loops over
// iteration axes around it (a column partial of several register elements), each iteration
// with its own region of the workspace:
//
//   for i in 0..4:                                    T3[i] = gridReduce(T2[i], workspace +
//     T3[i] = sum(T2[i]) grid(x)          ->                    i * regionBytes)
//
// The workspace grows by the loops' trip count. Only the block that finishes an iteration
// holds its result, so the result must be read inside the same iteration.
class GridReductionPlacer {
 public:
  GridReductionPlacer(kir::Kernel& kernel, const LowerContext& ctx) : kernel_(kernel), ctx_(ctx) {}

  void run() {
    visit(kernel_.body);
    checkReaders(kernel_.body);
  }

 private:
  void visit(kir::Scope& scope) {
    for (kir::StmtPtr& stmt : scope) {
      if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
        chain_.push_back(loop);
        visit(loop->body);
        chain_.pop_back();
      } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
        visit(branch->then_body);
        visit(branch->else_body);
      } else if (auto* op = stmt->dynCast<kir::ReductionOp>()) {
        if (op->grid.any()) place(*op);
      }
    }
  }

  void place(kir::ReductionOp& op) {
    std::vector<kir::ForLoop*> loops;
    for (kir::ForLoop* loop : chain_) {
      if (loop->index.isConstant()) continue;
      BRAZE_USER_CHECK(!isReductionLoopOf(*loop, op))
          << "lowering: " << op.outputs[0].tv->name()
          << " is reduced across blocks inside the serial loop over its own reduction axis "
          << loop->id->name()
          << "; a grid reduction combines one value per thread: keep the reduction in "
             "registers with the loop over its own reduction axes (hoist-parallel-reductions), "
             "or parallelize that axis";
      loops.push_back(loop);
    }
    if (loops.empty()) return;
    std::vector<const TensorView*> results;
    for (const kir::TensorAccess& a : op.outputs) results.push_back(a.tv);
    pending_.push_back({results, loops.back(), op.outputs[0].tv});
    kir::Value region = kir::constant(0);
    Val* iterations = ctx_.mutableFusion().constantIndex(1);
    for (kir::ForLoop* loop : loops) {
      region = region * loop->extent + loop->index;
      iterations = mul(Operand(iterations), Operand(static_cast<Val*>(loop->id->extent())));
    }
    op.workspace_region = region;
    kir::Parameter& workspace = kernel_.parameters[static_cast<size_t>(op.workspace)];
    workspace.workspace_bytes =
        mul(Operand(const_cast<Val*>(workspace.workspace_bytes)), Operand(iterations));
  }

  // After the walk: a result read outside its iteration's loop is refused.
  void checkReaders(const kir::Scope& scope) const {
    for (const Pending& p : pending_) {
      bool outside = false;
      checkOutside(scope, p, false, outside);
      BRAZE_USER_CHECK(!outside)
          << "lowering: " << p.name->name()
          << " is reduced across blocks once per iteration of the serial loop over "
          << p.loop->id->name()
          << ", but is read after that loop, where only the last iteration's finishing block "
             "holds a result; inline its readers into that loop";
    }
  }

  struct Pending {
    std::vector<const TensorView*> results;
    const kir::ForLoop* loop;
    const TensorView* name;
  };

  void checkOutside(const kir::Scope& scope, const Pending& p, bool inside, bool& outside) const {
    for (const kir::StmtPtr& stmt : scope) {
      if (const auto* loop = stmt->dynCast<kir::ForLoop>()) {
        checkOutside(loop->body, p, inside || loop == p.loop, outside);
      } else if (const auto* branch = stmt->dynCast<kir::IfThenElse>()) {
        checkOutside(branch->then_body, p, inside, outside);
        checkOutside(branch->else_body, p, inside, outside);
      } else if (!inside && readsStmt(*stmt, p.results)) {
        outside = true;
      }
    }
  }

  static bool readsStmt(const kir::Stmt& stmt, const std::vector<const TensorView*>& tensors) {
    auto in = [&](const TensorView* tv) {
      return std::find(tensors.begin(), tensors.end(), tv) != tensors.end();
    };
    if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
      for (const kir::Operand& o : op->inputs)
        if (o.kind == kir::Operand::Kind::Tensor && in(o.access.tv)) return true;
    } else if (const auto* red = stmt.dynCast<kir::ReductionOp>()) {
      if (!red->finish && red->input.kind == kir::Operand::Kind::Tensor && in(red->input.access.tv))
        return true;
    } else if (const auto* copy = stmt.dynCast<kir::VectorCopy>()) {
      return in(copy->src.tv);
    }
    return false;
  }

  kir::Kernel& kernel_;
  const LowerContext& ctx_;
  std::vector<kir::ForLoop*> chain_;
  std::vector<Pending> pending_;
};

}  // namespace

kir::Kernel hoistParallelReductions(kir::Kernel kernel, const LowerContext& ctx) {
  hoist(kernel.body, ctx);
  GridReductionPlacer(kernel, ctx).run();
  return kernel;
}

}  // namespace braze::lower
