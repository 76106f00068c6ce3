#pragma once

#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Makes other tensors look like `reference`: replays its loop transforms (splits, merges and
/// the order of its loop axes) onto the tensors of `targets`, walking from the reference to its
/// producers and consumers (and the other outputs of multi-output ops) through each op's
/// logicalMap.
///
/// Each target is reached along the path that carries the most of the reference's loop axes
/// (a maximum spanning tree over the tensor graph, as nvFuser's), so that in
///
///   T1[i0, r1] = sum(T0[i0, i1]);  T2[i0, b] = broadcast(T1);  T3[i0, i1] = T0 - T2
///
/// T3 gets the reference's split of i1 from T0 rather than losing it through T2. The walk
/// passes only through `targets` (and the reference). A tensor replayed from a neighbor drops
/// its previous loop transforms and parallel types: its loop domain is rebuilt from its logical
/// domain. Dims with no counterpart are left whole, after the replayed axes; transforms of dims
/// that do not map (a reshape, a sliced dim) are skipped, so propagation stops there. A Merge
/// with one mapped input maps its output to that input's counterpart (a broadcast dim inserted
/// on one side). Inline positions of replayed tensors are reset to 0: inline after
/// propagating.
///
/// Returns the tensors whose loop domain was rebuilt, in the order they were reached.
std::vector<TensorView*> propagateTransforms(TensorView* reference,
                                             const std::vector<TensorView*>& targets);

/// As above, with every tensor of the reference's fusion as a target.
std::vector<TensorView*> propagateTransforms(TensorView* reference);

/// The tensors of `fusion` that contribute to an output, and its input tensors, in creation
/// order: what whole-fusion scheduling helpers visit.
std::vector<TensorView*> scheduledTensors(const Fusion& fusion);

}  // namespace braze
