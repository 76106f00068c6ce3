#pragma once

#include <cstdint>

#include "braze/ir/fusion.h"

namespace braze {

/// Rewrites sums, products, maxima and minima over broadcast dims of extent 1 as squeezes of
/// those dims (a reduction of one element is the element), reducing only the other axes, if
/// any. nvFuser-style definitions write `sum(t, dims=[1])` of a [rows, 1] tensor (RMS norm's
/// backward does); the schedulers reduce iteration dims only. Where such a result is broadcast
/// back at the same dims, the broadcast reads the reduction's input instead. Expanded broadcasts,
/// whose extent is not 1, stay reductions. Returns how many were rewritten. Part of
/// prepareForScheduling (braze/runtime/prepare_for_scheduling.h), which the executor cache
/// applies to its copy of a fusion before segmentation.
int64_t reductionsOverBroadcastsAsSqueezes(Fusion& fusion);

}  // namespace braze
