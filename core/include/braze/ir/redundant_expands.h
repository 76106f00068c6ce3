#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "braze/ir/fusion.h"

namespace braze {

/// Reads the input of an expand instead of its output wherever the expand adds nothing: in an
/// elementwise op whose other tensor operands already span every expanded dim, the broadcast
/// tensor broadcasts implicitly to the same extents. nvFuser-style definitions write
/// `broadcast_in_dim(w, x.shape(), [1])` before every `mul(x, w)`; without this, each such
/// expand sits between a normalization's row loop and its weights, where schedulers that map
/// rows through broadcasts only (inner_outer) refuse the fusion. An expand read by an
/// elementwise op with no other tensor operand (RMS norm's
/// `reciprocal(broadcast_in_dim(rms, x.shape(), [0, 1]))`) moves below it: the op runs on the
/// broadcast tensor and its result is expanded. An expand that is an output, or read by
/// anything else, stays. Returns how many reads were
/// rewired or moved. Part of prepareForScheduling (braze/runtime/prepare_for_scheduling.h),
/// which the executor cache applies to its copy of a fusion before segmentation.
///
/// Extents count as the same when they are one Val, constants of one value, or connected by
/// `equal_extents`: pairs the caller checks equal before every run (the executor cache's
/// extent checks, collected before the rewrite, so none is lost).
int64_t bypassRedundantExpands(
    Fusion& fusion, std::span<const std::pair<const Val*, const Val*>> equal_extents = {});

}  // namespace braze
