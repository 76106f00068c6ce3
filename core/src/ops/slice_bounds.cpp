#include "braze/ops/slice_bounds.h"

namespace braze {

namespace {

bool sameScalar(const Val* a, const Val* b) {
  if (a == b) return true;
  const auto* x = a->dynCast<Scalar>();
  const auto* y = b->dynCast<Scalar>();
  return x != nullptr && y != nullptr && x->constantInt() && x->constantInt() == y->constantInt();
}

}  // namespace

std::optional<SliceStop> normalizedSliceStop(const Expr& slice, size_t dim) {
  BRAZE_INTERNAL_CHECK(slice.op() == OpKind::Slice) << "normalizedSliceStop of " << slice.op();
  const auto* out = slice.output(0)->as<TensorView>();
  const Scalar& start = *slice.input(1 + 2 * dim)->as<Scalar>();
  const int64_t step = *slice.input(2 + 2 * dim)->as<Scalar>()->constantInt();
  const Scalar& count = *out->logicalNoReductions().at(dim)->logicalExtent();
  const std::optional<int64_t> begin = start.constantInt();
  const Scalar* length = &count;
  if (step != 1) {
    const Expr* def = count.definition();
    if (def != nullptr && def->op() == OpKind::CeilDiv &&
        def->input(1)->as<Scalar>()->isConstantEqualTo(step)) {
      length = def->input(0)->as<Scalar>();
    } else if (count.constantInt() && begin) {
      // The least stop that keeps `count` elements: the last one, plus one.
      const int64_t n = *count.constantInt();
      return SliceStop{nullptr, n == 0 ? *begin : *begin + (n - 1) * step + 1};
    } else {
      return std::nullopt;
    }
  }
  if (start.isConstantEqualTo(0)) {
    if (length->constantInt()) return SliceStop{nullptr, *length->constantInt()};
    return SliceStop{length, 0};
  }
  if (const Expr* def = length->definition();
      def != nullptr && def->op() == OpKind::Sub && sameScalar(def->input(1), &start)) {
    const auto* stop = def->input(0)->as<Scalar>();
    if (stop->constantInt()) return SliceStop{nullptr, *stop->constantInt()};
    return SliceStop{stop, 0};
  }
  if (length->constantInt() && begin) return SliceStop{nullptr, *begin + *length->constantInt()};
  return std::nullopt;
}

}  // namespace braze
