#include "braze/ops/elementwise_semantics.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "braze/error.h"

namespace braze {
namespace {

// ---------------------------------------------------------------------------------------------
// Rounding to narrower float formats.

/// A binary floating-point format, described by what rounding needs.
struct FloatFormat {
  int mantissa_bits;  ///< Stored fraction bits (the significand has one more).
  int min_exponent;   ///< Exponent of the smallest normal number; below it, subnormals.
  double max_finite;
  /// float8_e4m3fn has no infinity: what rounds past max_finite, and infinity itself, is NaN.
  bool overflow_to_nan = false;
};

constexpr FloatFormat kFloat16{10, -14, 65504.0};
constexpr FloatFormat kBFloat16{7, -126, 0x1.fep127};
constexpr FloatFormat kFloat32{23, -126, static_cast<double>(FLT_MAX)};
constexpr FloatFormat kFloat8E4M3fn{3, -6, 448.0, true};
constexpr FloatFormat kFloat8E5M2{2, -14, 57344.0};

const FloatFormat* formatOf(DataType dtype) {
  switch (dtype) {
    case DataType::Float16:
      return &kFloat16;
    case DataType::BFloat16:
      return &kBFloat16;
    case DataType::Float32:
      return &kFloat32;
    case DataType::Float8_e4m3fn:
      return &kFloat8E4M3fn;
    case DataType::Float8_e5m2:
      return &kFloat8E5M2;
    case DataType::Bool:
    case DataType::Int32:
    case DataType::Int64:
    case DataType::Float64:
    case DataType::Index:
      return nullptr;
  }
  return nullptr;
}

/// Round half to even of a non-negative finite double. `value - floor(value)` is exact for a
/// non-negative value (it is the value's low bits), which a signed version could not promise.
double roundHalfEvenNonNegative(double value) {
  const double floor = std::floor(value);
  const double fraction = value - floor;
  if (fraction > 0.5) return floor + 1.0;
  if (fraction < 0.5) return floor;
  return std::fmod(floor, 2.0) == 0.0 ? floor : floor + 1.0;
}

/// Round half to even, as torch.round: sign and signed zeros kept, nan and inf unchanged.
double roundHalfEven(double value) {
  if (!std::isfinite(value)) return value;
  return std::copysign(roundHalfEvenNonNegative(std::fabs(value)), value);
}

/// The nearest value of `format` to `value` (ties to even), overflowing to inf and flushing
/// nothing: subnormals of the format are kept. The quantum (the value of one unit in the last
/// place) is a power of two, so dividing by it and multiplying back is exact.
double roundToFormat(double value, const FloatFormat& format) {
  const double overflow = format.overflow_to_nan ? std::numeric_limits<double>::quiet_NaN()
                                                 : std::numeric_limits<double>::infinity();
  if (std::isinf(value)) return std::copysign(overflow, value);
  if (std::isnan(value) || value == 0.0) return value;
  const double magnitude = std::fabs(value);
  const int exponent = std::max(std::ilogb(magnitude), format.min_exponent);
  const double quantum = std::ldexp(1.0, exponent - format.mantissa_bits);
  double rounded = roundHalfEvenNonNegative(magnitude / quantum) * quantum;
  if (rounded > format.max_finite) rounded = overflow;
  return std::copysign(rounded, value);
}

/// An integer rounded straight to `format`. Going through double first would round twice for
/// magnitudes above 2^53 and could land on the wrong neighbour.
double roundIntegerToFormat(int64_t value, const FloatFormat& format) {
  const uint64_t magnitude =
      value < 0 ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const int significand_bits = format.mantissa_bits + 1;
  const int width = 64 - std::countl_zero(magnitude);
  double rounded = 0.0;
  if (width <= significand_bits) {
    rounded = static_cast<double>(magnitude);
  } else {
    const int shift = width - significand_bits;
    uint64_t significand = magnitude >> shift;
    const uint64_t remainder = magnitude & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (remainder > half || (remainder == half && (significand & 1) != 0)) ++significand;
    rounded = std::ldexp(static_cast<double>(significand), shift);
  }
  if (rounded > format.max_finite) rounded = std::numeric_limits<double>::infinity();
  return value < 0 ? -rounded : rounded;
}

// ---------------------------------------------------------------------------------------------
// Integer arithmetic that wraps like the GPU instead of being undefined.

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrapNeg(int64_t a) {
  return wrapSub(0, a);
}

void checkNonZeroDivisor(OpKind op, int64_t a, int64_t b) {
  if (b == 0) {
    BRAZE_THROW() << op << ": integer division by zero (" << a << " and divisor 0); guard the "
                  << "divisor (e.g. with where) or compute in a floating type";
  }
}

/// Truncating division; INT64_MIN / -1 wraps to INT64_MIN.
int64_t truncDiv(OpKind op, int64_t a, int64_t b) {
  checkNonZeroDivisor(op, a, b);
  if (b == -1) return wrapNeg(a);
  return a / b;
}

/// C's %: the sign of the dividend.
int64_t truncRem(OpKind op, int64_t a, int64_t b) {
  checkNonZeroDivisor(op, a, b);
  if (b == -1) return 0;
  return a % b;
}

/// Python's %: the sign of the divisor.
int64_t pythonRem(OpKind op, int64_t a, int64_t b) {
  int64_t r = truncRem(op, a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t ceilDiv(OpKind op, int64_t a, int64_t b) {
  const int64_t q = truncDiv(op, a, b);
  const int64_t r = truncRem(op, a, b);
  // Truncation rounded toward zero; the exact quotient was positive, so round up.
  if (r != 0 && ((a < 0) == (b < 0))) return q + 1;
  return q;
}

/// torch.pow on integers: square and multiply, wrapping; negative exponents give the integer
/// part of 1 / a^-b.
int64_t intPow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent % 2 != 0) ? -1 : 1;
    return 0;
  }
  int64_t result = 1;
  uint64_t e = static_cast<uint64_t>(exponent);
  int64_t b = base;
  while (e != 0) {
    if (e & 1) result = wrapMul(result, b);
    e >>= 1;
    if (e != 0) b = wrapMul(b, b);
  }
  return result;
}

/// torch.bitwise_left_shift: a shift out of [0, 64) gives 0.
int64_t leftShift(int64_t a, int64_t b) {
  if (b < 0 || b >= 64) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}

/// torch.bitwise_right_shift: arithmetic; a shift out of [0, 63) fills with the sign.
int64_t rightShift(int64_t a, int64_t b) {
  if (b < 0 || b >= 63) return a >> 63;
  return a >> b;
}

/// Logical (unsigned) right shift of a's two's-complement bits in a `bits`-wide integer (32 or
/// 64); a count outside [0, bits) gives 0, as nvFuser's logical_right_shift.
int64_t logicalRightShift(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return 0;
  if (bits == 32) return static_cast<int64_t>(static_cast<uint32_t>(a) >> b);
  return static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
}

/// torch.gcd on the magnitudes as uint64, so |INT64_MIN| = 2^63 is no undefined behavior; the
/// one result above INT64_MAX, 2^63, wraps to INT64_MIN (and an int32 result of 2^31 wraps to
/// INT32_MIN when the caller narrows it), as the GPU's unsigned computation does.
int64_t gcd(int64_t a, int64_t b) {
  auto magnitude = [](int64_t v) {
    return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  };
  uint64_t x = magnitude(a);
  uint64_t y = magnitude(b);
  while (y != 0) {
    const uint64_t r = x % y;
    x = y;
    y = r;
  }
  return static_cast<int64_t>(x);
}

/// std::nextafter in the result's dtype: float32 steps by a float32 ulp. Builders allow only
/// float32 and float64 results; anything else steps in double, to stay total.
double nextafter(double a, double b, DataType result_dtype) {
  if (result_dtype == DataType::Float32) {
    return static_cast<double>(std::nextafter(static_cast<float>(a), static_cast<float>(b)));
  }
  return std::nextafter(a, b);
}

// ---------------------------------------------------------------------------------------------
// Unary ops.

constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrtTwoOverPi = 0.79788456080286535588;

double gelu(double x, bool tanh_approximation) {
  if (tanh_approximation) {
    const double inner = kSqrtTwoOverPi * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(inner));
  }
  return x * 0.5 * (1.0 + std::erf(x * kSqrtHalf));
}

