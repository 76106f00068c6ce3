#pragma once

// The parts every reduction builder shares: which axes it reduces, what its output looks like,
// and PyTorch's keepdim. Internal to core/src/ops.
//
//   x:   T0: float32[i0{s0}, i1{s1}, i2{s2}]
//   sum(x, {1}):                 T1: float32[i3{s0}, r4{s1}, i5{s2}]      axes=[1]
//   sum(x, {1}, keepdim=true):   T2: float32[i6{s0}, b7{1}, i8{s2}]       broadcast(T1, ...)

#include <optional>
#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::ops_detail {

/// `axes` normalized into x's user-visible dims, sorted and unique; an empty list means every
/// dim. Out-of-range and repeated axes are Errors naming `op`. A 0-d x accepts 0 and -1 (as
/// PyTorch does) and reduces nothing.
std::vector<int64_t> normalizeReductionAxes(std::string_view op, const TensorView* x,
                                            const std::vector<int64_t>& axes);

/// A new tensor of `dtype` with x's user-visible dims, each fresh; the dims in `axes` become
/// Reduction IterDomains of the same logical extent (an expanded broadcast reduces over its
/// expanded extent).
TensorView* newReductionOutput(const TensorView* x, const std::vector<int64_t>& axes,
                               DataType dtype);

/// Creates the reduction Expr `op` (Sum, Prod, Max, Min) of x over normalized `axes`; input and
/// output have the same dtype.
TensorView* reduceOver(OpKind op, TensorView* x, const std::vector<int64_t>& axes);

/// keepdim: y (x's dims, `axes` reduced) with the reduced dims brought back as Broadcast dims
/// of extent 1. Returns y itself when there is nothing to bring back.
TensorView* keepReducedDims(TensorView* y, const std::vector<int64_t>& axes, int64_t rank);

/// How many elements each output element combines: the product of the reduced logical extents,
/// an Index scalar (the constant 1 when nothing is reduced).
Scalar* reducedElementCount(const TensorView* x, const std::vector<int64_t>& axes);

/// The result dtype of an accumulating op (sum, prod, cumsum, cumprod): PyTorch's default
/// (int64 for integer and bool inputs, else x's dtype) or the requested `dtype`; bool is
/// refused with an Error naming `op`.
DataType accumulatingResultType(std::string_view op, const TensorView* x,
                                std::optional<DataType> dtype);

/// The dtype a result of dtype `result` is accumulated in: float32 for float16 and bfloat16,
/// which lose digits quickly when summed in their own precision; `result` otherwise.
DataType accumulationType(DataType result);

/// x itself when it has `dtype`, else cast(x, dtype).
TensorView* castIfNeeded(TensorView* x, DataType dtype);

}  // namespace braze::ops_detail
