// allocate: storage for every Local (register) and Shared intermediate. A tensor inlined at
// position k lives just inside the innermost loop among its first k axes, so it is recomputed
// and overwritten each iteration of that loop and no larger than the axes after k:
//
//   for i2 in 0..T0.size[0]:       T1 inlined at 1, T1's axis 1 has extent 4
//     float T1[4];
//     for i3 in 0..4: T1[i3] = ...
//
// Shared tensors are declared once at the top of the kernel. Global intermediates are kernel
// parameters the executor allocates (see LowerContext::parameters).

#include <algorithm>
#include <map>

#include "lower/passes.h"

namespace braze::lower {

namespace {

using LoopChain = std::vector<kir::ForLoop*>;

std::vector<const TensorView*> outputsOf(const kir::Stmt& stmt) {
  std::vector<const TensorView*> out;
  if (const auto* op = stmt.dynCast<kir::TensorOp>()) out.push_back(op->output.tv);
  if (const auto* op = stmt.dynCast<kir::InitOp>()) out.push_back(op->output.tv);
  if (const auto* op = stmt.dynCast<kir::ReductionOp>()) {
    for (const kir::TensorAccess& a : op->outputs) out.push_back(a.tv);
  }
  return out;
}

std::vector<const TensorView*> inputsOf(const kir::Stmt& stmt) {
  std::vector<const TensorView*> in;
  if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
    for (const kir::Operand& operand : op->inputs) {
      if (operand.kind == kir::Operand::Kind::Tensor) in.push_back(operand.access.tv);
    }
  }
  if (const auto* op = stmt.dynCast<kir::ReductionOp>()) in.push_back(op->input.access.tv);
  return in;
}

void walk(kir::Scope& scope, LoopChain& chain,
          const std::function<void(kir::Stmt&, const LoopChain&)>& visit) {
  for (kir::StmtPtr& stmt : scope) {
    visit(*stmt, chain);
    if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
      chain.push_back(loop);
      walk(loop->body, chain, visit);
      chain.pop_back();
    } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      walk(branch->then_body, chain, visit);
      walk(branch->else_body, chain, visit);
    }
  }
}

}  // namespace

kir::Kernel allocate(kir::Kernel kernel, const LowerContext& ctx) {
  std::vector<const TensorView*> order;
  std::map<const TensorView*, kir::Scope*> scope_of;
  LoopChain chain;
  walk(kernel.body, chain, [&](kir::Stmt& stmt, const LoopChain& loops) {
    for (const TensorView* tv : outputsOf(stmt)) {
      if (ctx.memoryOf(tv) == MemoryType::Global || scope_of.count(tv)) continue;
      kir::Scope* scope = &kernel.body;
      if (ctx.memoryOf(tv) == MemoryType::Local) {
        std::vector<int64_t> groups;
        for (int64_t j = 0; j < ctx.graph().inlinePositionOf(tv); ++j)
          groups.push_back(ctx.graph().loopGroup(tv->loopAxis(j)));
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
          const int64_t group = ctx.graph().loopGroup((*it)->id);
          if (std::find(groups.begin(), groups.end(), group) != groups.end()) {
            scope = &(*it)->body;
            break;
          }
        }
      }
      scope_of.emplace(tv, scope);
      order.push_back(tv);
    }
  });

  // Registers must be read inside the loop they are allocated in.
  walk(kernel.body, chain,
       [&](kir::Stmt& stmt, const LoopChain& loops) {
         for (const TensorView* tv : inputsOf(stmt)) {
           if (ctx.memoryOf(tv) != MemoryType::Local) continue;
           auto it = scope_of.find(tv);
           if (it == scope_of.end() || it->second == &kernel.body) continue;
           const bool inside = std::any_of(loops.begin(), loops.end(), [&](kir::ForLoop* loop) {
             return &loop->body == it->second;
           });
           BRAZE_USER_CHECK(inside)
               << "lowering: " << tv->name()
               << " is kept in registers inside the loops it is inlined "
               << "into (position " << ctx.graph().inlinePositionOf(tv)
               << "), but one of its readers runs "
               << "outside those loops; inline the reader into the same loops or lower the inline "
                  "position of "
               << tv->name();
         }
       });

  std::map<kir::Scope*, std::vector<kir::StmtPtr>> inserts;
  for (const TensorView* tv : order) {
    const AllocationLayout& layout = ctx.layoutOf(tv);
    auto alloc = std::make_unique<kir::Allocate>();
    alloc->tv = tv;
    alloc->memory = ctx.memoryOf(tv);
    alloc->dtype = tv->dtype();
    alloc->size = layout.size;
    inserts[scope_of[tv]].push_back(std::move(alloc));
  }
  for (auto& [scope, allocs] : inserts) {
    scope->insert(scope->begin(), std::make_move_iterator(allocs.begin()),
                  std::make_move_iterator(allocs.end()));
  }
  return kernel;
}

}  // namespace braze::lower
