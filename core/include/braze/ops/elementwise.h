#pragma once

#include <type_traits>

#include "braze/ir/fusion.h"
#include "braze/ops/operand.h"

namespace braze {

/// Elementwise op builders. Each works on tensors and on scalars: with a tensor operand the
/// result is a TensorView whose shape is the broadcast of the operands' shapes (dims are
/// matched from the right; a Broadcast dim takes the other operand's extent; two Iteration
/// dims must be the same dim or the mismatch is reported when sizes are known); with only
/// scalars the result is a Scalar, and constant scalars fold to a constant.
///
/// Result dtypes follow PyTorch: arithmetic promotes its operands (promoteOperands);
/// comparisons, logical ops and isnan/isinf/isfinite give bool; exp, log, sin, sqrt, sigmoid,
/// gelu, erf and the other transcendental ops (and truediv) give the promoted floating type
/// (float32 for integer and bool inputs); bitwise ops and shifts need integral or bool
/// operands; abs, neg, floor, ceil, round, trunc, sign, relu keep the input dtype; signbit
/// gives bool; gcd and logical_right_shift need integral operands; nextafter needs a float32 or
/// float64 result.
///
/// Every builder validates its operands and throws an Error that names the op, the argument
/// and what was wrong.

// Unary ops: `TensorView* f(TensorView*)` and `Val* f(Operand)`.
#define BRAZE_DECLARE_UNARY_OP(name) \
  TensorView* name(TensorView* x);   \
  Val* name(Operand x);

BRAZE_DECLARE_UNARY_OP(neg)
BRAZE_DECLARE_UNARY_OP(abs)
BRAZE_DECLARE_UNARY_OP(exp)
BRAZE_DECLARE_UNARY_OP(exp2)
BRAZE_DECLARE_UNARY_OP(expm1)
BRAZE_DECLARE_UNARY_OP(log)
BRAZE_DECLARE_UNARY_OP(log2)
BRAZE_DECLARE_UNARY_OP(log1p)
BRAZE_DECLARE_UNARY_OP(sqrt)
BRAZE_DECLARE_UNARY_OP(rsqrt)
BRAZE_DECLARE_UNARY_OP(reciprocal)
BRAZE_DECLARE_UNARY_OP(sin)
BRAZE_DECLARE_UNARY_OP(cos)
BRAZE_DECLARE_UNARY_OP(tan)
BRAZE_DECLARE_UNARY_OP(tanh)
BRAZE_DECLARE_UNARY_OP(sigmoid)
BRAZE_DECLARE_UNARY_OP(relu)
BRAZE_DECLARE_UNARY_OP(silu)
BRAZE_DECLARE_UNARY_OP(erf)
BRAZE_DECLARE_UNARY_OP(erfc)
BRAZE_DECLARE_UNARY_OP(floor)
BRAZE_DECLARE_UNARY_OP(ceil)
BRAZE_DECLARE_UNARY_OP(round)
BRAZE_DECLARE_UNARY_OP(trunc)
BRAZE_DECLARE_UNARY_OP(sign)
BRAZE_DECLARE_UNARY_OP(isnan)
BRAZE_DECLARE_UNARY_OP(isinf)
BRAZE_DECLARE_UNARY_OP(isfinite)
/// torch.signbit: bool, true when the sign bit is set, so for -0.0, -inf and a nan whose sign
/// bit is set too; for int32/int64/index, x < 0. A bool x is refused, as torch refuses it
/// ("signbit_cpu" not implemented for 'Bool').
BRAZE_DECLARE_UNARY_OP(signbit)
BRAZE_DECLARE_UNARY_OP(logical_not)
BRAZE_DECLARE_UNARY_OP(bitwise_not)
#undef BRAZE_DECLARE_UNARY_OP

/// GELU, exact (erf) or with the tanh approximation, as torch.nn.functional.gelu's
/// `approximate` argument: "none" or "tanh".
enum class GeluApproximation : uint8_t { None, Tanh };
TensorView* gelu(TensorView* x, GeluApproximation approximation = GeluApproximation::None);
Val* gelu(Operand x, GeluApproximation approximation = GeluApproximation::None);

/// Converts to `dtype` (see evaluateElementwise for rounding). Casting to the same dtype still
/// creates an op, so a user's explicit cast shows in the IR.
TensorView* cast(TensorView* x, DataType dtype);
Val* cast(Operand x, DataType dtype);

/// A C++ number passed straight to an op builder: bool, any integer, float or double.
template <typename T>
concept ArithmeticConstant = std::is_arithmetic_v<T>;

/// The Operand of a C++ number: bool stays bool, integers become int64, floats double.
template <ArithmeticConstant T>
Operand constantOperand(T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return Operand(value);
  } else if constexpr (std::is_integral_v<T>) {
    return Operand(static_cast<int64_t>(value));
  } else {
    return Operand(static_cast<double>(value));
  }
}

