#include "braze/lower/kernel_ir.h"

namespace braze::kir {

Scope cloneScope(const Scope& scope) {
  Scope copy;
  copy.reserve(scope.size());
  for (const StmtPtr& stmt : scope) copy.push_back(stmt->clone());
  return copy;
}

ForLoop::ForLoop(const ForLoop& other)
    : StmtBase(other),
      index(other.index),
      extent(other.extent),
      parallel_type(other.parallel_type),
      id(other.id),
      unroll(other.unroll),
      reversed(other.reversed),
      carried(other.carried),
      body(cloneScope(other.body)) {}

IfThenElse::IfThenElse(const IfThenElse& other)
    : StmtBase(other),
      predicate(other.predicate),
      predicate_kind(other.predicate_kind),
      then_body(cloneScope(other.then_body)),
      else_body(cloneScope(other.else_body)) {}

int launchSlot(ParallelType type) {
  switch (type) {
    case ParallelType::BIDx:
      return 0;
    case ParallelType::BIDy:
      return 1;
    case ParallelType::BIDz:
      return 2;
    case ParallelType::TIDx:
      return 3;
    case ParallelType::TIDy:
      return 4;
    case ParallelType::TIDz:
      return 5;
    default:
      return -1;
  }
}

std::optional<int64_t> constantBlockThreads(const Kernel& kernel) {
  int64_t threads = 1;
  for (ParallelType type : {ParallelType::TIDx, ParallelType::TIDy, ParallelType::TIDz}) {
    const LaunchDim& dim = kernel.launch[static_cast<size_t>(launchSlot(type))];
    if (!dim.used) continue;
    const std::optional<int64_t> size = dim.size_in_kernel.constantValue();
    if (!size) return std::nullopt;
    threads *= *size;
  }
  return threads;
}

void forEachStmt(const Scope& scope, const std::function<void(const Stmt&)>& visit) {
  for (const StmtPtr& stmt : scope) {
    visit(*stmt);
    if (const auto* loop = stmt->dynCast<ForLoop>()) {
      forEachStmt(loop->body, visit);
    } else if (const auto* branch = stmt->dynCast<IfThenElse>()) {
      forEachStmt(branch->then_body, visit);
      forEachStmt(branch->else_body, visit);
    }
  }
}

}  // namespace braze::kir
