#include "lower/stmt_effects.h"

#include <algorithm>

namespace braze::lower {

namespace {

// The tensors `stmt` (and what it contains) writes or allocates, and with `reads` those it
// reads too.
void collectTensors(const kir::Stmt& stmt, bool reads, std::set<const TensorView*>& out) {
  const auto operand = [&](const kir::Operand& o) {
    if (reads && o.kind == kir::Operand::Kind::Tensor) out.insert(o.access.tv);
  };
  if (const auto* loop = stmt.dynCast<kir::ForLoop>()) {
    for (const kir::StmtPtr& s : loop->body) collectTensors(*s, reads, out);
  } else if (const auto* branch = stmt.dynCast<kir::IfThenElse>()) {
    for (const kir::StmtPtr& s : branch->then_body) collectTensors(*s, reads, out);
    for (const kir::StmtPtr& s : branch->else_body) collectTensors(*s, reads, out);
  } else if (const auto* alloc = stmt.dynCast<kir::Allocate>()) {
    out.insert(alloc->tv);
  } else if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
    out.insert(op->output.tv);
    for (const kir::Operand& o : op->inputs) operand(o);
  } else if (const auto* init = stmt.dynCast<kir::InitOp>()) {
    out.insert(init->output.tv);
  } else if (const auto* red = stmt.dynCast<kir::ReductionOp>()) {
    for (const kir::TensorAccess& a : red->outputs) out.insert(a.tv);
    operand(red->input);
  } else if (const auto* copy = stmt.dynCast<kir::VectorCopy>()) {
    out.insert(copy->dst.tv);
    if (reads) out.insert(copy->src.tv);
  }
}

}  // namespace

void touchedTensors(const kir::Stmt& stmt, std::set<const TensorView*>& touched) {
  collectTensors(stmt, /*reads=*/true, touched);
}

void writtenTensors(const kir::Stmt& stmt, std::set<const TensorView*>& written) {
  collectTensors(stmt, /*reads=*/false, written);
}

bool synchronizes(const kir::Stmt& stmt) {
  if (const auto* loop = stmt.dynCast<kir::ForLoop>()) {
    return std::any_of(loop->body.begin(), loop->body.end(),
                       [](const kir::StmtPtr& s) { return synchronizes(*s); });
  }
  if (const auto* branch = stmt.dynCast<kir::IfThenElse>()) {
    const auto any = [](const kir::Scope& scope) {
      return std::any_of(scope.begin(), scope.end(),
                         [](const kir::StmtPtr& s) { return synchronizes(*s); });
    };
    return any(branch->then_body) || any(branch->else_body);
  }
  if (const auto* red = stmt.dynCast<kir::ReductionOp>())
    return red->block.any() || red->grid.any();
  return stmt.kind() == kir::StmtKind::Sync;
}

}  // namespace braze::lower
