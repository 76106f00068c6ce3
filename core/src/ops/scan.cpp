// cumsum, cumprod, cummax, cummin, and cummax/cummin with PyTorch's indices. Each scan Expr reads
// and writes one dtype and keeps x's shape; the dtype rules (int64 sums and products of integers,
// float32 accumulation of float16/bfloat16) are casts around it, as for reductions:
//
//   cumsum(x: float16[s0, s1], 1)  ->  T1 = cast(T0, float32); T2 = cumsum(T1, dim=1);
//                                      T3 = cast(T2, float16)

#include "braze/ops/scan.h"

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/reduction_output.h"

namespace braze {

namespace {

using ops_detail::castIfNeeded;
using ops_detail::tensorLabel;

void checkInput(std::string_view op, const TensorView* x) {
  BRAZE_USER_CHECK(x != nullptr) << op << ": the input tensor is null";
}

// `dim` in [0, rank); a 0-d tensor accepts 0 and -1 as PyTorch does (-1 is returned for it).
int64_t normalizeScanDim(std::string_view op, const TensorView* x, int64_t dim) {
  if (x->rank() == 0) {
    BRAZE_USER_CHECK(dim == 0 || dim == -1)
        << op << ": dim " << dim << " is out of range for " << tensorLabel(x)
        << ", a 0-d tensor; valid dims are -1 and 0";
    return -1;
  }
  return ops_detail::normalizeDim(op, x, dim, x->rank());
}

// The scan Expr `op` along normalized `dim`; input and output have x's dtype. The output's
// dim is a real Iteration dim even where x only broadcasts (an expanded broadcast's prefixes
// differ from one position to the next).
TensorView* scanAlong(OpKind op, TensorView* x, int64_t dim) {
  if (dim < 0) return set(x);  // a 0-d tensor is its own prefix
  Fusion& fusion = x->fusion();
  std::vector<IterDomain*> domain = ops_detail::freshDomain(x);
  IterDomain*& scanned = domain[static_cast<size_t>(dim)];
  if (scanned->hasExpandedExtent()) {
    scanned = ops_detail::iterDomainOfExtent(fusion, scanned->expandedExtent());
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(op, std::vector<Val*>{x}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"dim", dim}});
  return y;
}

// cumsum and cumprod: PyTorch's default result dtype, or the requested one (as for sum).
DataType scanResultType(std::string_view op, const TensorView* x, std::optional<DataType> dtype) {
  BRAZE_USER_CHECK(dtype != DataType::Index)
      << op << " of " << tensorLabel(x)
      << ": dtype=index is Braze's internal size type; use int64 or a floating dtype";
  return ops_detail::accumulatingResultType(op, x, dtype);
}

// x cast to the result's accumulation type, scanned, cast back to `result`.
TensorView* accumulate(OpKind op, std::string_view name, TensorView* x, int64_t dim,
                       std::optional<DataType> dtype) {
  checkInput(name, x);
  const int64_t normalized = normalizeScanDim(name, x, dim);
  const DataType result = scanResultType(name, x, dtype);
  TensorView* y = scanAlong(op, castIfNeeded(x, ops_detail::accumulationType(result)), normalized);
  return castIfNeeded(y, result);
}

// cummax and cummin select an element, so they are exact in any dtype and need no casts.
TensorView* scanBySelection(OpKind op, std::string_view name, TensorView* x, int64_t dim) {
  checkInput(name, x);
  return scanAlong(op, x, normalizeScanDim(name, x, dim));
}

// PyTorch's indices of the running extremes `values` of x along `dim`, from scans along that
// dim and elementwise ops:
//
//   position = cumsum(1) - 1                               0, 1, 2, ... along dim
//   last     = cummax(where(x == values, position, -1))    the last element equal to the extreme
//   indices  = where(isnan(values), cumsum(!isnan(values)), last)
//
// A float extreme is nan from the first nan on (nan equals nothing), and the count of non-nan
// extremes before it is that first nan's position.
TensorView* extremeIndices(TensorView* x, TensorView* values, int64_t dim) {
  if (dim < 0) return cast(where(isnan(x), int64_t{0}, int64_t{0}), DataType::Int64);
  // 1 at every element of x: the positions count them.
  TensorView* ones = cast(where(isnan(x), int64_t{1}, int64_t{1}), DataType::Int64);
  TensorView* position = sub(scanAlong(OpKind::Cumsum, ones, dim), int64_t{1});
  TensorView* last = scanAlong(OpKind::Cummax, where(eq(x, values), position, int64_t{-1}), dim);
  if (!isFloatingPoint(x->dtype())) return last;
  TensorView* extreme_nan = isnan(values);
  TensorView* non_nan = cast(logical_not(extreme_nan), DataType::Int64);
  return where(extreme_nan, scanAlong(OpKind::Cumsum, non_nan, dim), last);
}

ScanWithIndices scanWithIndices(OpKind op, std::string_view name, TensorView* x, int64_t dim) {
  checkInput(name, x);
  const int64_t normalized = normalizeScanDim(name, x, dim);
  TensorView* values = scanAlong(op, x, normalized);
  return {values, extremeIndices(x, values, normalized)};
}

}  // namespace

TensorView* cumsum(TensorView* x, int64_t dim, std::optional<DataType> dtype) {
  return accumulate(OpKind::Cumsum, "cumsum", x, dim, dtype);
}

TensorView* cumprod(TensorView* x, int64_t dim, std::optional<DataType> dtype) {
  return accumulate(OpKind::Cumprod, "cumprod", x, dim, dtype);
}

TensorView* cummax(TensorView* x, int64_t dim) {
  return scanBySelection(OpKind::Cummax, "cummax", x, dim);
}

TensorView* cummin(TensorView* x, int64_t dim) {
  return scanBySelection(OpKind::Cummin, "cummin", x, dim);
}

ScanWithIndices cummaxWithIndices(TensorView* x, int64_t dim) {
  return scanWithIndices(OpKind::Cummax, "cummax", x, dim);
}

ScanWithIndices cumminWithIndices(TensorView* x, int64_t dim) {
  return scanWithIndices(OpKind::Cummin, "cummin", x, dim);
}

}  // namespace braze
