#pragma once

#include <cstdint>

#include "braze/ir/fusion.h"

namespace braze {

/// Rewrites each Welford whose input the fusion also reads elsewhere, and whose count n is
/// not read, as two sums: mean = sum(x) / count, m2 = sum((x - mean)^2). The input is then read
/// by the fusion anyway (a layer norm centers and scales it), so a scheduler that keeps rows on
/// chip (inner_outer) reads it once for everything, where a Welford would have to be a segment
/// of its own; the two-pass variance is at least as accurate. A Welford of an input read by
/// nothing else (var_mean alone) stays one pass. Returns how many were rewritten. Part of
/// prepareForScheduling (braze/runtime/prepare_for_scheduling.h), which the executor cache
/// applies to its copy of a fusion before segmentation.
int64_t welfordAsSums(Fusion& fusion);

}  // namespace braze
