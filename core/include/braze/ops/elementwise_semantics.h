#pragma once

#include <span>

#include "braze/ir/op_kind.h"
#include "braze/ir/scalar_value.h"

namespace braze {

/// Options of the few elementwise ops that have attributes.
struct ElementwiseAttributes {
  bool gelu_tanh = false;  ///< Gelu: tanh approximation instead of erf.
};

/// The meaning of every elementwise op (Unary, Cast, Binary, Ternary families) on one element,
/// the single definition shared by constant folding and the CPU reference evaluator.
///
/// Inputs arrive as held values (bool, int64 or double). The op is computed in double for
/// float results and in int64 (wrapping, never undefined) for integer results, then stored in
/// `result_dtype`'s category. Cast rounds to the precision of its target (float32, float16,
/// bfloat16 round-to-nearest-even; int32 wraps; float to int truncates toward zero, with nan
/// giving 0) so a chain of casts matches the GPU.
///
/// Integer division or remainder by zero throws an Error naming the op.
ScalarValue evaluateElementwise(OpKind op, std::span<const ScalarValue> inputs,
                                DataType result_dtype,
                                const ElementwiseAttributes& attributes = {});

/// Rounds a double to the nearest value representable in `dtype` (identity for float64 and
/// non-float types): the effect of storing it to a tensor of that dtype.
double roundToPrecision(double value, DataType dtype);

}  // namespace braze
