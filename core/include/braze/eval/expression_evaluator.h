#pragma once

#include <optional>
#include <unordered_map>

#include "braze/ir/fusion.h"
#include "braze/ir/scalar_value.h"

namespace braze {

/// Evaluates scalar Vals: constants, bound symbolic values (fusion scalar inputs, tensor
/// extents bound from actual input sizes) and scalar Exprs over them, with the same
/// elementwise semantics as everything else. Results are memoized.
class ExpressionEvaluator {
 public:
  /// Binds a symbolic scalar. Rebinding to a different value is refused (the message names the
  /// scalar and both values), which is how contradictory input sizes are caught.
  void bind(const Val* val, ScalarValue value);
  bool isBound(const Val* val) const;

  /// The value of `val`, or nullopt when it depends on something unbound.
  std::optional<ScalarValue> evaluate(const Val* val);
  /// As evaluate(), but an unbound dependency is an Error naming `val` and `what` (for example
  /// "extent of dim 1 of T3").
  ScalarValue evaluateOrThrow(const Val* val, std::string_view what);

 private:
  std::unordered_map<const Val*, ScalarValue> values_;
};

}  // namespace braze