// Binary ops. Four overloads each so that tensors, scalars and constants mix freely and a
// tensor in either position gives a TensorView back. The templates take C++ numbers exactly:
// without them a literal 0 (`add(x, 0)`, `maximum(x, 0)`) is a null pointer constant and would
// pick the TensorView* overload instead of the constant.
#define BRAZE_DECLARE_BINARY_OP(name)                    \
  TensorView* name(TensorView* a, TensorView* b);        \
  TensorView* name(TensorView* a, Operand b);            \
  TensorView* name(Operand a, TensorView* b);            \
  Val* name(Operand a, Operand b);                       \
  template <ArithmeticConstant B>                        \
  TensorView* name(TensorView* a, B b) {                 \
    return name(a, constantOperand(b));                  \
  }                                                      \
  template <ArithmeticConstant A>                        \
  TensorView* name(A a, TensorView* b) {                 \
    return name(constantOperand(a), b);                  \
  }                                                      \
  template <ArithmeticConstant B>                        \
  Val* name(Operand a, B b) {                            \
    return name(a, constantOperand(b));                  \
  }                                                      \
  template <ArithmeticConstant A>                        \
  Val* name(A a, Operand b) {                            \
    return name(constantOperand(a), b);                  \
  }                                                      \
  template <ArithmeticConstant A, ArithmeticConstant B>  \
  Val* name(A a, B b) {                                  \
    return name(constantOperand(a), constantOperand(b)); \
  }

