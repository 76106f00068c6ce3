#include "braze/sched/indexed_inputs.h"

#include <algorithm>
#include <sstream>

namespace braze {

bool isIndexedOperand(const Expr& expr, size_t input) {
  switch (expr.op()) {
    case OpKind::Select:
    case OpKind::IndexSelect:
    case OpKind::Gather:
      return input == 0;
    default:
      return false;
  }
}

std::vector<TensorView*> indexedTensors(const Fusion& fusion) {
  std::vector<TensorView*> tensors;
  for (const Expr* expr : fusion.exprs()) {
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      auto* tv = expr->input(i)->dynCast<TensorView>();
      if (tv == nullptr || !isIndexedOperand(*expr, i)) continue;
      if (std::find(tensors.begin(), tensors.end(), tv) == tensors.end()) tensors.push_back(tv);
    }
  }
  return tensors;
}

std::optional<std::string> indexedIntermediateProblem(const Fusion& fusion) {
  for (const Expr* expr : fusion.exprs()) {
    const auto* tv = expr->inputs().empty() ? nullptr : expr->input(0)->dynCast<TensorView>();
    if (tv == nullptr || !isIndexedOperand(*expr, 0) || fusion.isInput(tv)) continue;
    std::ostringstream os;
    os << expr->op() << " reads " << tv->name() << " at data-dependent positions, and "
       << tv->name()
       << " is computed in this fusion: a kernel can only read such a tensor from global memory "
          "written before it started, so its producer must be another kernel";
    return os.str();
  }
  return std::nullopt;
}

namespace {

// The extent's value, or nullopt when it depends on an unbound scalar.
std::optional<int64_t> extentValue(const IterDomain* id, ExpressionEvaluator& evaluator) {
  const std::optional<ScalarValue> value = evaluator.evaluate(id->logicalExtent());
  if (!value) return std::nullopt;
  return toInt64(*value);
}

}  // namespace

std::optional<std::string> emptyIndexedDimProblem(const Fusion& fusion,
                                                  ExpressionEvaluator& evaluator) {
  for (const Expr* expr : fusion.exprs()) {
    if (!isIndexedOperand(*expr, 0)) continue;
    const auto* x = expr->input(0)->as<TensorView>();
    const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
    const std::optional<int64_t> size = extentValue(x->logicalNoReductions().at(dim), evaluator);
    if (!size || *size != 0) continue;
    int64_t elements = 1;
    for (const IterDomain* id : expr->output(0)->as<TensorView>()->logicalNoReductions()) {
      elements *= extentValue(id, evaluator).value_or(1);
    }
    if (elements == 0) continue;
    std::ostringstream os;
    os << expr->op() << " reads dim " << dim << " of " << x->name()
       << ", which has size 0 for these arguments, while its output has " << elements
       << " elements: every index is out of range";
    return os.str();
  }
  return std::nullopt;
}

}  // namespace braze
