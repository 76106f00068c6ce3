#pragma once

// The matmul scheduler.
//
// Accepts linear(x [M, K] or [batch, M, K], weight [N, K] [, bias [N]]) and matmul(a [M, K] or
// [batch, M, K], b [K, N] or [batch, K, N]) in bf16 or fp16, the operands inputs of the fusion
// stored with K or with M (N) innermost (all four layouts; batch sizes of 1 broadcast), or casts
// of fp32 inputs stored K-major (converted in the kernel), on an sm_90 device, with a pointwise
// epilogue: whatever the fusion does after the contraction that
// braze/codegen/template_epilogue.h covers (bias rows or columns, activations, residual adds,
// scalings, casts, several outputs). Schedules it as its own kernel template (gemm_template.h)
// instead of a lowered loop nest; code generation writes the epilogue into it. Refused (with
// the reason): other dtypes, matrix-vector products, more than three batch dims, a batch dim
// stored innermost, prologues other than those casts, epilogues that move elements (reductions,
// permutes), strides that are not multiples of 16 bytes, other devices. The segmenter gives what is
// refused to other kernels; the executor cache copies operands with unaligned strides into aligned
// ones first (core/src/runtime/contraction_staging.h).

#include <optional>
#include <string>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "matmul_export.h"
#include "matmul_params.h"

namespace braze::matmul_scheduler {

/// nullopt when the fusion is a linear this scheduler runs; otherwise why not.
BRAZE_MATMUL_API std::optional<std::string> canScheduleCompileTime(const Fusion& fusion);
/// nullopt when the arguments and the device fit the kernel; otherwise why not.
BRAZE_MATMUL_API std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                               const SchedulerRuntimeInfo& info);
/// The heuristics: no change to the fusion. Requires both checks above to have passed.
BRAZE_MATMUL_API MatmulParams computeHeuristics(const Fusion& fusion,
                                                const SchedulerRuntimeInfo& info);
/// Attaches the kernel template for `params` to the fusion; params the template cannot
/// build (another tile than 128 x N x 64, a ring that does not fit) are an Error.
BRAZE_MATMUL_API void schedule(Fusion& fusion, const MatmulParams& params);

}  // namespace braze::matmul_scheduler