double unaryFloat(OpKind op, double x, const ElementwiseAttributes& attributes) {
  switch (op) {
    case OpKind::Neg:
      return -x;
    case OpKind::Abs:
      return std::fabs(x);
    case OpKind::Exp:
      return std::exp(x);
    case OpKind::Exp2:
      return std::exp2(x);
    case OpKind::Expm1:
      return std::expm1(x);
    case OpKind::Log:
      return std::log(x);
    case OpKind::Log2:
      return std::log2(x);
    case OpKind::Log1p:
      return std::log1p(x);
    case OpKind::Sqrt:
      return std::sqrt(x);
    case OpKind::Rsqrt:
      return 1.0 / std::sqrt(x);
    case OpKind::Reciprocal:
      return 1.0 / x;
    case OpKind::Sin:
      return std::sin(x);
    case OpKind::Cos:
      return std::cos(x);
    case OpKind::Tan:
      return std::tan(x);
    case OpKind::Tanh:
      return std::tanh(x);
    case OpKind::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    // nan propagates, and -0.0 becomes +0.0, as torch.relu (clamp_min).
    case OpKind::Relu:
      return std::isnan(x) || x > 0.0 ? x : 0.0;
    case OpKind::Gelu:
      return gelu(x, attributes.gelu_tanh);
    case OpKind::Silu:
      return x / (1.0 + std::exp(-x));
    case OpKind::Erf:
      return std::erf(x);
    case OpKind::Erfc:
      return std::erfc(x);
    case OpKind::Floor:
      return std::floor(x);
    case OpKind::Ceil:
      return std::ceil(x);
    case OpKind::Round:
      return roundHalfEven(x);
    case OpKind::Trunc:
      return std::trunc(x);
    case OpKind::Sign:
      return std::isnan(x) ? x : static_cast<double>((x > 0.0) - (x < 0.0));
    // Bitwise ops have no float meaning; builders refuse them. Stay total: act on the integer.
    case OpKind::BitwiseNot:
      return static_cast<double>(~toInt64(x));
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << op << " is not a unary op";
  __builtin_unreachable();
}

ScalarValue unary(OpKind op, const ScalarValue& input, DataType result_dtype,
                  const ElementwiseAttributes& attributes) {
  const auto* as_double = std::get_if<double>(&input);
  switch (op) {
    case OpKind::IsNan:
      return as_double != nullptr && std::isnan(*as_double);
    case OpKind::IsInf:
      return as_double != nullptr && std::isinf(*as_double);
    case OpKind::IsFinite:
      return as_double == nullptr || std::isfinite(*as_double);
    case OpKind::LogicalNot:
      return !toBool(input);
    // The sign bit: -0.0 and a nan whose sign bit is set count as negative.
    case OpKind::Signbit:
      return as_double != nullptr ? std::signbit(*as_double) : toInt64(input) < 0;
    default:
      break;
  }
  // A float input of a non-float result (never built by the op builders) also computes in
  // double, so that floor(-2.5) stays -3 whatever the result dtype.
  if (isFloatingPoint(result_dtype) || as_double != nullptr) {
    return unaryFloat(op, toDouble(input), attributes);
  }
  // ~true is false; the int64 ~1 would be -2, which reads as true.
  if (isBoolean(result_dtype) && op == OpKind::BitwiseNot) return !toBool(input);
  const int64_t x = toInt64(input);
  switch (op) {
    case OpKind::Neg:
      return wrapNeg(x);
    case OpKind::Abs:
      return x < 0 ? wrapNeg(x) : x;
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Trunc:
      return x;
    case OpKind::Sign:
      return static_cast<int64_t>((x > 0) - (x < 0));
    case OpKind::Relu:
      return std::max<int64_t>(x, 0);
    case OpKind::BitwiseNot:
      return ~x;
    // A floating op asked for an integer result: compute in double, then truncate.
    default:
      return unaryFloat(op, toDouble(input), attributes);
  }
}

// ---------------------------------------------------------------------------------------------
// Cast.

ScalarValue cast(const ScalarValue& input, DataType target) {
  if (isBoolean(target)) return toBool(input);
  if (isIntegral(target)) {
    const auto* as_double = std::get_if<double>(&input);
    // Floats truncate and saturate to the target's range (nan gives 0), as the GPU's cvt.rzi
    // does; integers wrap to the target's width.
    if (as_double != nullptr && target == DataType::Int32) {
      if (std::isnan(*as_double)) return int64_t{0};
      const double clamped = std::clamp(std::trunc(*as_double), static_cast<double>(INT32_MIN),
                                        static_cast<double>(INT32_MAX));
      return static_cast<int64_t>(clamped);
    }
    return castScalar(input, target);
  }
  if (const FloatFormat* format = formatOf(target); format != nullptr) {
    // float8 from an integer goes through float32, as PyTorch's (and the kernel's) conversion.
    if (!std::holds_alternative<double>(input)) {
      if (isFloat8(target))
        return roundToPrecision(roundIntegerToFormat(toInt64(input), kFloat32), target);
      return roundIntegerToFormat(toInt64(input), *format);
    }
    return roundToPrecision(toDouble(input), target);
  }
  return toDouble(input);
}

// ---------------------------------------------------------------------------------------------
// Binary ops.

/// max/min that propagate nan, as torch.maximum and torch.minimum.
double maximumFloat(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}
double minimumFloat(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

int64_t binaryInt(OpKind op, int64_t a, int64_t b) {
  switch (op) {
    case OpKind::Add:
      return wrapAdd(a, b);
    case OpKind::Sub:
      return wrapSub(a, b);
    case OpKind::Mul:
      return wrapMul(a, b);
    case OpKind::Div:
      return truncDiv(op, a, b);
    case OpKind::Remainder:
      return pythonRem(op, a, b);
    case OpKind::Fmod:
      return truncRem(op, a, b);
    case OpKind::CeilDiv:
      return ceilDiv(op, a, b);
    case OpKind::Pow:
      return intPow(a, b);
    case OpKind::Maximum:
      return std::max(a, b);
    case OpKind::Minimum:
      return std::min(a, b);
    case OpKind::BitwiseAnd:
      return a & b;
    case OpKind::BitwiseOr:
      return a | b;
    case OpKind::BitwiseXor:
      return a ^ b;
    case OpKind::LeftShift:
      return leftShift(a, b);
    case OpKind::RightShift:
      return rightShift(a, b);
    case OpKind::Gcd:
      return gcd(a, b);
    case OpKind::LogicalRightShift:
      return logicalRightShift(a, b, 64);
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << op << " has no integer form";
  __builtin_unreachable();
}

double binaryFloat(OpKind op, double a, double b) {
  switch (op) {
    case OpKind::Add:
      return a + b;
    case OpKind::Sub:
      return a - b;
    case OpKind::Mul:
      return a * b;
    case OpKind::Div:
    case OpKind::TrueDiv:
      return a / b;
    case OpKind::Remainder: {
      // torch.remainder: fmod, moved into the divisor's sign.
      double r = std::fmod(a, b);
      if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
      return r;
    }
    case OpKind::Fmod:
      return std::fmod(a, b);
    case OpKind::CeilDiv:
      return std::ceil(a / b);
    case OpKind::Pow:
      return std::pow(a, b);
    case OpKind::Maximum:
      return maximumFloat(a, b);
    case OpKind::Minimum:
      return minimumFloat(a, b);
    case OpKind::Atan2:
      return std::atan2(a, b);
    // Bitwise ops and shifts have no float meaning; builders refuse them. Stay total.
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor:
    case OpKind::LeftShift:
    case OpKind::RightShift:
    case OpKind::LogicalRightShift:
    case OpKind::Gcd:
      return static_cast<double>(binaryInt(op, toInt64(a), toInt64(b)));
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << op << " is not an arithmetic binary op";
  __builtin_unreachable();
}

template <typename T>
bool compare(OpKind op, T a, T b) {
  switch (op) {
    case OpKind::Eq:
      return a == b;
    case OpKind::Ne:
      return a != b;
    case OpKind::Lt:
      return a < b;
    case OpKind::Le:
      return a <= b;
    case OpKind::Gt:
      return a > b;
    case OpKind::Ge:
      return a >= b;
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << op << " is not a comparison";
  __builtin_unreachable();
}

ScalarValue binary(OpKind op, const ScalarValue& a, const ScalarValue& b, DataType result_dtype) {
  switch (op) {
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
      // Compared in the wider of the two held categories; int64 against int64 stays exact.
      if (std::holds_alternative<double>(a) || std::holds_alternative<double>(b)) {
        return compare(op, toDouble(a), toDouble(b));
      }
      return compare(op, toInt64(a), toInt64(b));
    case OpKind::LogicalAnd:
      return toBool(a) && toBool(b);
    case OpKind::LogicalOr:
      return toBool(a) || toBool(b);
    case OpKind::LogicalXor:
      return toBool(a) != toBool(b);
    case OpKind::TrueDiv:
    case OpKind::Atan2:
      return binaryFloat(op, toDouble(a), toDouble(b));
    case OpKind::Nextafter:
      return nextafter(toDouble(a), toDouble(b), result_dtype);
    // Integer-only ops whose result depends on the result's width; the builders refuse
    // floating operands.
    case OpKind::LogicalRightShift:
      if (!std::holds_alternative<double>(a) && !std::holds_alternative<double>(b)) {
        return logicalRightShift(toInt64(a), toInt64(b), result_dtype == DataType::Int32 ? 32 : 64);
      }
      break;
    default:
      break;
  }
  if (isFloatingPoint(result_dtype) || std::holds_alternative<double>(a) ||
      std::holds_alternative<double>(b)) {
    return binaryFloat(op, toDouble(a), toDouble(b));
  }
  // Bool results compute on 0/1 and are read back as nonzero, which makes and/or/xor logical.
  return binaryInt(op, toInt64(a), toInt64(b));
}

// ---------------------------------------------------------------------------------------------
// Ternary ops.

ScalarValue ternary(OpKind op, std::span<const ScalarValue> in, DataType result_dtype) {
  if (op == OpKind::Where) return toBool(in[0]) ? in[1] : in[2];
  const bool any_double = std::any_of(
      in.begin(), in.end(), [](const ScalarValue& v) { return std::holds_alternative<double>(v); });
  if (isFloatingPoint(result_dtype) || any_double || op == OpKind::Lerp) {
    const double x = toDouble(in[0]);
    const double y = toDouble(in[1]);
    const double z = toDouble(in[2]);
    switch (op) {
      case OpKind::Clamp:
        return minimumFloat(maximumFloat(x, y), z);
      case OpKind::Lerp: {
        // torch.lerp: from whichever end is nearer, for accuracy near weight 1.
        const double diff = y - x;
        return std::fabs(z) < 0.5 ? x + z * diff : y - diff * (1.0 - z);
      }
      case OpKind::Addcmul:
        return x + toDouble(in[3]) * y * z;
      default:
        break;
    }
  } else {
    const int64_t x = toInt64(in[0]);
    const int64_t y = toInt64(in[1]);
    const int64_t z = toInt64(in[2]);
    switch (op) {
      case OpKind::Clamp:
        return std::min(std::max(x, y), z);
      case OpKind::Addcmul:
        return wrapAdd(x, wrapMul(wrapMul(toInt64(in[3]), y), z));
      default:
        break;
    }
  }
  BRAZE_INTERNAL_CHECK(false) << op << " is not a ternary op";
  __builtin_unreachable();
}

}  // namespace

ScalarValue evaluateElementwise(OpKind op, std::span<const ScalarValue> inputs,
                                DataType result_dtype, const ElementwiseAttributes& attributes) {
  BRAZE_INTERNAL_CHECK(isElementwise(op)) << "evaluateElementwise: " << op << " is not elementwise";
  BRAZE_INTERNAL_CHECK(inputs.size() == static_cast<size_t>(elementwiseArity(op)))
      << "evaluateElementwise: " << op << " takes " << elementwiseArity(op) << " inputs, got "
      << inputs.size();
  ScalarValue result;
  switch (familyOf(op)) {
    case OpFamily::Cast:
      return cast(inputs[0], result_dtype);
    case OpFamily::Unary:
      result = unary(op, inputs[0], result_dtype, attributes);
      break;
    case OpFamily::Binary:
      result = binary(op, inputs[0], inputs[1], result_dtype);
      break;
    default:
      result = ternary(op, inputs, result_dtype);
      break;
  }
  // Into result_dtype's category; an int32 result wraps to 32 bits as the GPU's would.
  return castScalar(result, result_dtype);
}

double roundToPrecision(double value, DataType dtype) {
  switch (dtype) {
    case DataType::Float32:
      return static_cast<double>(static_cast<float>(value));
    case DataType::Float16:
      return roundToFormat(value, kFloat16);
    case DataType::BFloat16:
      return roundToFormat(value, kBFloat16);
    // Through float32 first, as PyTorch converts wider values (and kernels compute in float32).
    case DataType::Float8_e4m3fn:
      return roundToFormat(roundToFormat(value, kFloat32), kFloat8E4M3fn);
    case DataType::Float8_e5m2:
      return roundToFormat(roundToFormat(value, kFloat32), kFloat8E5M2);
    case DataType::Bool:
    case DataType::Int32:
    case DataType::Int64:
    case DataType::Float64:
    case DataType::Index:
      return value;
  }
  return value;
}

}  // namespace braze
