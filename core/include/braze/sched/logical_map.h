#pragma once

#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// A producer's logical IterDomain and the consumer root IterDomain that indexes the same
/// dimension across the op between them. A producer Broadcast may pair with a consumer
/// Iteration (elementwise broadcasting, expand): the consumer iterates where the producer
/// repeats one value.
struct LogicalPair {
  IterDomain* producer;
  IterDomain* consumer;
};

/// The dimension correspondence of the op that defines `consumer`, for its input `producer`:
/// pairs of (producer logical ID, consumer root ID), in producer order. The rules by op:
///
///   elementwise, cast, set  user-visible dims matched from the right (numpy broadcasting)
///   reductions, welford     dim i to dim i (the consumer keeps reduced dims as Reduction)
///   broadcast               the consumer's non-new dims, in order; new dims pair with nothing
///   expand                  dim i to dim i
///   permute                 consumer dim i to producer dim perm[i]
///   squeeze                 the dims that remain, in order
///   slice, pad              only dims left whole (same extent, start or left 0)
///   cat                     every dim but the concatenated one
///   select                  every dim but the selected one
///   index_select            x: every dim but `dim`; the index's dim 0 to `dim`
///   gather                  the index's dims to the output's; x's dims of equal extent but `dim`
///   matmul, linear          batch, M, N and K (to the consumer's Reduction K)
///   reshape, full, iota     nothing: propagation and inlining stop there
///
/// Requires `producer` to be an input of consumer->definition(); otherwise an Error naming both.
std::vector<LogicalPair> logicalMap(const TensorView* producer, const TensorView* consumer);

/// The tensors `tv`'s definition reads (each once, in input order).
std::vector<TensorView*> producersOf(const TensorView* tv);
/// The tensors computed from `tv` (each once, in order of use).
std::vector<TensorView*> consumersOf(const TensorView* tv);

}  // namespace braze
