#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>

#include "braze/ir/data_type.h"

namespace braze {

/// The value of a constant scalar, or of a scalar known at evaluation time. Integers of every
/// width (and Index) are held as int64, floats of every width as double.
using ScalarValue = std::variant<bool, int64_t, double>;

/// The category a dtype's values are held in: Bool -> bool, integral -> int64, float -> double.
ScalarValue castScalar(const ScalarValue& value, DataType dtype);

/// The value as a double / int64 / bool, converting like C++ would.
double toDouble(const ScalarValue& value);
int64_t toInt64(const ScalarValue& value);
bool toBool(const ScalarValue& value);

/// The natural dtype of a C++ literal: bool, int64 or float64. Used for constants the user
/// passes without a dtype; elementwise promotion treats them as Python scalars.
DataType naturalDataType(const ScalarValue& value);

/// Deterministic text: "true", "3", "0.5", "inf", "nan"; doubles print with enough digits to
/// round-trip.
std::string toString(const ScalarValue& value);

/// Bitwise equality for doubles (so nan == nan and 0.0 != -0.0): structural comparison of IR
/// must treat two identical constants as equal.
bool identical(const ScalarValue& a, const ScalarValue& b);

}  // namespace braze
