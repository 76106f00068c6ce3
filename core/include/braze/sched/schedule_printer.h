#pragma once

#include <ostream>
#include <string>

#include "braze/ir/fusion.h"

namespace braze {

/// The schedule of every tensor of `fusion` (inputs, then computed tensors in topological
/// order) as deterministic text, for BRAZE_DUMP=scheduled and for tests. For each tensor: its
/// definition, memory type and inline position; its root (only when it differs), logical and
/// loop domains; and under each domain the Split/Merge exprs that derive it. Extents print as
/// expressions over constants and symbolic scalars.
///
///   schedule:
///     T2: float32 = exp(T0)  memory=local inline=2
///       logical [i4{s0}, i5{s1}]
///       loop    [i8{ceil_div(mul(s0, s1), 128)}:BIDx, i9{128}:TIDx]
///         merge i4, i5 -> i7
///         split i7 by 128 -> i8, i9
std::string printSchedule(const Fusion& fusion);
void printSchedule(std::ostream& os, const Fusion& fusion);

/// One tensor's part of printSchedule.
std::string printSchedule(const TensorView* tv);

}  // namespace braze
