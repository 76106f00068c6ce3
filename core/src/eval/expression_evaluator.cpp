#include "braze/eval/expression_evaluator.h"

#include <unordered_set>

#include "braze/ops/elementwise_semantics.h"
#include "eval/elementwise_attributes.h"

namespace braze {

namespace {

const Scalar& asScalar(const Val* val, std::string_view what) {
  BRAZE_USER_CHECK(val != nullptr) << "ExpressionEvaluator::" << what << ": the value is null";
  BRAZE_USER_CHECK(val->isA<Scalar>())
      << "ExpressionEvaluator::" << what << ": " << val->name()
      << " is not a scalar; only scalar Vals (constants, symbolic scalars and scalar "
         "expressions over them) can be evaluated or bound";
  return *val->as<Scalar>();
}

// The symbolic leaves `val` depends on that have no value yet, in discovery order.
std::vector<const Val*> unboundLeaves(const Val* val,
                                      const std::unordered_map<const Val*, ScalarValue>& values) {
  std::vector<const Val*> leaves;
  std::unordered_set<const Val*> visited;
  std::vector<const Val*> stack{val};
  while (!stack.empty()) {
    const Val* top = stack.back();
    stack.pop_back();
    if (!visited.insert(top).second || values.count(top)) continue;
    if (const auto* scalar = top->dynCast<Scalar>(); scalar != nullptr && scalar->isConstant()) {
      continue;
    }
    if (top->definition() == nullptr) {
      leaves.push_back(top);
      continue;
    }
    const auto& inputs = top->definition()->inputs();
    for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) stack.push_back(*it);
  }
  return leaves;
}

}  // namespace

void ExpressionEvaluator::bind(const Val* val, ScalarValue value) {
  const Scalar& scalar = asScalar(val, "bind");
  const ScalarValue cast = castScalar(value, scalar.dtype());
  if (scalar.isConstant()) {
    BRAZE_USER_CHECK(identical(*scalar.value(), cast))
        << "ExpressionEvaluator::bind: the constant " << scalar.name() << " cannot be bound to "
        << toString(cast);
    return;
  }
  std::optional<ScalarValue> known;
  if (auto it = values_.find(val); it != values_.end()) {
    known = it->second;
  } else if (val->definition() != nullptr) {
    // A computed scalar may be bound (for example an extent read from data), but never to a
    // value that contradicts what its definition gives.
    known = evaluate(val);
  }
  if (known.has_value()) {
    BRAZE_USER_CHECK(identical(*known, cast))
        << "ExpressionEvaluator::bind: " << val->name() << " is already "
        << (val->definition() != nullptr ? "computed as " : "bound to ") << toString(*known)
        << "; cannot rebind it to " << toString(cast);
    return;
  }
  values_.emplace(val, cast);
}

bool ExpressionEvaluator::isBound(const Val* val) const {
  return values_.count(val) != 0;
}

std::optional<ScalarValue> ExpressionEvaluator::evaluate(const Val* val) {
  const Scalar& scalar = asScalar(val, "evaluate");
  if (auto it = values_.find(val); it != values_.end()) return it->second;
  if (scalar.isConstant()) return *scalar.value();

  // Iterative post-order walk over definitions: extent chains can be long (a cat of many
  // tensors sums their extents), and recursion would bound their length by the stack.
  std::vector<const Val*> stack{val};
  while (!stack.empty()) {
    const Val* top = stack.back();
    if (values_.count(top)) {
      stack.pop_back();
      continue;
    }
    const Scalar& current = asScalar(top, "evaluate");
    if (current.isConstant()) {
      values_.emplace(top, *current.value());
      stack.pop_back();
      continue;
    }
    const Expr* definition = top->definition();
    if (definition == nullptr) return std::nullopt;  // an unbound symbolic leaf
    BRAZE_INTERNAL_CHECK(isElementwise(definition->op()))
        << "scalar " << top->name() << " is defined by " << definition->op()
        << ", which is not an elementwise op";
    bool ready = true;
    for (const Val* input : definition->inputs()) {
      if (!values_.count(input)) {
        ready = false;
        stack.push_back(input);
      }
    }
    if (!ready) continue;
    std::vector<ScalarValue> operands;
    operands.reserve(definition->inputs().size());
    for (const Val* input : definition->inputs()) operands.push_back(values_.at(input));
    values_.emplace(top, evaluateElementwise(definition->op(), operands, top->dtype(),
                                             eval_detail::elementwiseAttributesOf(*definition)));
    stack.pop_back();
  }
  return values_.at(val);
}

ScalarValue ExpressionEvaluator::evaluateOrThrow(const Val* val, std::string_view what) {
  if (std::optional<ScalarValue> value = evaluate(val)) return *value;
  std::ostringstream leaves;
  const std::vector<const Val*> unbound = unboundLeaves(val, values_);
  for (size_t i = 0; i < unbound.size(); ++i) leaves << (i ? ", " : "") << unbound[i]->name();
  BRAZE_THROW() << "cannot evaluate " << what << " (" << val->name() << "): it depends on "
                << leaves.str() << (unbound.size() == 1 ? ", which is" : ", which are")
                << " not bound; bind fusion scalar inputs and input tensor sizes first";
}

}  // namespace braze
