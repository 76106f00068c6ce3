#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "braze/ir/fusion.h"
#include "braze/ir/scalar_value.h"

namespace braze {

/// An argument of an op builder: a Val of a fusion (tensor or scalar) or a C++ constant.
/// Constants are accepted wherever a value is, so `add(x, 1.0)`, `clamp(x, 0, 6)` and
/// `where(mask, x, 0.0)` read as they would in PyTorch. A constant becomes a Scalar of its
/// natural dtype (bool, int64, float64) and takes part in type promotion as a Python scalar
/// does.
class Operand {
 public:
  Operand(Val* val) : val_(val) {}  // NOLINT: implicit by design
  Operand(bool value) : constant_(value) {}
  Operand(int value) : constant_(static_cast<int64_t>(value)) {}
  Operand(int64_t value) : constant_(value) {}
  Operand(double value) : constant_(value) {}
  Operand(float value) : constant_(static_cast<double>(value)) {}

  bool isVal() const { return val_ != nullptr; }
  Val* val() const { return val_; }
  const ScalarValue& constant() const { return constant_; }
  bool isTensor() const;
  /// Operand kind for type promotion: Tensor, Scalar (a scalar Val) or Literal (a constant).
  TypedOperand typed() const;
  DataType dtype() const;

  /// The Val this operand stands for inside `fusion` (constants are created there). A Val of
  /// another fusion is refused, naming `op` and `argument`.
  Val* materialize(Fusion& fusion, std::string_view op, std::string_view argument) const;

 private:
  Val* val_ = nullptr;
  ScalarValue constant_ = int64_t{0};
};

/// The fusion the operands of `op` live in: that of the first Val among them. Fails, naming
/// `op`, when no operand is a Val (a fusion cannot be inferred from constants alone; build a
/// constant with Fusion::constant) or when Vals come from different fusions.
Fusion& fusionOf(std::string_view op, std::initializer_list<Operand> operands);

}  // namespace braze
