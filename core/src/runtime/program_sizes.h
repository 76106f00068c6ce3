#pragma once

// Sizes a host-program runner evaluates: extents, a loop's slice length, and the sizes of the
// memory a buffer gets (this device's part of a sharded tensor; a ring's slots). Shared by the
// host and device runners, which walk a program instruction by instruction.

#include <algorithm>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/host/host_program.h"
#include "braze/host/resharding.h"

namespace braze::runtime_detail {

/// Program extent slot `ref`.
inline int64_t programExtent(const host::HostProgram& program, ExpressionEvaluator& extents,
                             const host::ValueRef& ref) {
  return toInt64(
      extents.evaluateOrThrow(program.extents[static_cast<size_t>(ref.index)], "extent"));
}

/// The length of every slice of loop `loop` but the last.
inline int64_t loopSliceLength(const host::HostProgram& program, ExpressionEvaluator& extents,
                               int32_t loop) {
  const host::Loop& l = program.loops[static_cast<size_t>(loop)];
  const int64_t whole = programExtent(program, extents, l.extent);
  return std::min(l.slicing.sliceLength(whole), whole);
}

/// The sizes of the memory `allocate` gets: the original tensor's, this device's part of them
/// for a sharded tensor, and along a ring's axis its slots of the loop's slices.
inline std::vector<int64_t> allocationSizes(const host::HostProgram& program,
                                            ExpressionEvaluator& extents,
                                            const host::Allocate& allocate) {
  std::vector<int64_t> sizes;
  for (const Val* e : allocate.extents)
    sizes.push_back(toInt64(extents.evaluateOrThrow(e, "a buffer's extent")));
  if (allocate.tensor->sharding()) sizes = localSizes(*allocate.tensor, sizes);
  if (allocate.ring_slots > 0) {
    const host::Loop& loop = program.loops[static_cast<size_t>(allocate.ring_loop)];
    const int64_t slices = loop.slicing.slices(programExtent(program, extents, loop.extent));
    sizes[static_cast<size_t>(allocate.ring_axis)] =
        std::min<int64_t>(allocate.ring_slots, slices) *
        loopSliceLength(program, extents, allocate.ring_loop);
  }
  return sizes;
}

}  // namespace braze::runtime_detail
