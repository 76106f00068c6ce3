#pragma once

#include <cstdint>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// How wide a vector access to a tensor in global memory can be, and what only the actual
/// arguments can tell.
struct VectorizationLimit {
  /// Elements per access: a power of two, at most `max_bytes` / element size; 1 when the
  /// innermost dim is not contiguous.
  int64_t max_width = 1;
  /// The logical dims (outermost first) forming the contiguous innermost run a vector walks;
  /// a schedule merges these and splits off `max_width` elements.
  std::vector<IterDomain*> dims;
  /// When the run holds a symbolic extent: the extents of the whole run, whose product must
  /// be a multiple of the chosen width, checked at launch. Empty when constants decide.
  std::vector<Scalar*> extents_to_check;
  /// Dims outside the run whose strides are not implied by the layout (not contiguous): each
  /// stride must be a multiple of the width, checked at launch.
  std::vector<IterDomain*> strides_to_check;
  /// Always true for global tensors: the base pointer (with its offset) must be aligned to the
  /// vector size in bytes, which only the launch can check.
  bool needs_aligned_base = true;
};

/// The vectorization limit of `tv` from its contiguity, allocation order, dtype and extents.
/// The run starts at the innermost non-broadcast dim in memory (which must have stride 1) and
/// grows outward over contiguous dims until its constant extents hold `max_bytes` worth of
/// elements or a symbolic extent joins it. A tensor computed inside the fusion is row-major
/// and contiguous.
VectorizationLimit vectorizationLimit(const TensorView* tv, int64_t max_bytes = 16);

/// The largest width every tensor of `tensors` allows (the minimum of their limits), for a
/// schedule that vectorizes them along one common innermost dim.
int64_t commonVectorWidth(const std::vector<TensorView*>& tensors, int64_t max_bytes = 16);

}  // namespace braze
