// select, index_select (and take, its form with an index of any rank) and gather: reads at
// positions given by data; scatter writes at them. Negative positions count from the end; the
// evaluator normalizes them and reports out-of-range values at run time (kernels clamp them into
// the dim, see lower/index_compute.cpp), and a constant select index is checked here already.
//
//   select(T0: float32[i0{s0}, i1{s1}], 0, 2)          T1: float32[i2{s1}] = select(T0, 2, dim=0)
//   index_select(T0, 1, T2: int64[i3{s3}])             T3: float32[i4{s0}, i5{s3}]
//   take(T0, 0, T6: int64[i10{s6}, i11{s7}])           T7: float32[i12{s6}, i13{s7}, i14{s1}]
//   gather(T0, 1, T4: int64[i6{s4}, i7{s5}])           T5: float32[i8{s4}, i9{s5}]
//   scatter(T0, 1, T4, T6: float32[i15{s4}, i16{s5}])  T8: float32[i17{s0}, i18{s1}]

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

using ops_detail::tensorLabel;

void checkIndexTensor(std::string_view op, const TensorView* x, const TensorView* index,
                      int64_t rank) {
  BRAZE_USER_CHECK(index != nullptr) << op << ": the index tensor is null";
  BRAZE_USER_CHECK(&index->fusion() == &x->fusion())
      << op << ": the index tensor " << index->name() << " belongs to another fusion than "
      << x->name();
  BRAZE_USER_CHECK(isIntegral(index->dtype()))
      << op << " of " << tensorLabel(x) << ": the index tensor " << tensorLabel(index)
      << " has dtype " << index->dtype() << "; indices must be int32 or int64";
  BRAZE_USER_CHECK(index->rank() == rank)
      << op << " of " << tensorLabel(x) << ": the index tensor " << tensorLabel(index)
      << " has rank " << index->rank() << " but must have rank " << rank
      << (op == "gather" ? " (the rank of the input)" : "");
}

}  // namespace

TensorView* select(TensorView* x, int64_t dim, Operand index) {
  BRAZE_USER_CHECK(x != nullptr) << "select: the input tensor is null";
  const int64_t d = ops_detail::normalizeDim("select", x, dim, x->rank());
  Fusion& fusion = x->fusion();
  Scalar* position = ops_detail::indexScalar(fusion, index, "select", "index");
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  const std::optional<int64_t> value = position->constantInt();
  const std::optional<int64_t> size = dims[static_cast<size_t>(d)]->logicalExtent()->constantInt();
  BRAZE_USER_CHECK(!value || !size || (*value >= -*size && *value < *size))
      << "select on " << tensorLabel(x) << ": index " << *value << " is out of range for dim "
      << dim << " of size " << *size << "; valid indices are " << -*size << " .. " << *size - 1;
  std::vector<IterDomain*> domain;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (i != d) domain.push_back(ops_detail::freshIterDomain(dims[static_cast<size_t>(i)]));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Select, std::vector<Val*>{x, position}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"dim", d}});
  return y;
}

TensorView* take(TensorView* x, int64_t dim, TensorView* index) {
  BRAZE_USER_CHECK(x != nullptr) << "take: the input tensor is null";
  const int64_t d = ops_detail::normalizeDim("take", x, dim, x->rank());
  checkIndexTensor("take", x, index, index == nullptr ? 0 : index->rank());
  Fusion& fusion = x->fusion();
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<IterDomain*> domain;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (i != d) {
      domain.push_back(ops_detail::freshIterDomain(dims[static_cast<size_t>(i)]));
      continue;
    }
    // The dim is replaced by the index's dims; an expanded index dim becomes real data.
    for (IterDomain* id : index->logicalNoReductions())
      domain.push_back(ops_detail::iterDomainOfExtent(fusion, id->logicalExtent()));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::IndexSelect, std::vector<Val*>{x, index}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"dim", d}});
  return y;
}

TensorView* index_select(TensorView* x, int64_t dim, TensorView* index) {
  BRAZE_USER_CHECK(x != nullptr) << "index_select: the input tensor is null";
  ops_detail::normalizeDim("index_select", x, dim, x->rank());
  checkIndexTensor("index_select", x, index, 1);
  return take(x, dim, index);
}

