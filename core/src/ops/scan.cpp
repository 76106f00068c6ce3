// cumsum, cumprod, cummax, cummin. Each scan Expr reads and writes one dtype and keeps x's
// shape; the dtype rules (int64 sums and products of integers, float32 accumulation of
// float16/bfloat16) are casts around it, as for reductions:
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

// cumsum and cumprod: PyTorch's default result dtype, or the requested one.
DataType accumulatingResultType(std::string_view op, const TensorView* x,
                                std::optional<DataType> dtype) {
  const DataType by_default =
      isIntegral(x->dtype()) || isBoolean(x->dtype()) ? DataType::Int64 : x->dtype();
  if (!dtype) return by_default;
  BRAZE_USER_CHECK(!isBoolean(*dtype))
      << op << " of " << tensorLabel(x) << ": dtype=bool cannot hold a running " << op
      << "; use an integer or floating dtype (the default for " << x->dtype() << " is "
      << by_default << ")";
  BRAZE_USER_CHECK(*dtype != DataType::Index)
      << op << " of " << tensorLabel(x)
      << ": dtype=index is Braze's internal size type; use int64 or a floating dtype";
  return *dtype;
}

// x cast to the result's accumulation type, scanned, cast back to `result`.
TensorView* accumulate(OpKind op, std::string_view name, TensorView* x, int64_t dim,
                       std::optional<DataType> dtype) {
  checkInput(name, x);
  const int64_t normalized = normalizeScanDim(name, x, dim);
  const DataType result = accumulatingResultType(name, x, dtype);
  // float16 and bfloat16 lose digits quickly when summed in their own precision.
  const DataType accumulation = isReducedPrecision(result) ? DataType::Float32 : result;
  TensorView* y = scanAlong(op, castIfNeeded(x, accumulation), normalized);
  return castIfNeeded(y, result);
}

// cummax and cummin select an element, so they are exact in any dtype and need no casts.
TensorView* scanBySelection(OpKind op, std::string_view name, TensorView* x, int64_t dim) {
  checkInput(name, x);
  return scanAlong(op, x, normalizeScanDim(name, x, dim));
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

}  // namespace braze
