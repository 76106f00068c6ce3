#include "braze/ops/elementwise.h"

#include <optional>
#include <string>
#include <vector>

#include "braze/ops/elementwise_semantics.h"
#include "ops/domain_builder.h"
#include "ops/elementwise_shape.h"

namespace braze {
namespace {

// ---------------------------------------------------------------------------------------------
// Operands.

/// An operand and the argument name errors call it by ("x", "a", "cond", ...).
struct Argument {
  Operand operand;
  std::string_view name;
};

/// A TensorView argument as an Operand; a null pointer would otherwise read as the constant 0.
Operand tensorOperand(std::string_view op, TensorView* tensor, std::string_view argument) {
  BRAZE_USER_CHECK(tensor != nullptr) << op << ": " << argument << " is a null TensorView";
  return Operand(tensor);
}

/// How an error names an operand: "T0 (input 0)", "s1", "the constant 1.5".
std::string describe(const Operand& operand) {
  if (!operand.isVal()) return "the constant " + toString(operand.constant());
  if (const auto* tv = operand.val()->dynCast<TensorView>()) return ops_detail::tensorLabel(tv);
  return operand.val()->name();
}

/// The value of a constant operand (a C++ constant or a constant Scalar), else nullopt.
std::optional<ScalarValue> constantOf(const Operand& operand) {
  if (!operand.isVal()) return operand.constant();
  if (const auto* scalar = operand.val()->dynCast<Scalar>()) return scalar->value();
  return std::nullopt;
}

bool isConstantInteger(const Operand& operand, int64_t value) {
  const std::optional<ScalarValue> constant = constantOf(operand);
  return constant && !std::holds_alternative<double>(*constant) && toInt64(*constant) == value;
}

// ---------------------------------------------------------------------------------------------
// Result dtypes.

/// PyTorch's result_type over three tiers: tensors, scalar Vals (as 0-d tensors), C++
/// constants (as Python scalars); see promoteOperands.
DataType promoteArguments(const std::vector<Argument>& arguments) {
  std::vector<TypedOperand> typed;
  typed.reserve(arguments.size());
  for (const Argument& argument : arguments) typed.push_back(argument.operand.typed());
  return promoteOperands(typed);
}

void requireIntegralOrBool(OpKind op, const Argument& argument) {
  const DataType dtype = argument.operand.dtype();
  BRAZE_USER_CHECK(isIntegral(dtype) || isBoolean(dtype))
      << op << ": " << argument.name << " (" << describe(argument.operand) << ") has dtype "
      << dtype << ", but " << op
      << " needs integral or bool operands; cast it to an integer dtype first";
}

void requireIntegral(OpKind op, const Argument& argument) {
  const DataType dtype = argument.operand.dtype();
  BRAZE_USER_CHECK(isIntegral(dtype))
      << op << ": " << argument.name << " (" << describe(argument.operand) << ") has dtype "
      << dtype << ", but " << op << " needs integral operands (int32, int64 or index)";
}

/// nextafter steps by one ulp of its result dtype: float32 and float64 have a hardware (and
/// std::) nextafter; a float16 or bfloat16 step computed in float32 would be a float32 ulp and
/// round back to the input.
void requireNextafterDtype(const Argument& a, const Argument& b, DataType promoted) {
  const Argument& reduced = isReducedPrecision(a.operand.dtype()) ? a : b;
  BRAZE_USER_CHECK(!isReducedPrecision(promoted))
      << "nextafter: " << reduced.name << " (" << describe(reduced.operand) << ") has dtype "
      << reduced.operand.dtype() << ", and the operands promote to " << promoted
      << "; nextafter supports only float32 and float64 (as torch.nextafter); cast both "
         "operands to float32 or float64 first";
  BRAZE_USER_CHECK(promoted == DataType::Float32 || promoted == DataType::Float64)
      << "nextafter: a (" << describe(a.operand) << ", " << a.operand.dtype() << ") and b ("
      << describe(b.operand) << ", " << b.operand.dtype() << ") promote to " << promoted
      << ", but nextafter needs a float32 or float64 result; cast a or b to a floating dtype "
         "first";
}

DataType unaryResultType(OpKind op, const Argument& x) {
  const DataType dtype = x.operand.dtype();
  switch (op) {
    case OpKind::Neg:
      BRAZE_USER_CHECK(!isBoolean(dtype))
          << "neg: x (" << describe(x.operand)
          << ") is bool, and negating a bool is not supported; use logical_not to invert a mask";
      return dtype;
    case OpKind::Abs:
    case OpKind::Relu:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Trunc:
    case OpKind::Sign:
      return dtype;
    case OpKind::BitwiseNot:
      requireIntegralOrBool(op, x);
      return dtype;
    case OpKind::Signbit:
      BRAZE_USER_CHECK(!isBoolean(dtype))
          << "signbit: x (" << describe(x.operand)
          << ") is bool, which has no sign (torch.signbit refuses bool too); cast it to an "
             "integer or floating dtype first";
      return DataType::Bool;
    default:
      break;
  }
  if (producesBool(op)) return DataType::Bool;
  return floatingResultType(dtype);
}

DataType binaryResultType(OpKind op, const Argument& a, const Argument& b) {
  switch (op) {
    case OpKind::Sub:
      for (const Argument* argument : {&a, &b}) {
        BRAZE_USER_CHECK(!isBoolean(argument->operand.dtype()))
            << "sub: " << argument->name << " (" << describe(argument->operand)
            << ") is bool, and subtraction with a bool operand is not supported; use "
               "logical_xor for bools or cast to an integer dtype first";
      }
      break;
    case OpKind::CeilDiv:
    case OpKind::Gcd:
    case OpKind::LogicalRightShift:
      requireIntegral(op, a);
      requireIntegral(op, b);
      break;
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor:
    case OpKind::LeftShift:
    case OpKind::RightShift:
      requireIntegralOrBool(op, a);
      requireIntegralOrBool(op, b);
      break;
    default:
      break;
  }
  if (producesBool(op)) return DataType::Bool;
  const DataType promoted = promoteArguments({a, b});
  if (op == OpKind::Nextafter) {
    requireNextafterDtype(a, b, promoted);
    return promoted;
  }
  if (op == OpKind::TrueDiv || op == OpKind::Atan2) return floatingResultType(promoted);
  return promoted;
}

// ---------------------------------------------------------------------------------------------
// Building.

/// Integer scalar arithmetic with a neutral or absorbing constant needs no Expr: extents such
/// as `ceil_div(n, 1)` or `n * 1` stay the Val they were. Returns nullptr when nothing applies.
Val* simplifyScalar(Fusion& fusion, OpKind op, const std::vector<Argument>& arguments,
                    DataType dtype) {
  if (!isIntegral(dtype) || arguments.size() != 2) return nullptr;
  const Operand& a = arguments[0].operand;
  const Operand& b = arguments[1].operand;
  // The kept operand must already have the result's dtype, or the result would change type.
  auto keep = [dtype](const Operand& operand) -> Val* {
    return operand.isVal() && operand.dtype() == dtype ? operand.val() : nullptr;
  };
  switch (op) {
    case OpKind::Add:
      if (isConstantInteger(b, 0)) return keep(a);
      if (isConstantInteger(a, 0)) return keep(b);
      return nullptr;
    case OpKind::Sub:
      return isConstantInteger(b, 0) ? keep(a) : nullptr;
    case OpKind::Mul:
      if (isConstantInteger(a, 0) || isConstantInteger(b, 0)) {
        return fusion.constant(int64_t{0}, dtype);
      }
      if (isConstantInteger(b, 1)) return keep(a);
      if (isConstantInteger(a, 1)) return keep(b);
      return nullptr;
    case OpKind::Div:
    case OpKind::CeilDiv:
      return isConstantInteger(b, 1) ? keep(a) : nullptr;
    default:
      return nullptr;
  }
}

std::vector<Attribute> attributesOf(OpKind op, const ElementwiseAttributes& attributes) {
  if (op != OpKind::Gelu) return {};
  return {{"approximate", std::string(attributes.gelu_tanh ? "tanh" : "none")}};
}

/// Creates `op` over `arguments` with result dtype `dtype`: a TensorView of the broadcast shape
/// when any argument is a tensor; otherwise a Scalar, folded to a constant when every argument
/// is constant.
Val* buildElementwise(Fusion& fusion, OpKind op, const std::vector<Argument>& arguments,
                      DataType dtype, const ElementwiseAttributes& attributes = {}) {
  const std::string_view name = toString(op);
  bool any_tensor = false;
  bool all_constant = true;
  std::vector<ScalarValue> constants;
  for (const Argument& argument : arguments) {
    any_tensor = any_tensor || argument.operand.isTensor();
    const std::optional<ScalarValue> constant = constantOf(argument.operand);
    all_constant = all_constant && constant.has_value();
    if (constant) constants.push_back(*constant);
  }
  if (!any_tensor && all_constant) {
    return fusion.constant(evaluateElementwise(op, constants, dtype, attributes), dtype);
  }

  std::vector<Val*> inputs;
  inputs.reserve(arguments.size());
  for (const Argument& argument : arguments) {
    if (argument.operand.isVal()) {
      inputs.push_back(argument.operand.materialize(fusion, name, argument.name));
    } else {
      inputs.push_back(nullptr);  // constants are created only when an Expr needs them
    }
  }
  if (!any_tensor) {
    if (Val* simplified = simplifyScalar(fusion, op, arguments, dtype)) return simplified;
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (inputs[i] == nullptr) {
      inputs[i] = arguments[i].operand.materialize(fusion, name, arguments[i].name);
    }
  }

  Val* output = nullptr;
  if (any_tensor) {
    std::vector<ops_detail::BroadcastOperand> tensors;
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (const auto* tv = inputs[i]->dynCast<TensorView>()) {
        tensors.push_back({tv, arguments[i].name});
      }
    }
    output = fusion.create<TensorView>(dtype, ops_detail::broadcastDomain(name, tensors));
  } else {
    output = fusion.create<Scalar>(dtype);
  }
  fusion.create<Expr>(op, std::move(inputs), std::vector<Val*>{output},
                      attributesOf(op, attributes));
  return output;
}

Val* unaryOp(OpKind op, const Operand& x, const ElementwiseAttributes& attributes = {}) {
  Fusion& fusion = fusionOf(toString(op), {x});
  const Argument argument{x, "x"};
  return buildElementwise(fusion, op, {argument}, unaryResultType(op, argument), attributes);
}

Val* binaryOp(OpKind op, const Operand& a, const Operand& b) {
  Fusion& fusion = fusionOf(toString(op), {a, b});
  const Argument first{a, "a"};
  const Argument second{b, "b"};
  return buildElementwise(fusion, op, {first, second}, binaryResultType(op, first, second));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Unary ops.

#define BRAZE_DEFINE_UNARY_OP(name, kind)                                         \
  TensorView* name(TensorView* x) {                                               \
    return unaryOp(OpKind::kind, tensorOperand(#name, x, "x"))->as<TensorView>(); \
  }                                                                               \
  Val* name(Operand x) {                                                          \
    return unaryOp(OpKind::kind, x);                                              \
  }

BRAZE_DEFINE_UNARY_OP(neg, Neg)
BRAZE_DEFINE_UNARY_OP(abs, Abs)
BRAZE_DEFINE_UNARY_OP(exp, Exp)
BRAZE_DEFINE_UNARY_OP(exp2, Exp2)
BRAZE_DEFINE_UNARY_OP(expm1, Expm1)
BRAZE_DEFINE_UNARY_OP(log, Log)
BRAZE_DEFINE_UNARY_OP(log2, Log2)
BRAZE_DEFINE_UNARY_OP(log1p, Log1p)
BRAZE_DEFINE_UNARY_OP(sqrt, Sqrt)
BRAZE_DEFINE_UNARY_OP(rsqrt, Rsqrt)
BRAZE_DEFINE_UNARY_OP(reciprocal, Reciprocal)
BRAZE_DEFINE_UNARY_OP(sin, Sin)
BRAZE_DEFINE_UNARY_OP(cos, Cos)
BRAZE_DEFINE_UNARY_OP(tan, Tan)
BRAZE_DEFINE_UNARY_OP(tanh, Tanh)
BRAZE_DEFINE_UNARY_OP(sigmoid, Sigmoid)
BRAZE_DEFINE_UNARY_OP(relu, Relu)
BRAZE_DEFINE_UNARY_OP(silu, Silu)
BRAZE_DEFINE_UNARY_OP(erf, Erf)
BRAZE_DEFINE_UNARY_OP(erfc, Erfc)
BRAZE_DEFINE_UNARY_OP(floor, Floor)
BRAZE_DEFINE_UNARY_OP(ceil, Ceil)
BRAZE_DEFINE_UNARY_OP(round, Round)
BRAZE_DEFINE_UNARY_OP(trunc, Trunc)
BRAZE_DEFINE_UNARY_OP(sign, Sign)
BRAZE_DEFINE_UNARY_OP(isnan, IsNan)
BRAZE_DEFINE_UNARY_OP(isinf, IsInf)
BRAZE_DEFINE_UNARY_OP(isfinite, IsFinite)
BRAZE_DEFINE_UNARY_OP(signbit, Signbit)
BRAZE_DEFINE_UNARY_OP(logical_not, LogicalNot)
BRAZE_DEFINE_UNARY_OP(bitwise_not, BitwiseNot)
#undef BRAZE_DEFINE_UNARY_OP

TensorView* gelu(TensorView* x, GeluApproximation approximation) {
  return gelu(tensorOperand("gelu", x, "x"), approximation)->as<TensorView>();
}

Val* gelu(Operand x, GeluApproximation approximation) {
  return unaryOp(OpKind::Gelu, x, {.gelu_tanh = approximation == GeluApproximation::Tanh});
}

TensorView* cast(TensorView* x, DataType dtype) {
  return cast(tensorOperand("cast", x, "x"), dtype)->as<TensorView>();
}

Val* cast(Operand x, DataType dtype) {
  Fusion& fusion = fusionOf("cast", {x});
  return buildElementwise(fusion, OpKind::Cast, {{x, "x"}}, dtype);
}

// ---------------------------------------------------------------------------------------------
// Binary ops.

#define BRAZE_DEFINE_BINARY_OP(name, kind)                                                    \
  TensorView* name(TensorView* a, TensorView* b) {                                            \
    return binaryOp(OpKind::kind, tensorOperand(#name, a, "a"), tensorOperand(#name, b, "b")) \
        ->as<TensorView>();                                                                   \
  }                                                                                           \
  TensorView* name(TensorView* a, Operand b) {                                                \
    return binaryOp(OpKind::kind, tensorOperand(#name, a, "a"), b)->as<TensorView>();         \
  }                                                                                           \
  TensorView* name(Operand a, TensorView* b) {                                                \
    return binaryOp(OpKind::kind, a, tensorOperand(#name, b, "b"))->as<TensorView>();         \
  }                                                                                           \
  Val* name(Operand a, Operand b) {                                                           \
    return binaryOp(OpKind::kind, a, b);                                                      \
  }

BRAZE_DEFINE_BINARY_OP(add, Add)
BRAZE_DEFINE_BINARY_OP(sub, Sub)
BRAZE_DEFINE_BINARY_OP(mul, Mul)
BRAZE_DEFINE_BINARY_OP(div, Div)
BRAZE_DEFINE_BINARY_OP(truediv, TrueDiv)
BRAZE_DEFINE_BINARY_OP(remainder, Remainder)
BRAZE_DEFINE_BINARY_OP(fmod, Fmod)
BRAZE_DEFINE_BINARY_OP(ceil_div, CeilDiv)
BRAZE_DEFINE_BINARY_OP(pow, Pow)
BRAZE_DEFINE_BINARY_OP(maximum, Maximum)
BRAZE_DEFINE_BINARY_OP(minimum, Minimum)
BRAZE_DEFINE_BINARY_OP(atan2, Atan2)
BRAZE_DEFINE_BINARY_OP(gcd, Gcd)
BRAZE_DEFINE_BINARY_OP(nextafter, Nextafter)
BRAZE_DEFINE_BINARY_OP(eq, Eq)
BRAZE_DEFINE_BINARY_OP(ne, Ne)
BRAZE_DEFINE_BINARY_OP(lt, Lt)
BRAZE_DEFINE_BINARY_OP(le, Le)
BRAZE_DEFINE_BINARY_OP(gt, Gt)
BRAZE_DEFINE_BINARY_OP(ge, Ge)
BRAZE_DEFINE_BINARY_OP(logical_and, LogicalAnd)
BRAZE_DEFINE_BINARY_OP(logical_or, LogicalOr)
BRAZE_DEFINE_BINARY_OP(logical_xor, LogicalXor)
BRAZE_DEFINE_BINARY_OP(bitwise_and, BitwiseAnd)
BRAZE_DEFINE_BINARY_OP(bitwise_or, BitwiseOr)
BRAZE_DEFINE_BINARY_OP(bitwise_xor, BitwiseXor)
BRAZE_DEFINE_BINARY_OP(left_shift, LeftShift)
BRAZE_DEFINE_BINARY_OP(right_shift, RightShift)
BRAZE_DEFINE_BINARY_OP(logical_right_shift, LogicalRightShift)
#undef BRAZE_DEFINE_BINARY_OP

// ---------------------------------------------------------------------------------------------
// Ternary ops.

TensorView* where(TensorView* cond, Operand a, Operand b) {
  return where(tensorOperand("where", cond, "cond"), a, b)->as<TensorView>();
}

Val* where(Operand cond, Operand a, Operand b) {
  Fusion& fusion = fusionOf("where", {cond, a, b});
  BRAZE_USER_CHECK(isBoolean(cond.dtype()))
      << "where: cond (" << describe(cond) << ") has dtype " << cond.dtype()
      << ", but it must be bool; compare it first, e.g. ne(cond, 0)";
  const Argument first{a, "a"};
  const Argument second{b, "b"};
  return buildElementwise(fusion, OpKind::Where, {{cond, "cond"}, first, second},
                          promoteArguments({first, second}));
}

TensorView* clamp(TensorView* x, Operand lo, Operand hi) {
  return clamp(tensorOperand("clamp", x, "x"), lo, hi)->as<TensorView>();
}

Val* clamp(Operand x, Operand lo, Operand hi) {
  Fusion& fusion = fusionOf("clamp", {x, lo, hi});
  const std::vector<Argument> arguments{{x, "x"}, {lo, "lo"}, {hi, "hi"}};
  return buildElementwise(fusion, OpKind::Clamp, arguments, promoteArguments(arguments));
}

TensorView* lerp(TensorView* start, Operand end, Operand weight) {
  return lerp(tensorOperand("lerp", start, "start"), end, weight)->as<TensorView>();
}

Val* lerp(Operand start, Operand end, Operand weight) {
  Fusion& fusion = fusionOf("lerp", {start, end, weight});
  const std::vector<Argument> arguments{{start, "start"}, {end, "end"}, {weight, "weight"}};
  const DataType dtype = promoteArguments(arguments);
  BRAZE_USER_CHECK(isFloatingPoint(dtype))
      << "lerp: start (" << describe(start) << "), end (" << describe(end) << ") and weight ("
      << describe(weight) << ") promote to " << dtype
      << ", but lerp needs a floating result; cast start and end to a floating dtype first";
  return buildElementwise(fusion, OpKind::Lerp, arguments, dtype);
}

TensorView* addcmul(TensorView* x, Operand t1, Operand t2, Operand value) {
  return addcmul(tensorOperand("addcmul", x, "x"), t1, t2, value)->as<TensorView>();
}

Val* addcmul(Operand x, Operand t1, Operand t2, Operand value) {
  Fusion& fusion = fusionOf("addcmul", {x, t1, t2, value});
  const std::vector<Argument> arguments{{x, "x"}, {t1, "t1"}, {t2, "t2"}, {value, "value"}};
  return buildElementwise(fusion, OpKind::Addcmul, arguments, promoteArguments(arguments));
}

}  // namespace braze
