#pragma once

// The reduction scheduler.
//
// Accepts fusions whose reductions (sum, prod, max, min, mean, welford: var, var_mean) all
// reduce the same dims of the same data, with elementwise ops, casts, broadcasts, expands,
// permutes and squeezes before them (the prologue: casts, x * x, a bias add) and after them
// (the epilogue: sqrt, a division by N, a cast, keepdim's broadcast). Several reductions of one
// input (sum and max of x, welford's avg/m2/n) share one loop nest. It refuses, each with its
// reason: fusions without a reduction (the pointwise scheduler's), reductions over different
// dims, a reduction that reads another reduction's result and values read again after a
// reduction (normalizations: the inner_outer scheduler's), outputs that keep a reduced dim,
// matmul and linear, and the ops the pointwise scheduler also refuses (reshape, slice, pad, cat,
// select, gather, index_select, full, iota).
//
// The dims are grouped (reduction_layout.h): I, the iteration dims merged, and R, the reduced
// dims merged, each in memory order; the innermost dim in memory is split by the vector width v
// first, so that v-element loads stay inside one contiguous run. Inner (row) reductions reduce
// the innermost dim, outer (column) reductions keep it.
//
//   inner:  [BIDx I/ty, TIDy ty | BIDy g, serial, Unswitch, Unroll u, TIDx tx, v]
//   outer:  [BIDx I/(tx v), TIDx tx | BIDy g, serial, Unswitch, Unroll u, TIDy ty | v]
//                                     (reduced: right of the first |)
//
// The serial, unrolled and vector parts are reduced by each thread into registers (rFactor:
// per-thread partials, then a tree across threads); the rest is a block reduction across the
// reduced thread dim and, with g > 1, a grid reduction across BIDy. Welford, whose partials
// cannot be rFactored, runs the same loop nest as one op (the lowering accumulates per thread
// first, then merges across threads). Inputs read along the innermost dim are cached in
// registers and loaded as vectors of v elements, u vectors per thread per serial step. The
// Unswitch axis (extent 1) checks the bounds of a whole serial step once and runs it without
// per-element predicates when they hold, the common case.
//
// Measured on an H200 (copy of 256 MiB: 4.17 TB/s): row sums of 256 MiB, float32 and bfloat16,
// N from 256 to 262144, 4.20-4.35 TB/s; column sums 3.4-3.6 TB/s (float32) and 2.7-2.9 TB/s
// (bfloat16), held back by outer_grid's scalar loads.
//
// Strategy table (from the sizes, the dtypes and the device; see reduction_heuristics.cpp; the
// numbers were measured with row sums of 256 MiB on an H200):
//
//   inner, R/v <= 32          inner_warp: tx lanes per row, a power of two, each lane with at
//                             least 32 bytes of the row (u = 2 vectors for 256 bfloat16 on 16
//                             lanes: one 16-byte vector per lane reached only 75% of copy
//                             bandwidth), ty rows per block (256 threads). Rows shorter than a
//                             warp are reduced by shuffles within their group of lanes. tx == 1
//                             is inner_thread: one row per thread, rows on TIDx, no cross-thread
//                             reduction (rows of a few elements).
//   inner, R/v > 32           inner_block: up to 256 threads along the row, u = 64 bytes of
//                             loads per thread per step in flight, ty fills the block to 256
//                             threads when rows are short. 256 rather than 512 threads: eight
//                             resident blocks per SM overlap one block's reduction with the
//                             others' loads (4.11 against 3.91 TB/s, 4096 x 16384 float32).
//                             Up to 512 when rows x 256 threads are under a quarter of the
//                             device's threads (256 rows of 262144).
//   inner, few rows           inner_grid: when the blocks along I still hold under a quarter of
//                             the device's threads and a row takes several serial steps, g
//                             blocks split each row (g <= 65535, one wave of resident blocks)
//                             and a grid reduction combines them. Not earlier: the workspace
//                             and the second pass cost 5-15% when the SMs were busy anyway.
//   outer, many columns       outer_thread: tx up to 128 threads along the contiguous columns,
//                             each thread reduces whole columns (v of them) serially; coalesced
//                             loads, no cross-thread reduction at all.
//   outer, fewer columns      outer_block: when I/v threads are under half the device's, ty rows
//                             of R per block (block up to 512 threads) and a block reduction
//                             across TIDy.
//   outer, few columns        outer_grid: when the blocks along I hold under a quarter of the
//                             device's threads, g blocks split the rows; v = 1 then, because each
//                             vector lane would need a grid reduction of its own inside the lane
//                             loop, with the output written in that same iteration (unrolled up
//                             to 32 scalar loads per thread instead). When v = 1 would need no
//                             grid reduction either, vectors are kept and the grid dropped.
//
// Vector width: 16 bytes of the widest vectorized input, halved until it divides the innermost
// dim's extent, every vectorized input's data alignment and the strides that must be checked.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "reduction_export.h"
#include "reduction_params.h"

namespace braze::reduction {

/// nullopt when the fusion's ops and shapes fit the reduction kernel; otherwise why not.
BRAZE_REDUCTION_API std::optional<std::string> canScheduleCompileTime(const Fusion& fusion);

/// nullopt when the arguments fit (one per input, ranks as declared, sizes that agree where
/// the fusion says they must, no empty dim); otherwise why not. Tests build `info` with
/// contiguousRuntimeInfo (braze/plugin/scheduler_runtime_info.h).
BRAZE_REDUCTION_API std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                                                  const SchedulerRuntimeInfo& info);

/// The heuristics: no change to the fusion. Requires both checks above to have passed.
BRAZE_REDUCTION_API ReductionParams computeHeuristics(const Fusion& fusion,
                                                      const SchedulerRuntimeInfo& info);

/// Applies `params` to the fusion with scheduling primitives only. Requires
/// canScheduleCompileTime(fusion) to have passed; refuses params that do not fit the fusion
/// (an inner kernel for an outer reduction) with an Error.
BRAZE_REDUCTION_API void schedule(Fusion& fusion, const ReductionParams& params);

}  // namespace braze::reduction