TensorView* gather(TensorView* x, int64_t dim, TensorView* index) {
  BRAZE_USER_CHECK(x != nullptr) << "gather: the input tensor is null";
  const int64_t d = ops_detail::normalizeDim("gather", x, dim, x->rank());
  checkIndexTensor("gather", x, index, x->rank());
  Fusion& fusion = x->fusion();
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  const std::vector<IterDomain*> index_dims = index->logicalNoReductions();
  std::vector<IterDomain*> domain;
  for (int64_t i = 0; i < x->rank(); ++i) {
    Scalar* extent = index_dims[static_cast<size_t>(i)]->logicalExtent();
    if (i != d) {
      // As torch.gather: the other dims of index may be shorter than x's, never longer.
      const std::optional<int64_t> wanted = extent->constantInt();
      const std::optional<int64_t> size =
          dims[static_cast<size_t>(i)]->logicalExtent()->constantInt();
      BRAZE_USER_CHECK(!wanted || !size || *wanted <= *size)
          << "gather of " << tensorLabel(x) << " along dim " << dim << ": the index tensor "
          << tensorLabel(index) << " has size " << *wanted << " at dim " << i
          << " but the input has only " << *size << "; index sizes may not exceed the input's "
          << "except at the gathered dim";
    }
    // The output is computed element by element, so an expanded index dim becomes real data.
    domain.push_back(ops_detail::iterDomainOfExtent(fusion, extent));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Gather, std::vector<Val*>{x, index}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"dim", d}});
  return y;
}

TensorView* scatter(TensorView* x, int64_t dim, TensorView* index, TensorView* src) {
  BRAZE_USER_CHECK(x != nullptr) << "scatter: the input tensor is null";
  const int64_t d = ops_detail::normalizeDim("scatter", x, dim, x->rank());
  checkIndexTensor("scatter", x, index, x->rank());
  BRAZE_USER_CHECK(src != nullptr) << "scatter of " << tensorLabel(x) << ": src is null";
  BRAZE_USER_CHECK(&src->fusion() == &x->fusion())
      << "scatter: src " << src->name() << " belongs to another fusion than " << x->name();
  BRAZE_USER_CHECK(src->rank() == x->rank())
      << "scatter of " << tensorLabel(x) << ": src " << tensorLabel(src) << " has rank "
      << src->rank() << " but must have rank " << x->rank() << " (the rank of the input)";
  BRAZE_USER_CHECK(src->dtype() == x->dtype())
      << "scatter of " << tensorLabel(x) << ": src " << tensorLabel(src) << " has dtype "
      << src->dtype() << " but the input has " << x->dtype() << "; cast src first";
  const std::vector<IterDomain*> x_dims = x->logicalNoReductions();
  const std::vector<IterDomain*> index_dims = index->logicalNoReductions();
  const std::vector<IterDomain*> src_dims = src->logicalNoReductions();
  // As torch.scatter: index is no larger than src anywhere, nor than x except at `dim`.
  auto check_fits = [&](size_t i, const IterDomain* other, std::string_view what) {
    const std::optional<int64_t> wanted = index_dims[i]->logicalExtent()->constantInt();
    const std::optional<int64_t> size = other->logicalExtent()->constantInt();
    if (!wanted || !size) return;
    BRAZE_USER_CHECK(*wanted <= *size)
        << "scatter of " << tensorLabel(x) << " along dim " << dim << ": the index tensor "
        << tensorLabel(index) << " has size " << *wanted << " at dim " << i << " but " << what
        << " has only " << *size;
  };
  for (size_t i = 0; i < index_dims.size(); ++i) {
    check_fits(i, src_dims[i], "src");
    if (static_cast<int64_t>(i) != d) check_fits(i, x_dims[i], "the input");
  }
  Fusion& fusion = x->fusion();
  auto* y = fusion.create<TensorView>(x->dtype(), ops_detail::freshDomain(x));
  fusion.create<Expr>(OpKind::Scatter, std::vector<Val*>{x, index, src}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"dim", d}});
  return y;
}

}  // namespace braze
