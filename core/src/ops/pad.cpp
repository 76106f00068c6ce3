// pad (torch.nn.functional.pad, mode "constant"). Widths come in (left, right) pairs from the
// last dim backwards, as in PyTorch; the Pad Expr carries one pair per dim in dim order, with
// (0, 0) for dims left alone:
//
//   pad(T0: float32[i0{s0}, i1{s1}], {1, 2})
//     s2 = add(s1, 3)
//     T1: float32[i2{s0}, i3{s2}] = pad(T0, 0.0, 0, 0, 1, 2)

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

TensorView* pad(TensorView* x, const std::vector<Operand>& widths, Operand value) {
  BRAZE_USER_CHECK(x != nullptr) << "pad: the input tensor is null";
  const std::string label = ops_detail::tensorLabel(x);
  BRAZE_USER_CHECK(widths.size() % 2 == 0)
      << "pad of " << label << ": widths has " << widths.size()
      << " entries; give (left, right) pairs, starting from the last dim";
  const int64_t rank = x->rank();
  const auto padded_dims = static_cast<int64_t>(widths.size() / 2);
  BRAZE_USER_CHECK(padded_dims <= rank)
      << "pad of " << label << ": widths has " << padded_dims << " (left, right) pairs but the "
      << "tensor has rank " << rank << "; give at most one pair per dim";
  Fusion& fusion = x->fusion();
  Scalar* fill = ops_detail::scalarOfType(fusion, value, x->dtype(), "pad", "value");

  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<Val*> inputs{x, fill};
  std::vector<IterDomain*> domain;
  for (int64_t dim = 0; dim < rank; ++dim) {
    IterDomain* input = dims[static_cast<size_t>(dim)];
    // Pair p pads dim rank - 1 - p.
    const int64_t pair = rank - 1 - dim;
    if (pair >= padded_dims) {
      inputs.push_back(fusion.constantIndex(0));
      inputs.push_back(fusion.constantIndex(0));
      domain.push_back(ops_detail::freshIterDomain(input));
      continue;
    }
    const std::string where = " (dim " + std::to_string(dim) + ")";
    Scalar* left = ops_detail::indexScalar(fusion, widths[static_cast<size_t>(2 * pair)], "pad",
                                           "left width" + where);
    Scalar* right = ops_detail::indexScalar(fusion, widths[static_cast<size_t>(2 * pair + 1)],
                                            "pad", "right width" + where);
    inputs.push_back(left);
    inputs.push_back(right);
    if (left->isConstantEqualTo(0) && right->isConstantEqualTo(0)) {
      domain.push_back(ops_detail::freshIterDomain(input));
      continue;
    }
    // Constant widths are summed first so the extent is one add, not two.
    const std::optional<int64_t> l = left->constantInt();
    const std::optional<int64_t> r = right->constantInt();
    Scalar* extent =
        l && r
            ? ops_detail::addExtents(input->logicalExtent(), fusion.constantIndex(*l + *r))
            : ops_detail::addExtents(ops_detail::addExtents(input->logicalExtent(), left), right);
    const std::optional<int64_t> size = extent->constantInt();
    BRAZE_USER_CHECK(!size || *size >= 0)
        << "pad of " << label << ": dim " << dim << " of size " << input->logicalExtent()->name()
        << " with widths (" << left->name() << ", " << right->name() << ") would have size "
        << *size << "; negative widths may crop at most the whole dim";
    domain.push_back(ops_detail::iterDomainOfExtent(fusion, extent));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Pad, std::move(inputs), std::vector<Val*>{y});
  return y;
}

}  // namespace braze
