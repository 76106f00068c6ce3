// slice with Python semantics. Start and stop are normalized here (negative counts from the
// end, then clamped to [0, size]) so the Slice Expr only carries a start in [0, size] and a
// positive constant step per dim; the output's extents are the counts:
//
//   x[1:, ::2] on T0: float32[i0{s0}, i1{8}]
//     s1 = minimum(1, s0); s2 = sub(s0, s1)
//     T1: float32[i2{s2}, i3{4}] = slice(T0, s1, 1, 0, 2)
//
// Constant starts, stops and extents fold to constants; otherwise the normalization is a small
// scalar expression over the extent. A stop is also raised to at least the start, so the count
// is always ceil_div(stop - start, step) of normalized bounds:
//
//   x[a:b] on T0: float32[i0{10}], a and b index scalars
//     s3 = minimum(maximum(where(lt(a, 0), add(a, 10), a), 0), 10)       start
//     s7 = maximum(minimum(maximum(where(lt(b, 0), ...), 0), 10), s3)    stop
//     T1: float32[i1{sub(s7, s3)}] = slice(T0, s3, 1)
//
// slice(..., manual_normalization=true) takes start and stop as such normalized bounds and
// adds only that count, which is how repr writes a symbolic slice back.

#include <algorithm>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

using ops_detail::tensorLabel;

// A start or stop normalized into [0, extent].
Scalar* normalizeBound(Fusion& fusion, Scalar* bound, Scalar* extent) {
  Scalar* zero = fusion.constantIndex(0);
  const std::optional<int64_t> value = bound->constantInt();
  const std::optional<int64_t> size = extent->constantInt();
  if (value && size) {
    const int64_t shifted = *value < 0 ? *value + *size : *value;
    return fusion.constantIndex(std::clamp<int64_t>(shifted, 0, *size));
  }
  if (value && *value >= 0) {
    return *value == 0 ? bound : ops_detail::minExtents(bound, extent);
  }
  if (value) {
    // A negative constant: extent + value never exceeds the extent.
    return ops_detail::maxExtents(ops_detail::addExtents(extent, bound), zero);
  }
  Val* shifted = where(lt(bound, zero), add(bound, extent), bound);
  return ops_detail::minExtents(ops_detail::maxExtents(shifted->as<Scalar>(), zero), extent);
}

struct SlicedDim {
  Scalar* start;
  Scalar* step;
  IterDomain* id;
};

std::string boundText(const Scalar* bound) {
  const std::optional<int64_t> value = bound->constantInt();
  return value ? std::to_string(*value) : bound->name();
}

// manual_normalization trusts symbolic bounds, but constant ones that break the rule would
// read out of bounds without a word: those are refused here.
void checkNormalized(const TensorView* x, int64_t dim, const Scalar* start, const Scalar* stop,
                     const Scalar* extent) {
  const std::optional<int64_t> begin = start->constantInt();
  const std::optional<int64_t> end = stop->constantInt();
  const std::optional<int64_t> size = extent->constantInt();
  const bool normalized = (!begin || *begin >= 0) && (!begin || !end || *begin <= *end) &&
                          (!end || !size || *end <= *size) && (!begin || !size || *begin <= *size);
  BRAZE_USER_CHECK(normalized) << "slice of " << tensorLabel(x)
                               << " with manual_normalization: dim " << dim << " has start "
                               << boundText(start) << " and stop " << boundText(stop)
                               << " on a size of " << boundText(extent)
                               << "; normalized bounds satisfy 0 <= start <= stop <= size. Pass "
                                  "such bounds, or leave manual_normalization off to count "
                                  "negative bounds from the end and clamp them to the size";
}

