#pragma once

// CUDA spelling of Braze's types, constants and elementwise ops. Values are computed in a
// compute type (float for float16/bfloat16, the dtype itself otherwise) and stored in the
// storage type; a tensor element of dtype Index is a 64-bit integer.

#include <string>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::codegen {

/// "float", "braze::Half", "long long", ...: how an element is stored.
std::string storageType(DataType dtype);
/// The dtype arithmetic happens in: Float32 for float16 and bfloat16, Int64 for Index.
DataType computeDtype(DataType dtype);
std::string computeType(DataType dtype);
/// A scalar parameter's type: its storage type, except Index which is IndexT.
std::string scalarParameterType(DataType dtype);

/// `value` as a literal of compute dtype `dtype` ("0.5f", "3LL", "true", or a bit pattern for
/// infinities and NaN).
std::string literal(const ScalarValue& value, DataType dtype);

/// The initial value of a reduction's accumulator (output `output` of a Welford), or of a
/// scan's running value.
ScalarValue reductionIdentity(const Expr& reduction, size_t output);
/// The identity as CUDA text in the accumulator's compute type (max of float: -inf, ...).
std::string identityText(const Expr& reduction, size_t output);
/// braze::SumOp, braze::MaxOp, ...
std::string reductionFunctor(const Expr& reduction);

/// The compute dtype in which input `input` of elementwise `expr` enters the op.
DataType inputComputeDtype(const Expr& expr, size_t input);

/// An operand rendered as text, with the dtype it is stored in.
struct Rendered {
  std::string text;
  DataType dtype = DataType::Float32;
  bool atomic = true;                   ///< needs no parentheses when cast
  std::optional<ScalarValue> constant;  ///< a literal, printed directly in the target type
  bool index_typed = false;             ///< an IndexT quantity (sizes, positions)
};

/// `r` converted to compute dtype `to` (a cast only where the types differ).
std::string convert(const Rendered& r, DataType to);

/// The value of elementwise `expr` (Unary, Cast, Binary, Ternary) from inputs already converted
/// to their input compute dtypes; the result is in computeDtype(output dtype).
std::string elementwiseValue(const Expr& expr, const std::vector<std::string>& inputs);

}  // namespace braze::codegen
