// insert-predicates: each statement runs only where its iteration point is in bounds (see
// IndexMap::bounds) and, when it writes global or shared memory, only in one thread of each
// group of threads that would write the same element:
//
//   if (bidx * 512 + tidx * 4 + i3 < T0.size[0] * T0.size[1]) { T2[...] = ...; }
//   if (tidx == 0) { T5.data[bidx] = T4[0]; }          (T5 has no TIDx axis)
//
// Statements that touch only registers and shared memory need no bounds: their storage is
// sized by the loops, and any value computed out of bounds is never stored to global memory.
// Block and grid reductions synchronize, so every thread must reach them: an out-of-bounds
// thread contributes the initial value instead (`input_predicate`) and only in-bounds owners
// write the result (`write_predicate`). A result of a grid reduction exists only in the block
// that finished it; writes that depend on it are predicated on that block's flag.

#include <set>

#include "lower/index_compute.h"
#include "lower/passes.h"

namespace braze::lower {

namespace {

constexpr ParallelType kLaunchTypes[] = {ParallelType::BIDx, ParallelType::BIDy,
                                         ParallelType::BIDz, ParallelType::TIDx,
                                         ParallelType::TIDy, ParallelType::TIDz};

class Predicator {
 public:
  Predicator(const LowerContext& ctx, const kir::Kernel& kernel) : ctx_(ctx) {
    // Which tensors carry a grid reduction's result, directly or through registers.
    kir::forEachStmt(kernel.body, [&](const kir::Stmt& stmt) {
      if (const auto* op = stmt.dynCast<kir::ReductionOp>()) {
        if (op->grid.any()) {
          for (const kir::TensorAccess& a : op->outputs) grid_flags_[a.tv].insert(op->grid_flag);
          flag_masks_[op->grid_flag] = op->grid;
        }
      }
    });
    for (const Expr* expr : ctx.exprs()) {
      std::set<std::string> flags;
      for (const Val* v : expr->inputs()) {
        const auto* tv = v->dynCast<TensorView>();
        if (tv == nullptr || ctx.memoryOf(tv) == MemoryType::Global) continue;
        auto it = grid_flags_.find(tv);
        if (it != grid_flags_.end()) flags.insert(it->second.begin(), it->second.end());
      }
      if (flags.empty()) continue;
      for (const Val* v : expr->outputs()) {
        if (const auto* tv = v->dynCast<TensorView>())
          grid_flags_[tv].insert(flags.begin(), flags.end());
      }
    }
  }

  void run(kir::Scope& scope) {
    for (kir::StmtPtr& stmt : scope) {
      if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
        run(loop->body);
        continue;
      }
      if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
        run(branch->then_body);
        run(branch->else_body);
        continue;
      }
      kir::Value predicate = kir::boolean(true);
      if (auto* op = stmt->dynCast<kir::TensorOp>()) {
        predicate = predicateOf(*op);
      } else if (auto* init = stmt->dynCast<kir::InitOp>()) {
        predicate = predicateOf(*init);
      } else if (auto* red = stmt->dynCast<kir::ReductionOp>()) {
        predicate = predicateOf(*red);
      }
      if (predicate.isTrue()) continue;
      auto branch = std::make_unique<kir::IfThenElse>();
      branch->predicate = predicate;
      branch->predicate_kind = kir::PredicateKind::Bounds;
      branch->then_body.push_back(std::move(stmt));
      stmt = std::move(branch);
    }
  }

 private:
  bool touchesGlobal(const kir::TensorOp& op) const {
    if (ctx_.memoryOf(op.output.tv) == MemoryType::Global) return true;
    for (const kir::Operand& operand : op.inputs) {
      if (operand.kind == kir::Operand::Kind::Tensor &&
          ctx_.memoryOf(operand.access.tv) == MemoryType::Global)
        return true;
    }
    return false;
  }

