#include "ops/reduction_output.h"

#include <algorithm>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze::ops_detail {

std::vector<int64_t> normalizeReductionAxes(std::string_view op, const TensorView* x,
                                            const std::vector<int64_t>& axes) {
  const int64_t rank = x->rank();
  if (rank == 0) {
    // PyTorch treats a 0-d tensor as having one dim for the purpose of naming it.
    for (int64_t axis : axes) {
      BRAZE_USER_CHECK(axis == 0 || axis == -1)
          << op << ": axis " << axis << " is out of range for " << tensorLabel(x)
          << ", a 0-d tensor; valid axes are -1 and 0";
    }
    return {};
  }
  std::vector<int64_t> normalized;
  if (axes.empty()) {
    for (int64_t axis = 0; axis < rank; ++axis) normalized.push_back(axis);
    return normalized;
  }
  for (int64_t axis : axes) {
    const int64_t dim = normalizeDim(op, x, axis, rank);
    BRAZE_USER_CHECK(std::find(normalized.begin(), normalized.end(), dim) == normalized.end())
        << op << ": axis " << axis << " of " << tensorLabel(x) << " (dim " << dim
        << ") appears more than once in the axes; list each dim once";
    normalized.push_back(dim);
  }
  std::sort(normalized.begin(), normalized.end());
  return normalized;
}

TensorView* newReductionOutput(const TensorView* x, const std::vector<int64_t>& axes,
                               DataType dtype) {
  Fusion& fusion = x->fusion();
  std::vector<IterDomain*> domain;
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  for (int64_t dim = 0; dim < static_cast<int64_t>(dims.size()); ++dim) {
    IterDomain* id = dims[static_cast<size_t>(dim)];
    if (std::binary_search(axes.begin(), axes.end(), dim)) {
      domain.push_back(fusion.create<IterDomain>(id->logicalExtent(), IterType::Reduction));
    } else {
      domain.push_back(freshIterDomain(id));
    }
  }
  return fusion.create<TensorView>(dtype, std::move(domain));
}

TensorView* reduceOver(OpKind op, TensorView* x, const std::vector<int64_t>& axes) {
  TensorView* y = newReductionOutput(x, axes, x->dtype());
  x->fusion().create<Expr>(op, std::vector<Val*>{x}, std::vector<Val*>{y},
                           std::vector<Attribute>{{"axes", axes}});
  return y;
}

TensorView* keepReducedDims(TensorView* y, const std::vector<int64_t>& axes, int64_t rank) {
  if (axes.empty()) return y;
  std::vector<bool> flags(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) flags[static_cast<size_t>(axis)] = true;
  return broadcast(y, flags);
}

Scalar* reducedElementCount(const TensorView* x, const std::vector<int64_t>& axes) {
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<IterDomain*> reduced;
  for (int64_t axis : axes) reduced.push_back(dims[static_cast<size_t>(axis)]);
  return productOfExtents(x->fusion(), reduced);
}

DataType accumulatingResultType(std::string_view op, const TensorView* x,
                                std::optional<DataType> dtype) {
  const DataType by_default =
      isIntegral(x->dtype()) || isBoolean(x->dtype()) ? DataType::Int64 : x->dtype();
  if (!dtype) return by_default;
  BRAZE_USER_CHECK(!isBoolean(*dtype))
      << op << " of " << tensorLabel(x) << ": dtype=bool cannot hold a " << op
      << "; use an integer or floating dtype (the default for " << x->dtype() << " is "
      << by_default << ")";
  return *dtype;
}

DataType accumulationType(DataType result) {
  return isReducedPrecision(result) ? DataType::Float32 : result;
}

TensorView* castIfNeeded(TensorView* x, DataType dtype) {
  return x->dtype() == dtype ? x : cast(x, dtype);
}

}  // namespace braze::ops_detail
