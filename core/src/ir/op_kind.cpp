#include "braze/ir/op_kind.h"

namespace braze {

std::string_view toString(OpKind op) {
  switch (op) {
    case OpKind::Neg:
      return "neg";
    case OpKind::Abs:
      return "abs";
    case OpKind::Exp:
      return "exp";
    case OpKind::Exp2:
      return "exp2";
    case OpKind::Expm1:
      return "expm1";
    case OpKind::Log:
      return "log";
    case OpKind::Log2:
      return "log2";
    case OpKind::Log1p:
      return "log1p";
    case OpKind::Sqrt:
      return "sqrt";
    case OpKind::Rsqrt:
      return "rsqrt";
    case OpKind::Reciprocal:
      return "reciprocal";
    case OpKind::Sin:
      return "sin";
    case OpKind::Cos:
      return "cos";
    case OpKind::Tan:
      return "tan";
    case OpKind::Tanh:
      return "tanh";
    case OpKind::Sigmoid:
      return "sigmoid";
    case OpKind::Relu:
      return "relu";
    case OpKind::Gelu:
      return "gelu";
    case OpKind::Silu:
      return "silu";
    case OpKind::Erf:
      return "erf";
    case OpKind::Erfc:
      return "erfc";
    case OpKind::Floor:
      return "floor";
    case OpKind::Ceil:
      return "ceil";
    case OpKind::Round:
      return "round";
    case OpKind::Trunc:
      return "trunc";
    case OpKind::Sign:
      return "sign";
    case OpKind::IsNan:
      return "isnan";
    case OpKind::IsInf:
      return "isinf";
    case OpKind::IsFinite:
      return "isfinite";
    case OpKind::Signbit:
      return "signbit";
    case OpKind::LogicalNot:
      return "logical_not";
    case OpKind::BitwiseNot:
      return "bitwise_not";
    case OpKind::Cast:
      return "cast";
    case OpKind::Add:
      return "add";
    case OpKind::Sub:
      return "sub";
    case OpKind::Mul:
      return "mul";
    case OpKind::Div:
      return "div";
    case OpKind::TrueDiv:
      return "truediv";
    case OpKind::Remainder:
      return "remainder";
    case OpKind::Fmod:
      return "fmod";
    case OpKind::CeilDiv:
      return "ceil_div";
    case OpKind::Pow:
      return "pow";
    case OpKind::Maximum:
      return "maximum";
    case OpKind::Minimum:
      return "minimum";
    case OpKind::Atan2:
      return "atan2";
    case OpKind::Gcd:
      return "gcd";
    case OpKind::Nextafter:
      return "nextafter";
    case OpKind::Eq:
      return "eq";
    case OpKind::Ne:
      return "ne";
    case OpKind::Lt:
      return "lt";
    case OpKind::Le:
      return "le";
    case OpKind::Gt:
      return "gt";
    case OpKind::Ge:
      return "ge";
    case OpKind::LogicalAnd:
      return "logical_and";
    case OpKind::LogicalOr:
      return "logical_or";
    case OpKind::LogicalXor:
      return "logical_xor";
    case OpKind::BitwiseAnd:
      return "bitwise_and";
    case OpKind::BitwiseOr:
      return "bitwise_or";
    case OpKind::BitwiseXor:
      return "bitwise_xor";
    case OpKind::LeftShift:
      return "left_shift";
    case OpKind::RightShift:
      return "right_shift";
    case OpKind::LogicalRightShift:
      return "logical_right_shift";
    case OpKind::Where:
      return "where";
    case OpKind::Clamp:
      return "clamp";
    case OpKind::Lerp:
      return "lerp";
    case OpKind::Addcmul:
      return "addcmul";
    case OpKind::Sum:
      return "sum";
    case OpKind::Prod:
      return "prod";
    case OpKind::Max:
      return "max";
    case OpKind::Min:
      return "min";
    case OpKind::Welford:
      return "welford";
    case OpKind::Cumsum:
      return "cumsum";
    case OpKind::Cumprod:
      return "cumprod";
    case OpKind::Cummax:
      return "cummax";
    case OpKind::Cummin:
      return "cummin";
    case OpKind::Broadcast:
      return "broadcast";
    case OpKind::Expand:
      return "expand";
    case OpKind::Reshape:
      return "reshape";
    case OpKind::Permute:
      return "permute";
    case OpKind::Squeeze:
      return "squeeze";
    case OpKind::Slice:
      return "slice";
    case OpKind::Pad:
      return "pad";
    case OpKind::Cat:
      return "cat";
    case OpKind::Select:
      return "select";
    case OpKind::IndexSelect:
      return "index_select";
    case OpKind::Gather:
      return "gather";
    case OpKind::Scatter:
      return "scatter";
    case OpKind::Full:
      return "full";
    case OpKind::Iota:
      return "iota";
    case OpKind::Uniform:
      return "uniform";
    case OpKind::Normal:
      return "normal";
    case OpKind::Matmul:
      return "matmul";
    case OpKind::Linear:
      return "linear";
    case OpKind::Set:
      return "set";
    case OpKind::SegmentSet:
      return "segment_set";
    case OpKind::StrideOrder:
      return "stride_order";
    case OpKind::Split:
      return "split";
    case OpKind::Merge:
      return "merge";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, OpKind op) {
  return os << toString(op);
}

std::optional<OpKind> parseOpKind(std::string_view name) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    const auto op = static_cast<OpKind>(i);
    if (toString(op) == name) return op;
  }
  return std::nullopt;
}

