// permute and transpose: output dim i is input dim perm[i]; the data does not move until a
// consumer reads it.

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"

namespace braze {

TensorView* permute(TensorView* x, const std::vector<int64_t>& dims) {
  BRAZE_USER_CHECK(x != nullptr) << "permute: the input tensor is null";
  const int64_t rank = x->rank();
  BRAZE_USER_CHECK(static_cast<int64_t>(dims.size()) == rank)
      << "permute of " << ops_detail::tensorLabel(x) << ": dims " << toString(AttributeValue(dims))
      << " has " << dims.size() << " entries but the tensor has rank " << rank
      << "; give a permutation of 0 .. " << rank - 1;
  std::vector<int64_t> perm;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t dim : dims) {
    const int64_t d = ops_detail::normalizeDim("permute", x, dim, rank);
    BRAZE_USER_CHECK(!seen[static_cast<size_t>(d)])
        << "permute of " << ops_detail::tensorLabel(x) << ": dims "
        << toString(AttributeValue(dims)) << " is not a permutation: dim " << d
        << " appears more than once; give each of 0 .. " << rank - 1 << " exactly once";
    seen[static_cast<size_t>(d)] = true;
    perm.push_back(d);
  }
  const std::vector<IterDomain*> input = x->logicalNoReductions();
  std::vector<IterDomain*> domain;
  for (int64_t d : perm) domain.push_back(ops_detail::freshIterDomain(input[d]));
  Fusion& fusion = x->fusion();
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Permute, std::vector<Val*>{x}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"perm", perm}});
  return y;
}

TensorView* transpose(TensorView* x, int64_t dim0, int64_t dim1) {
  BRAZE_USER_CHECK(x != nullptr) << "transpose: the input tensor is null";
  const int64_t a = ops_detail::normalizeDim("transpose", x, dim0, x->rank());
  const int64_t b = ops_detail::normalizeDim("transpose", x, dim1, x->rank());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < x->rank(); ++d) perm.push_back(d == a ? b : d == b ? a : d);
  return permute(x, perm);
}

}  // namespace braze
