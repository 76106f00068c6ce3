#include "lower/stmt_effects.h"

#include <algorithm>

namespace braze::lower {

void touchedTensors(const kir::Stmt& stmt, std::set<const TensorView*>& touched) {
  const auto operand = [&](const kir::Operand& o) {
    if (o.kind == kir::Operand::Kind::Tensor) touched.insert(o.access.tv);
  };
  if (const auto* loop = stmt.dynCast<kir::ForLoop>()) {
    for (const kir::StmtPtr& s : loop->body) touchedTensors(*s, touched);
  } else if (const auto* branch = stmt.dynCast<kir::IfThenElse>()) {
    for (const kir::StmtPtr& s : branch->then_body) touchedTensors(*s, touched);
    for (const kir::StmtPtr& s : branch->else_body) touchedTensors(*s, touched);
  } else if (const auto* alloc = stmt.dynCast<kir::Allocate>()) {
    touched.insert(alloc->tv);
  } else if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
    touched.insert(op->output.tv);
    for (const kir::Operand& o : op->inputs) operand(o);
  } else if (const auto* init = stmt.dynCast<kir::InitOp>()) {
    touched.insert(init->output.tv);
  } else if (const auto* red = stmt.dynCast<kir::ReductionOp>()) {
    for (const kir::TensorAccess& a : red->outputs) touched.insert(a.tv);
    operand(red->input);
  } else if (const auto* copy = stmt.dynCast<kir::VectorCopy>()) {
    touched.insert(copy->dst.tv);
    touched.insert(copy->src.tv);
  }
}

void writtenTensors(const kir::Stmt& stmt, std::set<const TensorView*>& written) {
  if (const auto* loop = stmt.dynCast<kir::ForLoop>()) {
    for (const kir::StmtPtr& s : loop->body) writtenTensors(*s, written);
  } else if (const auto* branch = stmt.dynCast<kir::IfThenElse>()) {
    for (const kir::StmtPtr& s : branch->then_body) writtenTensors(*s, written);
    for (const kir::StmtPtr& s : branch->else_body) writtenTensors(*s, written);
  } else if (const auto* alloc = stmt.dynCast<kir::Allocate>()) {
    written.insert(alloc->tv);
  } else if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
    written.insert(op->output.tv);
  } else if (const auto* init = stmt.dynCast<kir::InitOp>()) {
    written.insert(init->output.tv);
  } else if (const auto* red = stmt.dynCast<kir::ReductionOp>()) {
    for (const kir::TensorAccess& a : red->outputs) written.insert(a.tv);
  } else if (const auto* copy = stmt.dynCast<kir::VectorCopy>()) {
    written.insert(copy->dst.tv);
  }
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
