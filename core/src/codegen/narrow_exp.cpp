#include "codegen/narrow_exp.h"

#include <unordered_map>

#include "braze/ir/scalar.h"
#include "braze/ir/scalar_value.h"
#include "codegen/op_printer.h"

namespace braze::codegen {
namespace {

bool isCopy(OpKind op) {
  switch (op) {
    case OpKind::Set:
    case OpKind::SegmentSet:
    case OpKind::StrideOrder:
    case OpKind::Broadcast:
    case OpKind::Expand:
    case OpKind::Squeeze:
      return true;
    default:
      return false;
  }
}

// Known to be positive (or zero where a sum is empty) from how it is computed: what cannot
// cancel when added.
class PositiveValues {
 public:
  bool operator()(const Val* v) {
    if (const auto* scalar = v->dynCast<Scalar>(); scalar != nullptr && scalar->isConstant())
      return toDouble(*scalar->value()) > 0;
    const Expr* definition = v->definition();
    if (definition == nullptr) return false;
    auto [it, inserted] = memo_.try_emplace(v, false);
    if (!inserted) return it->second;
    const bool positive = positiveResult(*definition);
    memo_[v] = positive;
    return positive;
  }

 private:
  bool positiveResult(const Expr& expr) {
    const auto every_input = [&] {
      for (const Val* input : expr.inputs()) {
        if (!(*this)(input)) return false;
      }
      return true;
    };
    switch (expr.op()) {
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Sigmoid:
        return true;
      case OpKind::Reciprocal:
      case OpKind::Sqrt:
      case OpKind::Rsqrt:
      case OpKind::Mul:
      case OpKind::Div:
      case OpKind::TrueDiv:
      case OpKind::Add:
      case OpKind::Sum:
      case OpKind::Max:
      case OpKind::Min:
      case OpKind::Maximum:
      case OpKind::Minimum:
        return every_input();
      case OpKind::Cast:
        return isFloatingPoint(expr.output(0)->dtype()) && every_input();
      default:
        return isCopy(expr.op()) && every_input();
    }
  }

  std::unordered_map<const Val*, bool> memo_;
};

// Whether every output that `v` (carrying a relative error) reaches is rounded to a 16-bit or
// narrower float, through ops that keep the error relative.
class NarrowOutputsOnly {
 public:
  bool operator()(const Val* v) {
    auto [it, inserted] = memo_.try_emplace(v, false);
    if (!inserted) return it->second;
    const bool narrow = reachesOnlyNarrow(v);
    memo_[v] = narrow;
    return narrow;
  }

 private:
  bool reachesOnlyNarrow(const Val* v) {
    if (v->fusion().isOutput(v) && !isReducedPrecision(v->dtype())) return false;
    for (const Expr* use : v->uses()) {
      if (!useKeepsErrorRelative(*use, v)) return false;
      if (use->op() == OpKind::Cast && isReducedPrecision(use->output(0)->dtype())) continue;
      for (const Val* output : use->outputs()) {
        if (!(*this)(output)) return false;
      }
    }
    return true;
  }

  bool useKeepsErrorRelative(const Expr& use, const Val* v) {
    switch (use.op()) {
      case OpKind::Mul:
      case OpKind::Div:
      case OpKind::TrueDiv:
      case OpKind::Reciprocal:
      case OpKind::Max:
      case OpKind::Min:
      case OpKind::Maximum:
      case OpKind::Minimum:
        return true;
      case OpKind::Cast:
        return isFloatingPoint(use.output(0)->dtype());
      case OpKind::Sum:
        return positive_(v);
      case OpKind::Add:
        return positive_(use.input(0)) && positive_(use.input(1));
      default:
        return isCopy(use.op());
    }
  }

  PositiveValues positive_;
  std::unordered_map<const Val*, bool> memo_;
};

}  // namespace

bool expReachesOnlyNarrowOutputs(const Expr& exp) {
  if (exp.op() != OpKind::Exp || computeDtype(exp.output(0)->dtype()) != DataType::Float32)
    return false;
  return NarrowOutputsOnly{}(exp.output(0));
}

}  // namespace braze::codegen
