#pragma once

// Which Exprs the segmenter replicates into every segment that needs them instead of giving
// them a segment of their own (SegmenterOptions::forward_input_chains). Internal to
// core/src/segment.

#include <vector>

#include "braze/ir/fusion.h"

namespace braze::segment_detail {

/// Per Expr of `exprs` (a fusion's exprs(), topological): whether it is forwarded. Forwardable
/// are factories (full, iota) and cheap ops of one tensor input that is a fusion input or the
/// output of a forwardable Expr: elementwise ops whose other operands are scalars, broadcast,
/// expand, squeeze and set. Of those, forwarded are the ones a non-forwardable Expr needs,
/// directly or through other forwarded ones; the rest (chains that only end in fusion outputs)
/// stay ordinary Exprs.
std::vector<bool> forwardedExprs(const std::vector<Expr*>& exprs);

}  // namespace braze::segment_detail
