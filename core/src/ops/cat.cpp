// cat: concatenation along one dim. Inputs are promoted to one dtype first (a cast for each
// input of another dtype); the output's cat dim is the sum of the inputs' sizes there:
//
//   cat({T0: float32[i0{s0}, i1{3}], T1: float32[i2{s0}, i3{s1}]}, 1)
//     s2 = add(3, s1)
//     T2: float32[i4{s0}, i5{s2}] = cat(T0, T1, dim=1)

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

std::string labelOf(const std::vector<TensorView*>& xs, size_t i) {
  return ops_detail::tensorLabel(xs[i]) + " (tensor " + std::to_string(i) + " of the list)";
}

// The size of output dim `dim` (not the cat dim): the first constant size among the inputs,
// else the first input's. Constant sizes that disagree are refused.
Scalar* agreedExtent(const std::vector<TensorView*>& xs, int64_t dim, int64_t cat_dim) {
  Scalar* chosen = nullptr;
  size_t chosen_index = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    Scalar* extent = xs[i]->logicalNoReductions()[static_cast<size_t>(dim)]->logicalExtent();
    if (!extent->isConstant()) continue;
    if (chosen == nullptr) {
      chosen = extent;
      chosen_index = i;
      continue;
    }
    BRAZE_USER_CHECK(*extent->constantInt() == *chosen->constantInt())
        << "cat: " << labelOf(xs, i) << " has size " << extent->name() << " at dim " << dim
        << " but " << labelOf(xs, chosen_index) << " has size " << chosen->name()
        << "; all tensors must agree on every dim except the cat dim " << cat_dim;
  }
  return chosen != nullptr
             ? chosen
             : xs[0]->logicalNoReductions()[static_cast<size_t>(dim)]->logicalExtent();
}

}  // namespace

TensorView* cat(const std::vector<TensorView*>& xs, int64_t dim) {
  BRAZE_USER_CHECK(!xs.empty()) << "cat: the list of tensors is empty; give at least one";
  for (size_t i = 0; i < xs.size(); ++i) {
    BRAZE_USER_CHECK(xs[i] != nullptr) << "cat: tensor " << i << " of the list is null";
    BRAZE_USER_CHECK(&xs[i]->fusion() == &xs[0]->fusion())
        << "cat: " << xs[i]->name() << " (tensor " << i << " of the list) belongs to another "
        << "fusion than " << xs[0]->name();
  }
  const int64_t rank = xs[0]->rank();
  BRAZE_USER_CHECK(rank > 0) << "cat: " << labelOf(xs, 0)
                             << " is 0-d; 0-d tensors cannot be concatenated, unsqueeze them "
                                "to 1-d first";
  DataType dtype = xs[0]->dtype();
  for (size_t i = 1; i < xs.size(); ++i) {
    BRAZE_USER_CHECK(xs[i]->rank() == rank)
        << "cat: " << labelOf(xs, i) << " has rank " << xs[i]->rank() << " but " << labelOf(xs, 0)
        << " has rank " << rank << "; all tensors must have the same rank";
    dtype = promoteTypes(dtype, xs[i]->dtype());
  }
  const int64_t cat_dim = ops_detail::normalizeDim("cat", xs[0], dim, rank);
  Fusion& fusion = xs[0]->fusion();

  std::vector<IterDomain*> domain;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != cat_dim) {
      domain.push_back(ops_detail::iterDomainOfExtent(fusion, agreedExtent(xs, d, cat_dim)));
      continue;
    }
    Scalar* total = nullptr;
    for (TensorView* x : xs) {
      Scalar* extent = x->logicalNoReductions()[static_cast<size_t>(d)]->logicalExtent();
      total = total == nullptr ? extent : ops_detail::addExtents(total, extent);
    }
    domain.push_back(ops_detail::iterDomainOfExtent(fusion, total));
  }

  std::vector<Val*> inputs;
  for (TensorView* x : xs) inputs.push_back(x->dtype() == dtype ? x : cast(x, dtype));
  auto* y = fusion.create<TensorView>(dtype, std::move(domain));
  fusion.create<Expr>(OpKind::Cat, std::move(inputs), std::vector<Val*>{y},
                      std::vector<Attribute>{{"dim", cat_dim}});
  return y;
}

}  // namespace braze