BRAZE_DECLARE_BINARY_OP(add)
BRAZE_DECLARE_BINARY_OP(sub)
BRAZE_DECLARE_BINARY_OP(mul)
/// div: C semantics (integers truncate toward zero; floats divide); truediv always gives a
/// floating result, as Python's `/`.
BRAZE_DECLARE_BINARY_OP(div)
BRAZE_DECLARE_BINARY_OP(truediv)
/// remainder: Python's `%` (sign of the divisor); fmod: C's fmod (sign of the dividend).
BRAZE_DECLARE_BINARY_OP(remainder)
BRAZE_DECLARE_BINARY_OP(fmod)
/// Integer ceil(a / b), for extent arithmetic; both operands integral.
BRAZE_DECLARE_BINARY_OP(ceil_div)
BRAZE_DECLARE_BINARY_OP(pow)
BRAZE_DECLARE_BINARY_OP(maximum)
BRAZE_DECLARE_BINARY_OP(minimum)
BRAZE_DECLARE_BINARY_OP(atan2)
/// torch.gcd: both operands integral (int32, int64 or index; float and bool operands are
/// refused, naming the argument); the result has the promoted dtype and is non-negative, with
/// gcd(0, 0) = 0 and gcd(a, 0) = |a|. It is computed on the magnitudes as unsigned integers of
/// the result's width, so the minimum value is no undefined behavior: the one result that does
/// not fit, 2^63 for int64 (gcd(INT64_MIN, 0) and gcd(INT64_MIN, INT64_MIN)) or 2^31 for int32,
/// wraps as two's complement to INT64_MIN (INT32_MIN). torch's abs() of INT64_MIN is undefined
/// there.
BRAZE_DECLARE_BINARY_OP(gcd)
/// torch.nextafter / std::nextafter: the next representable value after a in the direction
/// of b, in the operands' promoted dtype (float32: nextafterf, so the step is one float32 ulp).
/// nan in either gives nan; a == b gives b (so nextafter(-0.0, 0.0) is +0.0). The promoted dtype
/// must be float32 or float64: float16 and bfloat16 are refused (a step of a float32 ulp is not
/// a step of theirs, and torch has no reduced-precision nextafter either), as are integral
/// and bool results; integral operands promote with a floating one as in any binary op.
BRAZE_DECLARE_BINARY_OP(nextafter)
BRAZE_DECLARE_BINARY_OP(eq)
BRAZE_DECLARE_BINARY_OP(ne)
BRAZE_DECLARE_BINARY_OP(lt)
BRAZE_DECLARE_BINARY_OP(le)
BRAZE_DECLARE_BINARY_OP(gt)
BRAZE_DECLARE_BINARY_OP(ge)
BRAZE_DECLARE_BINARY_OP(logical_and)
BRAZE_DECLARE_BINARY_OP(logical_or)
BRAZE_DECLARE_BINARY_OP(logical_xor)
BRAZE_DECLARE_BINARY_OP(bitwise_and)
BRAZE_DECLARE_BINARY_OP(bitwise_or)
BRAZE_DECLARE_BINARY_OP(bitwise_xor)
/// left_shift: torch.bitwise_left_shift; a shift count outside [0, bits) gives 0.
BRAZE_DECLARE_BINARY_OP(left_shift)
/// right_shift: torch.bitwise_right_shift, an *arithmetic* shift: the sign bit fills the vacated
/// bits, so -8 >> 1 = -4; a count outside [0, bits) gives -1 for a negative a and 0 otherwise.
BRAZE_DECLARE_BINARY_OP(right_shift)
/// logical_right_shift (nvFuser's logical_right_shift): a *logical* shift of a's
/// two's-complement bits in the result's width (the promoted dtype: 32 bits for int32, 64 for
/// int64 and index), zeros filling the vacated bits: logical_right_shift(int32 -1, 28) = 15. A
/// shift count outside [0, bits), negative or too large, gives 0. Both operands must be
/// integral (int32, int64 or index); bool and floating operands are refused. Note that an int32
/// a with an int64 count promotes to int64 first, so a negative int32 a shifts 64 bits.
BRAZE_DECLARE_BINARY_OP(logical_right_shift)
#undef BRAZE_DECLARE_BINARY_OP

// Ternary ops. With a tensor first argument the result is a TensorView; otherwise a Val
// (a TensorView when any argument is one).

/// cond ? a : b, elementwise. `cond` must be bool; a and b are promoted together.
TensorView* where(TensorView* cond, Operand a, Operand b);
Val* where(Operand cond, Operand a, Operand b);
/// min(max(x, lo), hi); nan stays nan. The result keeps x's dtype category rules of
/// promotion with lo and hi.
TensorView* clamp(TensorView* x, Operand lo, Operand hi);
Val* clamp(Operand x, Operand lo, Operand hi);
/// start + weight * (end - start), computed as torch.lerp does for accuracy near weight 1.
TensorView* lerp(TensorView* start, Operand end, Operand weight);
Val* lerp(Operand start, Operand end, Operand weight);
/// x + value * t1 * t2.
TensorView* addcmul(TensorView* x, Operand t1, Operand t2, Operand value = 1.0);
Val* addcmul(Operand x, Operand t1, Operand t2, Operand value = 1.0);

}  // namespace braze
