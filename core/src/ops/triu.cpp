// triu: the upper triangle of the last two dims, built from iota, broadcast, a comparison and
// where rather than an OpKind of its own, so that every layer that handles those handles it:
//
//   x     [b, r, c]
//   rows  = broadcast(iota(r), {false, true})     [r, 1]
//   cols  = broadcast(iota(c), {true, false})     [1, c]
//   keep  = ge(sub(cols, rows), diagonal)         [r, c]  bool
//   y     = where(broadcast(keep, {true, false, false}), x, 0)   [b, r, c], x's dtype

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"

namespace braze {

namespace {

// The extent a dim's elements are counted over: an expanded broadcast dim has its expanded
// extent, though it stores one element.
Scalar* countedExtent(const IterDomain* id) {
  return id->hasExpandedExtent() ? id->expandedExtent() : id->extent();
}

// Zero in x's dtype category, so that where(keep, x, zero) keeps x's dtype (a Python-scalar-like
// constant never promotes a tensor within its category).
Operand zeroLike(const TensorView* x) {
  if (isBoolean(x->dtype())) return Operand(false);
  if (isIntegral(x->dtype())) return Operand(int64_t{0});
  return Operand(0.0);
}

}  // namespace

TensorView* triu(TensorView* x, int64_t diagonal) {
  BRAZE_USER_CHECK(x != nullptr) << "triu: x is a null TensorView";
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  const int64_t rank = static_cast<int64_t>(dims.size());
  BRAZE_USER_CHECK(rank >= 2) << "triu(" << ops_detail::tensorLabel(x) << ", " << diagonal
                              << "): x has rank " << rank
                              << ", but triu needs at least 2 dims (rows and columns are its "
                                 "last two); unsqueeze a 1-D tensor first";
  Fusion& fusion = x->fusion();
  TensorView* rows = broadcast(iota(fusion, countedExtent(dims[rank - 2])), {false, true});
  TensorView* cols = broadcast(iota(fusion, countedExtent(dims[rank - 1])), {true, false});
  TensorView* keep = ge(sub(cols, rows), diagonal);
  if (rank > 2) {
    std::vector<bool> is_new(static_cast<size_t>(rank), true);
    is_new[rank - 2] = false;
    is_new[rank - 1] = false;
    keep = broadcast(keep, is_new);
  }
  return where(keep, Operand(x), zeroLike(x));
}

}  // namespace braze
