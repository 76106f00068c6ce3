#pragma once

#include <optional>
#include <string>

#include "braze/ir/scalar_value.h"
#include "braze/ir/statement.h"

namespace braze {

/// A scalar Val: a constant (`value()` is set), a symbolic value bound at run time (a fusion
/// scalar input or a tensor extent), or the result of a scalar Expr over other scalars.
class Scalar : public Val {
 public:
  static bool classof(const Statement* s) { return s->statementKind() == StatementKind::Scalar; }

  /// A constant; the value is stored cast to `dtype`'s category.
  Scalar(Fusion& fusion, DataType dtype, ScalarValue value);
  /// A symbolic scalar.
  Scalar(Fusion& fusion, DataType dtype);

  bool isConstant() const { return value_.has_value(); }
  const std::optional<ScalarValue>& value() const { return value_; }
  /// The constant as an int64, or nullopt when symbolic or not integral/bool.
  std::optional<int64_t> constantInt() const;
  /// True for a constant equal to `v` (compared in the scalar's own category).
  bool isConstantEqualTo(int64_t v) const;

  /// Constants print as their value ("3", "0.5"); symbolic scalars as "s<number>".
  std::string name() const override;

 private:
  Statement* cloneInto(Fusion& target, const CloneMap& map) const override;
  std::optional<ScalarValue> value_;
};

}  // namespace braze
