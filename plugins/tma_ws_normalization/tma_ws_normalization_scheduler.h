#pragma once

// The TMA warp-specialized normalization scheduler.
//
// Schedules any fusion code generation can write as a row program (braze/codegen/row_program.h):
// softmax, layer norm, RMS norm forward and backward, softmax backward, row sums, and any other
// chain of row reductions, sums over the rows and pointwise ops over [M, N] inputs with [N]
// parameters and [M] statistics, on an sm_90 or newer device. Schedules it as its own kernel
// template (row_template.h): each row split over the CTAs of a cluster (one CTA where it fits),
// copied once into shared memory by bulk copies, reduced there once per pass (or taken into
// registers by the first pass, register_rows, so the next row streams in meanwhile), the
// outputs computed from there; sums over the rows (weight gradients) added up by the grid.
//
// Ranked before braze::inner_outer, it takes only what it measured faster on (benchmarks/
// RESULTS.md): one pass over rows of 256 KiB or more without per-column inputs, such as softmax
// backward; softmax forward from rows of 128 KiB (2-byte rows whole in one CTA's registers
// where they fit, else from shared memory; float rows in registers over a cluster; the
// exponentials computed again in the outputs); layer norm and RMS norm forward on 2-byte rows
// from 256 KiB, rows in registers; and programs that also sum over the rows (layer norm and RMS
// norm backward, their weight and bias gradients) from rows of kMinColumnRowBytes.
// Refused (with the reason): fusions that are not row programs; other programs of several
// passes or with weights (float layer norm and RMS norm rows among them), one-pass rows under
// 256 KiB, or programs storing only per-row results (measured slower, or the reduction
// scheduler's); rows whose row inputs take less than kMinRowBytes together (kMinColumnRowBytes
// with sums over the rows; braze::inner_outer keeps those in registers at 90-99% of copy);
// rows too long for eight CTAs' shared memory; rows whose length is not a multiple of 16 bytes
// of every row input, inputs not contiguous along the row or not 16-byte aligned (the copy
// engine's rules); devices before sm_90.

#include <optional>
#include <string>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "tma_ws_normalization_export.h"
#include "tma_ws_normalization_params.h"

namespace braze::tma_ws_normalization {

/// Rows shorter than this (bytes of every row input together) are left to braze::inner_outer.
inline constexpr int64_t kMinRowBytes = 128 * 1024;
/// The same for programs with column reductions (norm backward: rows in shared memory, a ring
/// of stages, the CTAs' column partials added up by the grid at the end).
inline constexpr int64_t kMinColumnRowBytes = 32 * 1024;

/// nullopt when the fusion is a row program this scheduler runs; otherwise why not.
BRAZE_TMA_WS_NORMALIZATION_API std::optional<std::string> canScheduleCompileTime(
    const Fusion& fusion);
/// nullopt when the arguments and the device fit the kernel; otherwise why not.
BRAZE_TMA_WS_NORMALIZATION_API std::optional<std::string> canScheduleRunTime(
    const Fusion& fusion, const SchedulerRuntimeInfo& info);
/// The heuristics: no change to the fusion. Requires both checks above to have passed.
BRAZE_TMA_WS_NORMALIZATION_API TmaWsNormalizationParams
computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info);
/// Attaches the kernel template for `params` to the fusion; params the template cannot build
/// are an Error.
BRAZE_TMA_WS_NORMALIZATION_API void schedule(Fusion& fusion,
                                             const TmaWsNormalizationParams& params);

}  // namespace braze::tma_ws_normalization
