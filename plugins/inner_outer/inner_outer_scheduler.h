#pragma once

// The inner-outer (persistent normalization) scheduler.
//
// Accepts fusions that reduce rows (the innermost dim of a [rows..., row] tensor) and read
// again, after the reduction, values the reduction read: softmax, log-softmax, layer norm,
// RMS norm, softmax backward; and, next to such row reductions, sums over the rows of 2D
// fusions (column sums: dw and db of layer norm and RMS norm backward, "inner-outer"). Ops:
// elementwise, casts, broadcast, set, sum/max/min/prod. It refuses, each with its reason:
// fusions without a reduction (the pointwise scheduler's), plain reductions whose inputs are
// not read again (the reduction scheduler's: it reads each row once already), reductions of
// other dims, ops whose loops it does not map (reshape, permute, slice, pad, cat, gather,
// matmul, Welford), and column sums with rows too long for registers.
//
// The kernel shapes it produces, from a reference output of the full [rows, row] shape (outer
// dims merged), with V = row / vector_width:
//
//   registers    [Unroll batch, BIDx rows/r, TIDy r, TIDx ceil(V/batch), Vectorize v]
//                The row is split by a constant persistent batch (outer split), so every
//                persistent buffer (the cached input, exp(x - max), x - mean, ...) is a
//                register array of batch * v elements per thread and the input is read from
//                global memory exactly once. blockDim.x = ceil(V / batch) is known only at
//                launch, but the params know it: blocks of 256 threads or more of bf16 rows ask
//                through launch bounds for 1024 threads per SM (64 registers each), and any
//                block of more than 512 threads states its size; the heuristics give each thread
//                four vectors (64 bytes of loads in flight with 16-byte vectors) with at most 512
//                threads along a row, more vectors only for longer rows, and stack r rows per block
//                when a row has fewer than 32 threads (measured with braze_inner_outer_sweep).
//                Division by a per-row value (softmax's sum) becomes a product with its reciprocal,
//                computed once per row. Row reductions are per-thread serial sums followed by one
//                block reduction (warp shuffles, then one round through shared memory). The batch
//                loop is outermost so that weights (no rows dim) share it with their readers
//                and are loaded one vector at a time after the reductions, not kept whole.
//   inner-outer  [BIDx G, serial ceil(rows/(G u r)), Unroll u, TIDy r, Unroll batch,
//                 TIDx ceil(V/batch), v]
//                Each of G blocks (all resident: one or two per SM, 512 or 1024 threads per SM,
//                launch bounds (threads, blocks per SM)) walks its share of the rows u r at a
//                time: r stacked along threadIdx.y and u unrolled in each thread, whose loads (and
//                per-row inputs such as mean and rstd) are all issued before the first row's
//                reductions. The heuristics take the block size and u that keep the most rows in
//                flight whose registers fit the launch bound (chooseInnerOuterBlock), then split
//                stacked rows into two blocks per SM, or, for one row reduction (RMS norm) with
//                rows of 512 threads or more, fill the SM with 1024 threads at 64 registers where
//                the buffers fit. Each thread computes dx from its rows' registers. Each column
//                sum is split (rFactor) into a per-thread serial partial over the thread's rows,
//                kept in batch * v registers beside the rows and shared by the u rows, then a
//                block reduction over threadIdx.y and a grid reduction of the G block partials,
//                in the same kernel, after the row loop: the blocks meet at a grid barrier
//                (a cooperative launch) and each finishes a share of the columns. Rows longer
//                than the registers shape's per-thread cap take 512 threads with up to 336 bytes
//                of buffers each (layer norm and RMS norm backward rows of 8192); longer rows
//                (16384) keep the column partials in shared memory, each thread's own slots, and
//                only the rows in registers, one block of 1024 threads per SM, where that measured
//                faster than two kernels (not RMS norm's 2-byte rows); longer ones are refused.
//   multi_wave   [ceil(V/(u t)) waves, BIDx rows, Unroll u, TIDx t, Vectorize v]
//                A row too long for registers: one block per row walks it in waves, once per
//                row reduction and once for the results. What a loop reads again after a
//                reduction (the float copy of a bf16 x, exp(x - max), x - mean) is computed
//                again in that loop from the inputs, read again from global memory (from L2
//                where the rows in flight fit it), and the per-row values already reduced
//                (registers); nothing is written to global memory but the outputs. Each thread
//                loads its u vectors of a wave iteration before using them, so u * t vectors
//                per block are in flight. t and u are chosen so that the rows all resident
//                blocks walk at once fit in L2 (512 threads and u = 8, or 1024 threads and
//                u = 4 for one block per SM). The wave loop is outermost so that a weight's
//                float copy, which has no rows dim, is computed u vectors at a time inside it.
//
// Why the rows never live in shared memory: rows of 16384 with column sums, their row inputs and
// weights in (dynamic) shared memory and only the column partials in registers, one block of
// 1024 threads per SM, ran at 20-46% of copy on an H200: one row per SM in flight, the loads of
// the next row waiting for the current row's reductions. The partials in shared memory and the
// rows in registers (shared_column_partials) do better, 32-75% of copy, with the same one row
// in flight; the next rows' loads overlapped with the current row (asynchronous copies into a
// ring of stages) are what is missing.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "inner_outer_export.h"
#include "inner_outer_params.h"

namespace braze::inner_outer {

/// nullopt when the fusion is a normalization this scheduler handles; otherwise why not.
BRAZE_INNER_OUTER_API std::optional<std::string> canScheduleCompileTime(const Fusion& fusion);

/// nullopt when the arguments fit (one per input, ranks as declared, sizes that agree where
/// the fusion says they must, at least one row); otherwise why not. Tests build `info` with
/// contiguousRuntimeInfo (braze/plugin/scheduler_runtime_info.h).
BRAZE_INNER_OUTER_API std::optional<std::string> canScheduleRunTime(
    const Fusion& fusion, const SchedulerRuntimeInfo& info);

/// The heuristics: no change to the fusion. Requires both checks above to have passed.
BRAZE_INNER_OUTER_API InnerOuterParams computeHeuristics(const Fusion& fusion,
                                                         const SchedulerRuntimeInfo& info);

/// Applies `params` to the fusion with scheduling primitives only.
BRAZE_INNER_OUTER_API void schedule(Fusion& fusion, const InnerOuterParams& params);

}  // namespace braze::inner_outer
