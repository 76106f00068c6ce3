// The copy ops: set (nvFuser's set), segment_set and stride_order.
//
// set is the same Expr as the copies scheduling makes (core/src/sched/cache.cpp), so lowering,
// codegen and the schedulers treat it alike. segment_set and stride_order are copies too (their
// OpFamily is Memory) with one more promise each: segment_set's output goes through global
// memory between two kernels (the segmenter never puts its producer and its readers in one
// segment), and stride_order's output is laid out in memory in the order it names.
//
//   T1 = segment_set(T0)              T1: float32[i1{s0}, i2{s1}]
//   T2 = stride_order(T0, [0, 1])     T2: float32[i3{s0}, i4{s1}], allocation order [1, 0]
//                                     (column-major: dim 0 has the smallest stride)

#include <sstream>

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"

namespace braze {

namespace {

TensorView* copyOf(OpKind op, std::string_view name, TensorView* x,
                   std::vector<Attribute> attributes = {}) {
  BRAZE_USER_CHECK(x != nullptr) << name << ": x is a null TensorView";
  Fusion& fusion = x->fusion();
  auto* y = fusion.create<TensorView>(x->dtype(), ops_detail::freshDomain(x));
  fusion.create<Expr>(op, std::vector<Val*>{x}, std::vector<Val*>{y}, std::move(attributes));
  return y;
}

}  // namespace

TensorView* set(TensorView* x) {
  return copyOf(OpKind::Set, "set", x);
}

TensorView* segment_set(TensorView* x) {
  return copyOf(OpKind::SegmentSet, "segment_set", x);
}

TensorView* stride_order(TensorView* x, const std::vector<int64_t>& stride_order) {
  BRAZE_USER_CHECK(x != nullptr) << "stride_order: x is a null TensorView";
  const int64_t rank = x->rank();
  std::ostringstream given;
  for (size_t d = 0; d < stride_order.size(); ++d) given << (d ? ", " : "[") << stride_order[d];
  given << "]";
  BRAZE_USER_CHECK(static_cast<int64_t>(stride_order.size()) == rank)
      << "stride_order of " << ops_detail::tensorLabel(x) << ": " << given.str() << " has "
      << stride_order.size() << " entries for a tensor of rank " << rank << "; give one per dim";
  // Allocation order: dims from the largest stride to the smallest.
  std::vector<int64_t> order(stride_order.size(), -1);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t stride_rank = stride_order[static_cast<size_t>(d)];
    BRAZE_USER_CHECK(stride_rank >= 0 && stride_rank < rank &&
                     order[static_cast<size_t>(rank - 1 - stride_rank)] < 0)
        << "stride_order of " << ops_detail::tensorLabel(x) << ": " << given.str()
        << " is not a permutation of 0.." << rank - 1 << " (entry " << d << " is " << stride_rank
        << "); give each dim the rank of its stride, 0 for the innermost";
    order[static_cast<size_t>(rank - 1 - stride_rank)] = d;
  }
  TensorView* y = copyOf(OpKind::StrideOrder, "stride_order", x, {{"stride_order", stride_order}});
  std::vector<std::optional<bool>> contiguity;
  for (const IterDomain* id : y->logicalNoReductions())
    contiguity.push_back(id->isBroadcast() ? std::nullopt : std::optional<bool>(true));
  y->setLayout(std::move(order), std::move(contiguity));
  return y;
}

}  // namespace braze
