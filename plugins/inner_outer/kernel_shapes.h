#pragma once

// The three kernel shapes of the inner-outer scheduler (inner_outer_scheduler.h describes
// them), one file each. schedule() caches inputs and outputs first, then applies one shape,
// then vectorizes and inlines.

#include <vector>

#include "braze/ir/fusion.h"
#include "inner_outer_params.h"

namespace braze::inner_outer {

/// [rows..., row] -> [rows, row]: the outer dims merged into one.
void mergeRows(TensorView* tv);

/// Registers: every persistent buffer that cheap elementwise ops (casts, add, sub, mul)
/// compute from the inputs' register copies (`caches`) is computed again from them where it is
/// read after a reduction, so that the copies stay in registers across the reductions instead
/// (in the inputs' own dtype: a bf16 row takes half the registers of its float copy). Dearer
/// buffers (softmax's exp) are kept. With `opaque_row_values`, the copies' per-row values (a
/// mean) are opaque to the C++ compiler (Fusion::setOpaqueToCompiler): otherwise it sees the
/// copied chain equal to the first and keeps the first pass's floats (x - mean) alive across the
/// reduction, in registers a packed plan does not have (a layer norm bf16 row of 65536 on 1024
/// threads spilled 232 bytes, 20 with them). Call before scheduleRegisters.
void keepOnlyInputCaches(Fusion& fusion, const std::vector<TensorView*>& caches,
                         bool opaque_row_values);
/// Whether a register schedule of `fusion` keeps a buffer that keepOnlyInputCaches does not
/// recompute (softmax's exp(x - max)): it holds floats beside the inputs' copies.
bool keepsDearBuffers(const Fusion& fusion);

/// Registers: [Unroll batch, BIDx rows/r, TIDy r, TIDx ceil(V/batch), v].
void scheduleRegisters(Fusion& fusion, TensorView* reference, const InnerOuterParams& params);

/// Inner-outer: the threads along a row as launched: more than a warp's worth that are not whole
/// warps are padded to them (scheduleInnerOuter), so the row reductions take warp shuffles.
int64_t paddedRowThreads(int64_t threads_x);
/// blockDim.x of the kernel `params` schedule: padded for inner-outer, threads_x otherwise.
int64_t launchedThreadsX(const InnerOuterParams& params);

/// Inner-outer (row reductions with column sums): [BIDx G, serial ceil(rows/(G u r)), Unroll u,
/// TIDy r, Unroll batch, TIDx, v] (no u dim when u is 1, no TIDy dim when r is 1), each column sum
/// an rFactored per-thread partial, then a block reduction over TIDy and a grid reduction over
/// BIDx. Call inlineIntoRowLoop after inlineMost.
void scheduleInnerOuter(Fusion& fusion, TensorView* reference, const InnerOuterParams& params,
                        const std::vector<TensorView*>& column_sums);
void inlineIntoRowLoop(Fusion& fusion, const InnerOuterParams& params);
/// Inner-outer with several rows per thread: the row inputs' register copies are computed at the
/// row loop, outside the unrolled rows, so every row's loads issue before the first reduction.
/// Call after inlineIntoRowLoop.
void loadRowsFirst(const std::vector<TensorView*>& caches, const InnerOuterParams& params);

/// Multi-wave: [ceil(V/(u t)) waves, BIDx rows, Unroll u, TIDx t, v] (no u axis when
/// wave_unroll is 1). Call recomputePersistentBuffers before it (after caching), and
/// loadWavesFirst (on the input caches), moveRowSizedRegistersToGlobal and
/// alternateWaveDirections after inlineMost.
void recomputePersistentBuffers(Fusion& fusion);
void scheduleMultiWave(Fusion& fusion, TensorView* reference, const InnerOuterParams& params);
void loadWavesFirst(const std::vector<TensorView*>& caches);
void moveRowSizedRegistersToGlobal(Fusion& fusion);
void alternateWaveDirections(Fusion& fusion);

}  // namespace braze::inner_outer