  // One writer per element: `index == 0` for every launch dim the output does not iterate.
  std::vector<kir::Value> threadPredicates(const TensorView* out,
                                           const std::vector<kir::NestPosition>& nest) const {
    std::vector<kir::Value> conditions;
    const MemoryType memory = ctx_.memoryOf(out);
    if (memory == MemoryType::Local) return conditions;
    // The block that finished a grid reduction holds its result; it is not block 0.
    kir::ParallelMask finished;
    if (auto it = grid_flags_.find(out); it != grid_flags_.end()) {
      for (const std::string& flag : it->second) {
        const kir::ParallelMask& m = flag_masks_.at(flag);
        finished.x = finished.x || m.x;
        finished.y = finished.y || m.y;
        finished.z = finished.z || m.z;
      }
    }
    for (ParallelType type : kLaunchTypes) {
      if (!ctx_.launchDim(type).used) continue;
      if (memory == MemoryType::Shared && isBlockDim(type)) continue;
      if ((type == ParallelType::BIDx && finished.x) ||
          (type == ParallelType::BIDy && finished.y) || (type == ParallelType::BIDz && finished.z))
        continue;
      bool iterated = false;
      for (const kir::NestPosition& position : nest) {
        if (position.id != nullptr && position.id->parallelType() == type &&
            !position.id->isReduction())
          iterated = true;
      }
      // An output computed inside a reduction's nest shares that nest's TIDx, a reduction
      // axis, but iterates TIDx itself: every thread writes its own elements.
      for (const IterDomain* id : out->loop()) {
        if (id->parallelType() == type && !id->isReduction()) iterated = true;
      }
      if (!iterated) conditions.push_back(kir::eq(ctx_.parallelIndex(type), kir::constant(0)));
    }
    return conditions;
  }

  std::vector<kir::Value> flagsOf(const TensorView* out) const {
    std::vector<kir::Value> flags;
    if (ctx_.memoryOf(out) == MemoryType::Local) return flags;
    auto it = grid_flags_.find(out);
    if (it == grid_flags_.end()) return flags;
    for (const std::string& flag : it->second)
      flags.push_back(kir::symbol(flag, {.role = kir::SymbolRole::Other, .order = 50}));
    return flags;
  }

  kir::Value predicateOf(const kir::TensorOp& op) const {
    std::vector<kir::Value> conditions;
    if (touchesGlobal(op)) {
      const IndexMap map(ctx_, op.nest);
      const IndexMap::Bounds bounds = map.bounds(op.output.tv);
      conditions = bounds.iteration;
      conditions.insert(conditions.end(), bounds.reduction.begin(), bounds.reduction.end());
    }
    for (const kir::Value& c : threadPredicates(op.output.tv, op.nest)) conditions.push_back(c);
    for (const kir::Value& c : flagsOf(op.output.tv)) conditions.push_back(c);
    return kir::conjunction(conditions);
  }

  kir::Value predicateOf(const kir::InitOp& op) const {
    std::vector<kir::Value> conditions;
    if (ctx_.memoryOf(op.output.tv) == MemoryType::Global) {
      const IndexMap map(ctx_, op.nest);
      conditions = map.bounds(op.output.tv).iteration;
    }
    for (const kir::Value& c : threadPredicates(op.output.tv, op.nest)) conditions.push_back(c);
    return kir::conjunction(conditions);
  }

  kir::Value predicateOf(kir::ReductionOp& op) const {
    const TensorView* out = op.outputs[0].tv;
    const IndexMap map(ctx_, op.nest);
    const IndexMap::Bounds bounds = map.bounds(out);
    std::vector<kir::Value> all = bounds.iteration;
    all.insert(all.end(), bounds.reduction.begin(), bounds.reduction.end());
    std::vector<kir::Value> write = threadPredicates(out, op.nest);
    if (!op.block.any() && !op.grid.any()) {
      all.insert(all.end(), write.begin(), write.end());
      return kir::conjunction(all);
    }
    op.input_predicate = kir::conjunction(all);
    if (ctx_.memoryOf(out) != MemoryType::Local) {
      write.insert(write.end(), bounds.iteration.begin(), bounds.iteration.end());
      if (op.grid.any()) {
        write.push_back(kir::symbol(op.grid_flag, {.role = kir::SymbolRole::Other, .order = 50}));
      }
    }
    // The reduction itself always runs; writing its result is what the predicate guards.
    op.write_predicate = kir::conjunction(write);
    return kir::boolean(true);
  }

  const LowerContext& ctx_;
  std::map<const TensorView*, std::set<std::string>> grid_flags_;
  std::map<std::string, kir::ParallelMask> flag_masks_;
};

}  // namespace

kir::Kernel insertPredicates(kir::Kernel kernel, const LowerContext& ctx) {
  Predicator(ctx, kernel).run(kernel.body);
  return kernel;
}

}  // namespace braze::lower