OpFamily familyOf(OpKind op) {
  switch (op) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Exp:
    case OpKind::Exp2:
    case OpKind::Expm1:
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Log1p:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Reciprocal:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tan:
    case OpKind::Tanh:
    case OpKind::Sigmoid:
    case OpKind::Relu:
    case OpKind::Gelu:
    case OpKind::Silu:
    case OpKind::Erf:
    case OpKind::Erfc:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Trunc:
    case OpKind::Sign:
    case OpKind::IsNan:
    case OpKind::IsInf:
    case OpKind::IsFinite:
    case OpKind::Signbit:
    case OpKind::LogicalNot:
    case OpKind::BitwiseNot:
      return OpFamily::Unary;
    case OpKind::Cast:
      return OpFamily::Cast;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::TrueDiv:
    case OpKind::Remainder:
    case OpKind::Fmod:
    case OpKind::CeilDiv:
    case OpKind::Pow:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Atan2:
    case OpKind::Gcd:
    case OpKind::Nextafter:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalXor:
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor:
    case OpKind::LeftShift:
    case OpKind::RightShift:
    case OpKind::LogicalRightShift:
      return OpFamily::Binary;
    case OpKind::Where:
    case OpKind::Clamp:
    case OpKind::Lerp:
    case OpKind::Addcmul:
      return OpFamily::Ternary;
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
      return OpFamily::Reduction;
    case OpKind::Welford:
      return OpFamily::Welford;
    case OpKind::Cumsum:
    case OpKind::Cumprod:
    case OpKind::Cummax:
    case OpKind::Cummin:
      return OpFamily::Scan;
    case OpKind::Broadcast:
    case OpKind::Expand:
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::Squeeze:
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Cat:
    case OpKind::Select:
    case OpKind::IndexSelect:
    case OpKind::Gather:
    case OpKind::Scatter:
      return OpFamily::Shape;
    case OpKind::Full:
    case OpKind::Iota:
    case OpKind::Uniform:
    case OpKind::Normal:
      return OpFamily::Factory;
    case OpKind::Matmul:
    case OpKind::Linear:
      return OpFamily::Contraction;
    case OpKind::Set:
    case OpKind::SegmentSet:
    case OpKind::StrideOrder:
      return OpFamily::Memory;
    case OpKind::Split:
    case OpKind::Merge:
      return OpFamily::Transform;
  }
  return OpFamily::Unary;
}

bool isElementwise(OpKind op) {
  const OpFamily family = familyOf(op);
  return family == OpFamily::Unary || family == OpFamily::Cast || family == OpFamily::Binary ||
         family == OpFamily::Ternary;
}

bool producesBool(OpKind op) {
  switch (op) {
    case OpKind::IsNan:
    case OpKind::IsInf:
    case OpKind::IsFinite:
    case OpKind::Signbit:
    case OpKind::LogicalNot:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalXor:
      return true;
    default:
      return false;
  }
}

std::optional<OpKind> scanCombiner(OpKind scan) {
  switch (scan) {
    case OpKind::Cumsum:
      return OpKind::Sum;
    case OpKind::Cumprod:
      return OpKind::Prod;
    case OpKind::Cummax:
      return OpKind::Max;
    case OpKind::Cummin:
      return OpKind::Min;
    default:
      return std::nullopt;
  }
}

int elementwiseArity(OpKind op) {
  switch (familyOf(op)) {
    case OpFamily::Unary:
    case OpFamily::Cast:
      return 1;
    case OpFamily::Binary:
      return 2;
    case OpFamily::Ternary:
      return op == OpKind::Addcmul ? 4 : 3;
    default:
      return 0;
  }
}

}  // namespace braze