// The dim a slice keeps of `input`, from normalized bounds (0 <= start <= stop <= extent).
// Both the Python-style and the manually normalized slice end here, so a Slice's count is
// always ceil_div(stop - start, step) of its normalized bounds (stop - start for a step of 1,
// stop for a start of 0): repr reads the stop back from it and rebuilds the same extent.
IterDomain* slicedDomain(IterDomain* input, Scalar* start, Scalar* stop, Scalar* step) {
  const int64_t step_value = *step->constantInt();
  if (start->isConstantEqualTo(0) && stop == input->logicalExtent() && step_value == 1) {
    return ops_detail::freshIterDomain(input);
  }
  Fusion& fusion = input->fusion();
  // Folds constants and `stop - 0`.
  Scalar* length = ops_detail::subExtents(stop, start);
  Scalar* count = step_value == 1 ? length : ops_detail::ceilDivExtents(length, step);
  if (input->hasExpandedExtent() && !count->isConstantEqualTo(1)) {
    // A slice of an expanded broadcast is still the same value repeated: keep it storage-free.
    return fusion.create<IterDomain>(input->extent(), IterType::Broadcast, count);
  }
  return ops_detail::iterDomainOfExtent(fusion, count);
}

SlicedDim sliceDim(const TensorView* x, int64_t dim, IterDomain* input, const SliceRange& range,
                   bool manual_normalization) {
  Fusion& fusion = x->fusion();
  const std::string where_text = " of dim " + std::to_string(dim);
  Scalar* step = ops_detail::indexScalar(fusion, range.step, "slice", "step" + where_text);
  const std::optional<int64_t> step_value = step->constantInt();
  BRAZE_USER_CHECK(step_value && *step_value > 0)
      << "slice of " << tensorLabel(x) << ": step" << where_text << " is " << step->name()
      << "; the step must be a positive constant";
  Scalar* extent = input->logicalExtent();
  Scalar* start = ops_detail::indexScalar(fusion, range.start, "slice", "start" + where_text);
  Scalar* stop = range.stop
                     ? ops_detail::indexScalar(fusion, *range.stop, "slice", "stop" + where_text)
                     : extent;
  if (manual_normalization) {
    checkNormalized(x, dim, start, stop, extent);
    return {start, step, slicedDomain(input, start, stop, step)};
  }
  start = normalizeBound(fusion, start, extent);
  if (range.stop) {
    stop = normalizeBound(fusion, stop, extent);
    // A stop before the start selects nothing: it is raised to the start, so that the count is
    // never negative. A start of 0 is below every normalized stop already.
    if (!start->isConstantEqualTo(0)) stop = ops_detail::maxExtents(stop, start);
  }
  return {start, step, slicedDomain(input, start, stop, step)};
}

}  // namespace

TensorView* slice(TensorView* x, const std::vector<SliceRange>& ranges, bool manual_normalization) {
  BRAZE_USER_CHECK(x != nullptr) << "slice: the input tensor is null";
  BRAZE_USER_CHECK(static_cast<int64_t>(ranges.size()) <= x->rank())
      << "slice of " << tensorLabel(x) << ": " << ranges.size()
      << " ranges given for a tensor of rank " << x->rank() << "; give at most one per dim";
  Fusion& fusion = x->fusion();
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<Val*> inputs{x};
  std::vector<IterDomain*> domain;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i >= ranges.size()) {
      inputs.push_back(fusion.constantIndex(0));
      inputs.push_back(fusion.constantIndex(1));
      domain.push_back(ops_detail::freshIterDomain(dims[i]));
      continue;
    }
    const SlicedDim sliced =
        sliceDim(x, static_cast<int64_t>(i), dims[i], ranges[i], manual_normalization);
    inputs.push_back(sliced.start);
    inputs.push_back(sliced.step);
    domain.push_back(sliced.id);
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Slice, std::move(inputs), std::vector<Val*>{y});
  return y;
}

TensorView* slice(TensorView* x, int64_t dim, Operand start, std::optional<Operand> stop,
                  Operand step) {
  BRAZE_USER_CHECK(x != nullptr) << "slice: the input tensor is null";
  const int64_t d = ops_detail::normalizeDim("slice", x, dim, x->rank());
  std::vector<SliceRange> ranges(static_cast<size_t>(d + 1));
  ranges[static_cast<size_t>(d)] = SliceRange{std::move(start), std::move(stop), std::move(step)};
  return slice(x, ranges);
}

}  // namespace braze
