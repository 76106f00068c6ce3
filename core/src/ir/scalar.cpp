#include "braze/ir/scalar.h"

#include "braze/ir/fusion.h"

namespace braze {

Scalar::Scalar(Fusion& fusion, DataType dtype, ScalarValue value)
    : Val(fusion, StatementKind::Scalar, dtype), value_(castScalar(value, dtype)) {}

Scalar::Scalar(Fusion& fusion, DataType dtype) : Val(fusion, StatementKind::Scalar, dtype) {}

std::optional<int64_t> Scalar::constantInt() const {
  if (!value_ || std::holds_alternative<double>(*value_)) return std::nullopt;
  return toInt64(*value_);
}

bool Scalar::isConstantEqualTo(int64_t v) const {
  if (!value_) return false;
  if (const double* d = std::get_if<double>(&*value_)) return *d == static_cast<double>(v);
  return toInt64(*value_) == v;
}

std::string Scalar::name() const {
  if (value_) return toString(*value_);
  return "s" + std::to_string(number());
}

Statement* Scalar::cloneInto(Fusion& target, const CloneMap& /*map*/) const {
  if (value_) return target.create<Scalar>(dtype(), *value_);
  return target.create<Scalar>(dtype());
}

}  // namespace braze
