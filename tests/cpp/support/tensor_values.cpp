#include "support/tensor_values.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "support/multi_index.h"

namespace braze::test {
namespace {

/// Rounds to a binary float format with `precision` significant bits whose smallest normal
/// number is 0.5 * 2^min_exponent (frexp's convention); subnormals keep the quantum of the
/// smallest normal binade.
double roundToBinary(double value, int precision, int min_exponent, double max_finite) {
  if (!std::isfinite(value) || value == 0.0) return value;
  int exponent = 0;
  std::frexp(value, &exponent);
  const int quantum = std::max(exponent, min_exponent) - precision;
  // nearbyint follows the default rounding mode: to nearest, ties to even.
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
  if (std::fabs(rounded) > max_finite) return std::copysign(INFINITY, value);
  return rounded;
}

constexpr double kFloat16Max = 65504.0;
const double kBFloat16Max = std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127

double wrapToInt32(double value) {
  const auto wide = static_cast<int64_t>(value);
  return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(wide)));
}

double decodeFloat16(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

uint16_t encodeFloat16(double value) {
  const double rounded = roundTo(DataType::Float16, value);
  if (std::isnan(rounded)) return 0x7e00;
  const uint16_t sign = std::signbit(rounded) ? 0x8000 : 0;
  const double magnitude = std::fabs(rounded);
  if (std::isinf(magnitude)) return sign | 0x7c00;
  if (magnitude < std::ldexp(1.0, -14)) {
    return sign | static_cast<uint16_t>(std::ldexp(magnitude, 24));
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent
  const auto biased = static_cast<uint16_t>(exponent - 1 + 15);
  const auto mantissa = static_cast<uint16_t>(std::ldexp(fraction, 11) - 1024);
  return sign | static_cast<uint16_t>(biased << 10) | mantissa;
}

double decodeBFloat16(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

uint16_t encodeBFloat16(double value) {
  const double rounded = roundTo(DataType::BFloat16, value);
  if (std::isnan(rounded)) return 0x7fc0;
  const auto narrow = static_cast<float>(rounded);  // exact: bfloat16 values are floats
  uint32_t wide;
  std::memcpy(&wide, &narrow, sizeof(wide));
  return static_cast<uint16_t>(wide >> 16);
}

// float8 from its definition: `exponent_bits` (bias 2^(e-1) - 1), `mantissa_bits`; e4m3fn has
// no infinity and only the all-ones pattern is NaN, e5m2 is IEEE-like.
double decodeFloat8(uint8_t bits, int exponent_bits, int mantissa_bits, bool ieee) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int top = (1 << exponent_bits) - 1;
  const int exponent = (bits >> mantissa_bits) & top;
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  double magnitude;
  if (ieee && exponent == top) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else if (!ieee && exponent == top && mantissa == (1 << mantissa_bits) - 1) {
    magnitude = NAN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
  }
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

// The code of a value already rounded to the format (NaN: the all-ones pattern with its sign).
uint8_t encodeFloat8(double rounded, int exponent_bits, int mantissa_bits) {
  const uint8_t sign = std::signbit(rounded) ? 0x80 : 0;
  if (std::isnan(rounded)) return sign | 0x7f;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const double magnitude = std::fabs(rounded);
  if (std::isinf(magnitude)) return sign | static_cast<uint8_t>(0x7f & ~((1 << mantissa_bits) - 1));
  if (magnitude < std::ldexp(1.0, 1 - bias)) {
    return sign | static_cast<uint8_t>(std::ldexp(magnitude, bias - 1 + mantissa_bits));
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);
  const auto biased = static_cast<uint8_t>(exponent - 1 + bias);
  const auto mantissa =
      static_cast<uint8_t>(std::ldexp(fraction, mantissa_bits + 1) - (1 << mantissa_bits));
  return sign | static_cast<uint8_t>(biased << mantissa_bits) | mantissa;
}

// Through float32 first (as PyTorch); e4m3fn overflows (and maps infinity) to NaN.
double roundToFloat8(double value, int precision, int min_exponent, double max_finite,
                     bool overflow_to_nan) {
  const double single = roundToBinary(value, 24, -125, FLT_MAX);
  const double rounded = roundToBinary(single, precision, min_exponent, max_finite);
  return overflow_to_nan && std::isinf(rounded) ? std::copysign(NAN, rounded) : rounded;
}

template <typename T>
T loadAs(const char* address) {
  T value;
  std::memcpy(&value, address, sizeof(T));
  return value;
}

template <typename T>
void storeAs(char* address, T value) {
  std::memcpy(address, &value, sizeof(T));
}

double load(DataType dtype, const char* address) {
  switch (dtype) {
    case DataType::Bool:
      return loadAs<uint8_t>(address) != 0 ? 1.0 : 0.0;
    case DataType::Int32:
      return loadAs<int32_t>(address);
    case DataType::Int64:
    case DataType::Index:
      return static_cast<double>(loadAs<int64_t>(address));
    case DataType::Float16:
      return decodeFloat16(loadAs<uint16_t>(address));
    case DataType::BFloat16:
      return decodeBFloat16(loadAs<uint16_t>(address));
    case DataType::Float32:
      return loadAs<float>(address);
    case DataType::Float64:
      return loadAs<double>(address);
    case DataType::Float8_e4m3fn:
      return decodeFloat8(loadAs<uint8_t>(address), 4, 3, false);
    case DataType::Float8_e5m2:
      return decodeFloat8(loadAs<uint8_t>(address), 5, 2, true);
  }
  return NAN;
}

void store(DataType dtype, char* address, double value) {
  const double rounded = roundTo(dtype, value);
  switch (dtype) {
    case DataType::Bool:
      storeAs<uint8_t>(address, rounded != 0.0 ? 1 : 0);
      return;
    case DataType::Int32:
      storeAs<int32_t>(address, static_cast<int32_t>(rounded));
      return;
    case DataType::Int64:
    case DataType::Index:
      storeAs<int64_t>(address, static_cast<int64_t>(rounded));
      return;
    case DataType::Float16:
      storeAs<uint16_t>(address, encodeFloat16(value));
      return;
    case DataType::BFloat16:
      storeAs<uint16_t>(address, encodeBFloat16(value));
      return;
    case DataType::Float32:
      storeAs<float>(address, static_cast<float>(rounded));
      return;
    case DataType::Float64:
      storeAs<double>(address, rounded);
      return;
    case DataType::Float8_e4m3fn:
      storeAs<uint8_t>(address, encodeFloat8(rounded, 4, 3));
      return;
    case DataType::Float8_e5m2:
      storeAs<uint8_t>(address, encodeFloat8(rounded, 5, 2));
      return;
  }
}

/// Address of row-major element `flat` of `tensor`, through its strides.
char* elementAddress(const HostTensor& tensor, int64_t flat) {
  const std::vector<int64_t> index = unravelIndex(flat, tensor.sizes());
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * tensor.strides()[d];
  return static_cast<char*>(tensor.data()) + offset * sizeInBytes(tensor.dtype());
}

}  // namespace

double roundTo(DataType dtype, double value) {
  switch (dtype) {
    case DataType::Bool:
      return value != 0.0 ? 1.0 : 0.0;
    case DataType::Int32:
      return std::isnan(value) ? 0.0 : wrapToInt32(std::trunc(value));
    case DataType::Int64:
    case DataType::Index:
      return std::isnan(value) ? 0.0 : std::trunc(value);
    case DataType::Float16:
      return roundToBinary(value, 11, -13, kFloat16Max);
    case DataType::BFloat16:
      return roundToBinary(value, 8, -125, kBFloat16Max);
    case DataType::Float32:
      return roundToBinary(value, 24, -125, FLT_MAX);
    case DataType::Float64:
      return value;
    case DataType::Float8_e4m3fn:
      return roundToFloat8(value, 4, -5, 448.0, true);
    case DataType::Float8_e5m2:
      return roundToFloat8(value, 3, -13, 57344.0, false);
  }
  return value;
}

std::vector<double> valuesOf(const HostTensor& tensor) {
  const int64_t count = numelOf(tensor.sizes());
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[i] = load(tensor.dtype(), elementAddress(tensor, i));
  return values;
}

void writeValues(const HostTensor& tensor, const std::vector<double>& values) {
  const int64_t count = numelOf(tensor.sizes());
  EXPECT_EQ(static_cast<int64_t>(values.size()), count)
      << "writeValues: " << values.size() << " values for " << tensor.describe();
  for (int64_t i = 0; i < count && i < static_cast<int64_t>(values.size()); ++i) {
    store(tensor.dtype(), elementAddress(tensor, i), values[i]);
  }
}

HostTensor tensorOf(DataType dtype, std::vector<int64_t> sizes, const std::vector<double>& values) {
  HostTensor tensor = HostTensor::empty(dtype, std::move(sizes));
  writeValues(tensor, values);
  return tensor;
}

HostTensor scalarTensor(DataType dtype, double value) {
  return tensorOf(dtype, {}, {value});
}

std::vector<int64_t> integersOf(const HostTensor& tensor) {
  EXPECT_TRUE(isIntegral(tensor.dtype())) << "integersOf: " << tensor.describe();
  const int64_t count = numelOf(tensor.sizes());
  std::vector<int64_t> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const char* address = elementAddress(tensor, i);
    values[i] =
        tensor.dtype() == DataType::Int32 ? loadAs<int32_t>(address) : loadAs<int64_t>(address);
  }
  return values;
}

HostTensor tensorOfIntegers(DataType dtype, std::vector<int64_t> sizes,
                            const std::vector<int64_t>& values) {
  EXPECT_TRUE(isIntegral(dtype)) << "tensorOfIntegers: " << dtype;
  HostTensor tensor = HostTensor::empty(dtype, std::move(sizes));
  EXPECT_EQ(static_cast<int64_t>(values.size()), numelOf(tensor.sizes()));
  for (int64_t i = 0; i < numelOf(tensor.sizes()) && i < static_cast<int64_t>(values.size()); ++i) {
    char* address = elementAddress(tensor, i);
    if (dtype == DataType::Int32) {
      storeAs<int32_t>(address, static_cast<int32_t>(static_cast<uint32_t>(values[i])));
    } else {
      storeAs<int64_t>(address, values[i]);
    }
  }
  return tensor;
}

}  // namespace braze::test
