#include "braze/sched/broadcast_reciprocals.h"

#include <vector>

#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"

namespace braze {

namespace {

// The Broadcast that defines `divisor` and inserts at least one dim, or null.
Expr* broadcastDefinition(const TensorView* divisor) {
  Expr* definition = divisor->definition();
  if (definition == nullptr || definition->op() != OpKind::Broadcast) return nullptr;
  for (const bool inserted : definition->attribute<std::vector<bool>>("flags")) {
    if (inserted) return definition;
  }
  return nullptr;
}

// a / n by a scalar becomes a * (1 / n), the reciprocal in the quotient's dtype.
bool multiplyByScalarReciprocal(Fusion& fusion, Expr* division) {
  auto* dividend = division->input(0)->dynCast<TensorView>();
  auto* divisor = division->input(1)->dynCast<Scalar>();
  auto* quotient = division->output(0)->dynCast<TensorView>();
  if (dividend == nullptr || divisor == nullptr || quotient == nullptr) return false;
  const DataType dtype = quotient->dtype();
  if (!isFloatingPoint(dtype) || dividend->dtype() != dtype) return false;
  Val* widened = divisor->dtype() == dtype ? divisor : cast(Operand(divisor), dtype);
  Val* inverse = reciprocal(Operand(widened));
  division->detach();
  fusion.create<Expr>(OpKind::Mul, std::vector<Val*>{dividend, inverse},
                      std::vector<Val*>{quotient});
  return true;
}

}  // namespace

int multiplyByBroadcastReciprocals(Fusion& fusion) {
  int rewritten = 0;
  for (Expr* division : fusion.exprs()) {
    if (division->op() != OpKind::Div) continue;
    if (multiplyByScalarReciprocal(fusion, division)) {
      ++rewritten;
      continue;
    }
    auto* dividend = division->input(0)->dynCast<TensorView>();
    auto* divisor = division->input(1)->dynCast<TensorView>();
    auto* quotient = division->output(0)->dynCast<TensorView>();
    if (dividend == nullptr || divisor == nullptr || quotient == nullptr) continue;
    const DataType dtype = quotient->dtype();
    if (!isFloatingPoint(dtype) || dividend->dtype() != dtype || divisor->dtype() != dtype)
      continue;
    Expr* broadcast_expr = broadcastDefinition(divisor);
    if (broadcast_expr == nullptr) continue;
    auto* per_row = broadcast_expr->input(0)->as<TensorView>();
    const auto flags = broadcast_expr->attribute<std::vector<bool>>("flags");

    TensorView* inverse = broadcast(reciprocal(per_row), flags);
    division->detach();
    fusion.create<Expr>(OpKind::Mul, std::vector<Val*>{dividend, inverse},
                        std::vector<Val*>{quotient});
    // The old broadcast is dead when the division was its only reader.
    if (divisor->uses().empty() && !fusion.isOutput(divisor)) broadcast_expr->detach();
    ++rewritten;
  }
  return rewritten;
}

}  // namespace braze
