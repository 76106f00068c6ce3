// reshape and flatten. The output's logical domain carries the new extents; a -1 is inferred
// from the element count. Identical symbolic factors on both sides cancel, so the inferred
// extent is often an input extent itself rather than a division:
//
//   x: T0: float32[i0{s0}, i1{s1}, i2{4}]
//   reshape(x, {s0, -1}):  T1: float32[i3{s0}, i4{s5}]   with s5 = mul(s1, 4)

#include <algorithm>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

using ops_detail::tensorLabel;

// A product of extents as a constant times symbolic factors.
struct Factors {
  int64_t constant = 1;
  std::vector<Scalar*> symbolic;

  void multiply(Scalar* extent) {
    if (std::optional<int64_t> value = extent->constantInt()) {
      constant *= *value;
    } else {
      symbolic.push_back(extent);
    }
  }
  bool isConstant() const { return symbolic.empty(); }
};

// Removes the symbolic factors a and b share (the same Scalar, so the same value).
void cancelCommonFactors(Factors& a, Factors& b) {
  for (auto it = b.symbolic.begin(); it != b.symbolic.end();) {
    auto match = std::find(a.symbolic.begin(), a.symbolic.end(), *it);
    if (match == a.symbolic.end()) {
      ++it;
      continue;
    }
    a.symbolic.erase(match);
    it = b.symbolic.erase(it);
  }
}

Scalar* productOf(Fusion& fusion, const Factors& factors) {
  if (factors.constant == 0) return fusion.constantIndex(0);
  Scalar* product = nullptr;
  for (Scalar* factor : factors.symbolic) {
    product = product == nullptr ? factor : ops_detail::mulExtents(product, factor);
  }
  if (product == nullptr) return fusion.constantIndex(factors.constant);
  if (factors.constant == 1) return product;
  return ops_detail::mulExtents(product, fusion.constantIndex(factors.constant));
}

std::string sizesText(const std::vector<Scalar*>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) text += ", ";
    text += sizes[i]->name();
  }
  return text + "]";
}

// The extent of the -1 entry: numel divided by the product of the other sizes.
Scalar* inferExtent(const TensorView* x, const Factors& numel, const Factors& known,
                    const std::vector<Scalar*>& sizes) {
  Fusion& fusion = x->fusion();
  BRAZE_USER_CHECK(known.constant != 0)
      << "reshape of " << tensorLabel(x) << ": shape " << sizesText(sizes)
      << " has a -1 beside a size 0, so the -1 could be any value; give every size";
  if (numel.isConstant() && known.isConstant()) {
    BRAZE_USER_CHECK(numel.constant % known.constant == 0)
        << "reshape of " << tensorLabel(x) << ": " << numel.constant
        << " elements cannot be viewed as " << sizesText(sizes) << ": " << numel.constant
        << " is not a multiple of " << known.constant;
    return fusion.constantIndex(numel.constant / known.constant);
  }
  Factors remaining_numel = numel;
  Factors remaining_known = known;
  cancelCommonFactors(remaining_numel, remaining_known);
  if (remaining_known.isConstant() && remaining_numel.constant % remaining_known.constant == 0) {
    remaining_numel.constant /= remaining_known.constant;
    return productOf(fusion, remaining_numel);
  }
  Val* quotient = div(productOf(fusion, remaining_numel), productOf(fusion, remaining_known));
  return quotient->as<Scalar>();
}

}  // namespace

TensorView* reshape(TensorView* x, const std::vector<Operand>& shape) {
  BRAZE_USER_CHECK(x != nullptr) << "reshape: the input tensor is null";
  Fusion& fusion = x->fusion();
  Factors numel;
  for (IterDomain* id : x->logicalNoReductions()) numel.multiply(id->logicalExtent());

  std::vector<Scalar*> sizes;
  std::optional<size_t> inferred;
  Factors known;
  for (size_t i = 0; i < shape.size(); ++i) {
    Scalar* size =
        ops_detail::indexScalar(fusion, shape[i], "reshape", "shape[" + std::to_string(i) + "]");
    sizes.push_back(size);
    const std::optional<int64_t> value = size->constantInt();
    if (value == -1) {
      continue;
    }
    BRAZE_USER_CHECK(!value || *value >= 0)
        << "reshape of " << tensorLabel(x) << ": shape[" << i << "] is " << *value
        << "; sizes must be non-negative, or -1 for the one size to infer";
    known.multiply(size);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i]->constantInt() != -1) continue;
    BRAZE_USER_CHECK(!inferred) << "reshape of " << tensorLabel(x) << ": shape " << sizesText(sizes)
                                << " has more than one -1; at most one size can be inferred";
    inferred = i;
  }
  if (inferred) {
    sizes[*inferred] = inferExtent(x, numel, known, sizes);
  } else {
    BRAZE_USER_CHECK(!numel.isConstant() || !known.isConstant() || numel.constant == known.constant)
        << "reshape of " << tensorLabel(x) << ": " << numel.constant
        << " elements cannot be viewed as " << sizesText(sizes) << " (" << known.constant
        << " elements); the sizes must multiply to the element count";
  }

  std::vector<IterDomain*> domain;
  for (Scalar* size : sizes) domain.push_back(ops_detail::iterDomainOfExtent(fusion, size));
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Reshape, std::vector<Val*>{x}, std::vector<Val*>{y});
  return y;
}

TensorView* flatten(TensorView* x, int64_t start_dim, int64_t end_dim) {
  BRAZE_USER_CHECK(x != nullptr) << "flatten: the input tensor is null";
  // As PyTorch: a 0-d tensor flattens to one element.
  if (x->rank() == 0) return reshape(x, {int64_t{1}});
  const int64_t start = ops_detail::normalizeDim("flatten", x, start_dim, x->rank());
  const int64_t end = ops_detail::normalizeDim("flatten", x, end_dim, x->rank());
  BRAZE_USER_CHECK(start <= end) << "flatten of " << tensorLabel(x) << ": start_dim " << start_dim
                                 << " comes after end_dim " << end_dim
                                 << "; flatten merges dims start_dim .. end_dim";
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<Operand> shape;
  for (int64_t i = 0; i < start; ++i) shape.emplace_back(dims[i]->logicalExtent());
  shape.emplace_back(ops_detail::productOfExtents(
      x->fusion(), std::vector<IterDomain*>(dims.begin() + start, dims.begin() + end + 1)));
  for (int64_t i = end + 1; i < x->rank(); ++i) shape.emplace_back(dims[i]->logicalExtent());
  return reshape(x, shape);
}

}  // namespace braze
