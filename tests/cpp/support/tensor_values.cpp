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
