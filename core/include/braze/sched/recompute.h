#pragma once

#include <functional>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/sched/persistent_buffer.h"

namespace braze {

/// True when `op` computes each output element from the input elements at the same position
/// (elementwise ops, casts, sets) or from one input element seen along new dims (broadcast):
/// the ops recomputeFor copies.
bool isPerElementOp(OpKind op);

/// True when recomputeFor can copy how `tv` is computed: `tv` is not a fusion input and its
/// definition is a per-element op (isPerElementOp) with one output.
bool isRecomputable(const TensorView* tv);

/// Gives `uses` (Exprs that read `tv`) their own copy of `tv`'s definition chain: each Expr
/// from `tv` back to its sources is copied, with a fresh tensor and fresh IterDomains (same
/// extents and iteration types) for each tensor it computes, and `uses` read the copy of `tv`
/// instead; `tv`'s other uses keep reading `tv`. The chain is followed back through tensors
/// that isRecomputable accepts; it stops at (reads as they are) fusion inputs and tensors that
/// another op computes, such as reduction results. A persistent buffer read on both sides of a
/// reduction is then computed twice from the fusion's inputs instead of kept:
///
///   T1 = cast(T0); T2 = max(T1, 1); T3 = T1 - broadcast(T2)         T1 is persistent
///   recomputeFor(T1, {the sub}):
///   T1 = cast(T0); T2 = max(T1, 1); T4 = cast(T0); T3 = T4 - broadcast(T2)
///
/// The copies are MemoryType::Local, with a loop domain equal to their logical domain and inline
/// position 0, as cacheAfter's copies: recompute before scheduling, then propagate transforms.
/// Tensors in `stop_at` are read as they are too: a persistent schedule keeps the register
/// copies of its inputs (cacheAfter) and recomputes from them rather than from global memory.
/// Refused with an Error naming the tensor when `tv` is not recomputable or is in `stop_at`,
/// `uses` is empty, or an Expr of `uses` does not read `tv`. Returns the copy of `tv`.
TensorView* recomputeFor(TensorView* tv, const std::vector<Expr*>& uses,
                         const std::vector<const TensorView*>& stop_at = {});

/// Until no persistent buffer of `fusion` (persistentBuffers) is one that `accept` takes,
/// recomputable, outside `stop_at` and read again after its reduction: gives those rereads
/// their own copy of the buffer's chain (recomputeFor with `stop_at`), one buffer per round. A
/// schedule calls it to keep on chip only what it cannot compute again: a multi-wave schedule
/// everything (the rows are re-read from the inputs), a register schedule only what is cheap
/// to recompute from the inputs' register copies.
void recomputeRereadBuffers(Fusion& fusion,
                            const std::function<bool(const PersistentBuffer&)>& accept,
                            const std::vector<const TensorView*>& stop_at = {});

}  // namespace braze
