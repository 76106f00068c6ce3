#pragma once

#include <cstdint>

#include "braze/ir/fusion.h"

namespace braze {

/// Reads the input of an expand instead of its output wherever the expand adds nothing: in an
/// elementwise op whose other tensor operands already span every expanded dim, the broadcast
/// tensor broadcasts implicitly to the same extents. nvFuser-style definitions write
/// `broadcast_in_dim(w, x.shape(), [1])` before every `mul(x, w)`; without this, each such
/// expand sits between a normalization's row loop and its weights, where schedulers that map
/// rows through broadcasts only (inner_outer) refuse the fusion. An expand that is an output,
/// or read by anything else, stays. Returns how many reads were rewired. The executor cache
/// applies it to its copy of a fusion before segmentation.
int64_t bypassRedundantExpands(Fusion& fusion);

}  // namespace braze
