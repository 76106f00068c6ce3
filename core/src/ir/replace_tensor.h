#pragma once

#include "braze/ir/fusion.h"
#include "braze/ir/tensor_view.h"

namespace braze::ir_detail {

/// Every reader of `old` reads `replacement` instead, and it takes `old`'s place among the
/// outputs: how the rewrites before segmentation (welford_as_sums.h,
/// broadcast_reductions.h) swap a computation for an equal one.
void replaceTensorEverywhere(Fusion& fusion, TensorView* old, TensorView* replacement);

}  // namespace braze::ir_detail
