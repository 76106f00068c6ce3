#pragma once

#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Computes `tv` inside the first `position` loops of each of its consumers (negative counts
/// from the end: -1 is every loop axis). Sets `tv`'s inline position, and that of the other
/// outputs of its definition (Welford's avg, m2 and n are computed together).
///
/// Refused, with an Error naming the tensor and the axis, when: `tv` is a fusion input (it is
/// not computed); the position is out of range; a loop axis left of `position` is a Reduction
/// of `tv` (its consumers need the finished reduction, so they cannot share that loop) or is
/// vectorized on either side (a vector access is one statement, with nothing inside it); axis i
/// of `tv` does not map (loop_map.h) to axis i of some consumer; or the two are bound to
/// different parallel types.
///
/// Consumers are the tensors of the fusion that contribute to an output.
void inlineAt(TensorView* tv, int64_t position);

/// The largest position inlineAt accepts for `tv` (0 for a fusion input).
int64_t maxInlinePosition(const TensorView* tv);

/// Inlines every computed tensor of `fusion` as deep as possible: up to its first Reduction or
/// vectorized axis, as far as its loop axes map to its consumers' and, when it has several
/// consumers, as far as those consumers already share loops. Tensors are visited consumers
/// first, so that the second rule sees where the consumers went: in a softmax, exp(x - max) is
/// read by a sum (inside the reduction loop) and by a division (after it), so it stays outside
/// the inner loop and is kept whole per row.
void inlineMost(Fusion& fusion);
/// As above, changing only the inline positions of `tensors` (others keep theirs).
void inlineMost(const std::vector<TensorView*>& tensors);

}  // namespace braze
