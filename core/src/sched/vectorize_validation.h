#pragma once

// What parallelize(axis, Vectorize) and propagateParallelTypes check before vectorizing an axis.
// Internal to core/src/sched.

#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::sched_detail {

/// The logical dims one vectorized loop axis covers and the extents that must be multiples of
/// the vector width for every access to stay within one contiguous run.
struct VectorizedRange {
  int64_t width = 1;
  /// Logical dims (user-visible, broadcasts excluded) the axis is derived from, outermost first.
  std::vector<IterDomain*> dims;
  /// Extents that must be multiples of `width`; symbolic ones are checked at launch.
  std::vector<Scalar*> divisible_extents;
};

/// Why loop axis `axis` (normalized) of `tv` cannot be vectorized, or nullopt. The rules: the
/// axis is innermost, not a Reduction, has a constant power-of-two extent of at most 16 bytes,
/// is the inner part of inner splits of (merges of) the innermost logical dims, every constant
/// extent on the way is a multiple of the width, and `tv` (when in global memory) and every
/// global tensor its definition reads along those dims hold them contiguously, innermost.
std::optional<std::string> vectorizeProblem(const TensorView* tv, int64_t axis);

/// The range a valid vectorized axis covers (call after vectorizeProblem said yes).
VectorizedRange vectorizedRange(const TensorView* tv, int64_t axis);

}  // namespace braze::sched_detail
