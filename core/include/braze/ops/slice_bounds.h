#pragma once

// Reading a Slice Expr's bounds back. slice() keeps each dim's normalized start and step as
// inputs and the count as the output's extent; writers of definitions (repr, saved files)
// need the normalized stop too, which is the value the count was computed from.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "braze/ir/fusion.h"

namespace braze {

/// A slice dim's normalized stop: a Scalar of the fusion, or a constant (`value` null).
struct SliceStop {
  const Scalar* value = nullptr;
  int64_t constant = 0;
};

/// The normalized stop of dim `dim` of the Slice `slice`, read back from the count slice()
/// built: ceil_div(stop - start, step), stop - start for a step of 1, stop for a start of 0;
/// with a constant start and count, the least stop that keeps that count. nullopt when the
/// count has another form (a fusion not built by slice()).
std::optional<SliceStop> normalizedSliceStop(const Expr& slice, size_t dim);

}  // namespace braze
