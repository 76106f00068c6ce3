#pragma once

// Index-scalar arithmetic for the extents op builders compute (a slice's count, a cat's sum, a
// reshape's inferred size). Internal to core/src/ops.
//
// Every function goes through the scalar elementwise builders, which fold constants and drop
// identities (x + 0, x * 1), so constant shapes stay constant and the printed IR stays short.
// Operands are Index scalars; Index with Index stays Index.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ops/operand.h"

namespace braze::ops_detail {

Scalar* addExtents(Scalar* a, Scalar* b);
Scalar* subExtents(Scalar* a, Scalar* b);
Scalar* mulExtents(Scalar* a, Scalar* b);
/// Integer ceil(a / b); `b` must be positive.
Scalar* ceilDivExtents(Scalar* a, Scalar* b);
Scalar* maxExtents(Scalar* a, Scalar* b);
Scalar* minExtents(Scalar* a, Scalar* b);

/// The product of the logical (expanded) extents of `dims`; the constant 1 when empty.
Scalar* productOfExtents(Fusion& fusion, const std::vector<IterDomain*>& dims);

/// toIndexScalar, then a cast when the scalar is integral but not of the Index dtype (a user's
/// int64 fusion input), so extents and slice/pad arguments are always Index scalars.
Scalar* indexScalar(Fusion& fusion, const Operand& operand, std::string_view op,
                    std::string_view argument);

/// A scalar of `dtype` for a fill value or an iota start/step: constants are converted, scalar
/// Vals of another dtype are cast. A tensor or a Val of another fusion is an Error naming `op`
/// and `argument`.
Scalar* scalarOfType(Fusion& fusion, const Operand& operand, DataType dtype, std::string_view op,
                     std::string_view argument);

/// "[3, s1, 4]": the logical sizes of x's user-visible dims, as errors show them.
std::string shapeText(const TensorView* x);

}  // namespace braze::ops_detail
