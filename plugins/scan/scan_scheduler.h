#pragma once

// The scan scheduler.
//
// Accepts fusions with at least one scan (cumsum, cumprod, cummax, cummin) whose other ops are
// elementwise (unary, binary, ternary, casts), broadcast, expand and copies, where every scan
// runs along the same dim of a reference output and all outputs have the reference's rank.
// Reductions, shape changes, indexing, factories and contractions are refused (the segmenter
// then gives them kernels of their own).
//
// The kernel it produces, from the reference output (the output with the fewest broadcast
// dims), with the scan dim s moved innermost and the other dims merged:
//
//   [BIDx, TIDx t, s (serial)]
//
// Each thread walks one line along s, carrying each scan's running value in a register (see
// build_loop_nests.cpp); every tensor is inlined into that loop and intermediates stay in
// registers. A block-level parallel scan for long lines and few of them is a later step.

#include <optional>
#include <string>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "scan_export.h"
#include "scan_params.h"

namespace braze::scan {

/// nullopt when the fusion's ops and shapes fit the scan kernel shape; otherwise why not.
BRAZE_SCAN_API std::optional<std::string> canScheduleCompileTime(const Fusion& fusion);
/// nullopt when the arguments fit the fusion's inputs; otherwise why not.
BRAZE_SCAN_API std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                             const SchedulerRuntimeInfo& info);
/// The heuristics: no change to the fusion. Requires both checks above to have passed.
BRAZE_SCAN_API ScanParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info);
/// Applies `params` to the fusion with scheduling primitives only.
BRAZE_SCAN_API void schedule(Fusion& fusion, const ScanParams& params);

}  // namespace braze::scan
