#pragma once

// Bit-level conversions between double and the 16-bit float formats, internal to the
// evaluator. Decoding is exact. Encoding expects a value that is already representable in the
// target format (rounded with roundToPrecision): it only rearranges bits and never rounds, so
// that there is exactly one rounding rule in Braze.

#include <bit>
#include <cmath>
#include <cstdint>

namespace braze::eval_detail {

/// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
inline double decodeFloat16(uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa + 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

inline uint16_t encodeFloat16(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  if (std::isnan(value)) return static_cast<uint16_t>(sign | 0x7e00u);
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude) || magnitude > 65504.0) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x1p-14) {
    // Subnormal (or zero): the mantissa counts units of 2^-24.
    const auto mantissa = static_cast<uint16_t>(std::nearbyint(magnitude * 0x1p24));
    return static_cast<uint16_t>(sign | mantissa);  // 0x400 carries into the smallest normal
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent
  auto mantissa = static_cast<uint32_t>(std::nearbyint((fraction * 2.0 - 1.0) * 1024.0));
  int biased = exponent - 1 + 15;
  if (mantissa == 0x400) {  // only for a value that was not rounded beforehand
    mantissa = 0;
    ++biased;
  }
  if (biased >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(biased) << 10) | mantissa);
}

/// bfloat16: the upper half of an IEEE binary32.
inline double decodeBFloat16(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

inline uint16_t encodeBFloat16(double value) {
  if (std::isnan(value)) return std::signbit(value) ? 0xffc0u : 0x7fc0u;
  // A value already rounded to bfloat16 converts to float exactly, with zero low bits.
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(value)) >> 16);
}

/// float8_e4m3fn: 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits; no infinity, and only
/// the all-ones exponent and mantissa (0x7f, 0xff) is NaN, so 0x78..0x7e are finite (256..448).
inline double decodeFloat8E4M3fn(uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  double magnitude;
  if (exponent == 0xf && mantissa == 0x7) {
    magnitude = NAN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -9);  // zero or subnormal
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa + 0x8), exponent - 10);
  }
  return negative ? -magnitude : magnitude;
}

/// `value` already rounded to float8_e4m3fn (a NaN for anything out of range): NaN keeps its sign
/// (0x7f or 0xff), as PyTorch's conversion.
inline uint8_t encodeFloat8E4M3fn(double value) {
  const uint8_t sign = std::signbit(value) ? 0x80u : 0u;
  const double magnitude = std::fabs(value);
  if (std::isnan(value) || std::isinf(value) || magnitude > 448.0)
    return static_cast<uint8_t>(sign | 0x7fu);
  if (magnitude < 0x1p-6) {
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(magnitude * 0x1p9)));
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent
  const auto mantissa = static_cast<uint32_t>(std::nearbyint((fraction * 2.0 - 1.0) * 8.0));
  const auto biased = static_cast<uint32_t>(exponent - 1 + 7);
  return static_cast<uint8_t>(sign | (biased << 3) | mantissa);
}

/// float8_e5m2: 1 sign bit, 5 exponent bits (bias 15), 2 mantissa bits: the upper byte of an
/// IEEE binary16, with its infinities and NaNs.
inline double decodeFloat8E5M2(uint8_t bits) {
  return decodeFloat16(static_cast<uint16_t>(bits) << 8);
}

/// `value` already rounded to float8_e5m2. NaN is 0x7f or 0xff, as PyTorch's conversion.
inline uint8_t encodeFloat8E5M2(double value) {
  if (std::isnan(value)) return std::signbit(value) ? 0xffu : 0x7fu;
  // A value rounded to e5m2 is exact in binary16 with the low 8 bits zero.
  return static_cast<uint8_t>(encodeFloat16(value) >> 8);
}

}  // namespace braze::eval_detail
