#pragma once

// The sizes a launch gives the reference's dims (internal to the reduction plugin).

#include <cstdint>
#include <optional>
#include <vector>

#include "reduction_layout.h"
#include "reduction_scheduler.h"

namespace braze::reduction {

/// The extent of each of the reference's logical dims (reduced dims included; 1 for broadcast
/// dims) for these arguments, nullopt where it depends on a scalar input with no value. Runs
/// the core's validation of the arguments first (counts, dtypes, ranks, fixed and shared
/// sizes, broadcast dims, layouts), which throws a braze::Error on a mismatch. Requires
/// argumentProblem (braze/sched/runtime_arguments.h) to have passed.
std::vector<std::optional<int64_t>> referenceExtents(const Fusion& fusion,
                                                     const ReductionLayout& layout,
                                                     const SchedulerRuntimeInfo& info);

}  // namespace braze::reduction
