#pragma once

// The output shape of an elementwise op: the broadcast of its tensor operands' shapes.
// Internal to core/src/ops.

#include <span>
#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::ops_detail {

/// A tensor operand of an elementwise op and the argument name errors use for it.
struct BroadcastOperand {
  const TensorView* tensor;
  std::string_view argument;
};

/// Fresh IterDomains for the output of elementwise op `op` over `operands` (at least one), in
/// the fusion of the first. User-visible dims are matched from the right, numpy style; a
/// missing leading dim acts as a broadcast.
///
/// An output dim is Broadcast only where every operand is Broadcast (or absent); it keeps an
/// expanded extent when one operand has it, preferring a constant. Otherwise it is Iteration,
/// with the extent of an operand's Iteration dim: a constant other than 1 first, then a
/// symbolic extent, then 1. Two different constant sizes (neither 1) are an Error naming the
/// op, both tensors, their dims and sizes; differing symbolic sizes are left for evaluation.
std::vector<IterDomain*> broadcastDomain(std::string_view op,
                                         std::span<const BroadcastOperand> operands);

}  // namespace braze::ops_detail
