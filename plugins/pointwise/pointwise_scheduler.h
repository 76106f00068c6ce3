#pragma once

// The pointwise scheduler.
//
// Accepts fusions made only of elementwise ops (unary, binary, ternary such as where, and
// casts), broadcast, expand, permute, squeeze and copies, whose outputs all have the same
// rank. It refuses, each with its reason: reductions and Welford (the reduction scheduler's
// work), scans (the scan scheduler's), matmul and linear, reshape (a flat index would have to be
// re-split per tensor), slice, pad, cat, select, gather and index_select (indices shifted, guarded
// or read from a tensor), and factories (full, iota), none of which this scheduler's loop shape
// handles yet.
//
// The kernel it produces, from a reference output (the output with the fewest broadcast dims):
//
//   1D  all dims merged:   [BIDx, Unroll u, TIDx t, Vectorize v]
//       (with grid_stride: [serial, BIDx, Unroll u, TIDx t, Vectorize v])
//   2D  dims split at the broadcast break point b, [0, b) merged and [b, rank) merged:
//                          [BIDy, BIDx, Unroll u, TIDx t, Vectorize v]
//
// Inputs and outputs whose innermost memory run follows the reference's innermost dims are
// cached in registers (cacheAfter / cacheBefore) and moved as vectors of v elements; the
// others (permuted, broadcast along the vectorized side) are read element by element inside
// the same loop. Every intermediate lives in registers and is inlined into the innermost loop.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "pointwise_export.h"
#include "pointwise_params.h"

namespace braze::pointwise {

/// nullopt when the fusion's ops and shapes fit the pointwise kernel shape; otherwise why not.
BRAZE_POINTWISE_API std::optional<std::string> canScheduleCompileTime(const Fusion& fusion);

/// nullopt when the arguments fit (one per input, ranks as declared, sizes that agree where
/// the fusion says they must); otherwise why not. Tests build `info` with
/// contiguousRuntimeInfo (braze/plugin/scheduler_runtime_info.h).
BRAZE_POINTWISE_API std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                                  const SchedulerRuntimeInfo& info);

/// The heuristics: no change to the fusion. Requires both checks above to have passed.
BRAZE_POINTWISE_API PointwiseParams computeHeuristics(const Fusion& fusion,
                                                      const SchedulerRuntimeInfo& info);

/// Applies `params` to the fusion with scheduling primitives only.
BRAZE_POINTWISE_API void schedule(Fusion& fusion, const PointwiseParams& params);

}  // namespace braze::pointwise
