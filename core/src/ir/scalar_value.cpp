#include "braze/ir/scalar_value.h"

#include <bit>
#include <charconv>
#include <cmath>

namespace braze {

double toDouble(const ScalarValue& value) {
  return std::visit([](auto v) { return static_cast<double>(v); }, value);
}

int64_t toInt64(const ScalarValue& value) {
  return std::visit(
      [](auto v) -> int64_t {
        if constexpr (std::is_same_v<decltype(v), double>) {
          // Out-of-range and nan conversions are undefined in C++; pin them.
          if (std::isnan(v)) return 0;
          if (v >= 9.2233720368547758e18) return INT64_MAX;
          if (v <= -9.2233720368547758e18) return INT64_MIN;
        }
        return static_cast<int64_t>(v);
      },
      value);
}

bool toBool(const ScalarValue& value) {
  return std::visit([](auto v) { return v != 0; }, value);
}

ScalarValue castScalar(const ScalarValue& value, DataType dtype) {
  if (isBoolean(dtype)) return toBool(value);
  if (isIntegral(dtype)) {
    const int64_t v = toInt64(value);
    return dtype == DataType::Int32 ? static_cast<int64_t>(static_cast<int32_t>(v)) : v;
  }
  return toDouble(value);
}

DataType naturalDataType(const ScalarValue& value) {
  if (std::holds_alternative<bool>(value)) return DataType::Bool;
  if (std::holds_alternative<int64_t>(value)) return DataType::Int64;
  return DataType::Float64;
}

std::string toString(const ScalarValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  const double d = std::get<double>(value);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest text that reads back as the same double: 0.1 prints as 0.1, 10.0 as 10.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), d);
  std::string text(buffer, result.ptr);
  // Keep floats recognizable as floats in printed IR.
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

bool identical(const ScalarValue& a, const ScalarValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* da = std::get_if<double>(&a)) {
    return std::bit_cast<uint64_t>(*da) == std::bit_cast<uint64_t>(std::get<double>(b));
  }
  return a == b;
}

}  // namespace braze
