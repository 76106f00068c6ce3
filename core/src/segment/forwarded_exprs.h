#pragma once

// Which Exprs the segmenter replicates into every segment that needs them instead of giving
// them a segment of their own (SegmenterOptions::forward_input_chains), and which ops are cheap
// enough to replicate. Internal to core/src/segment.

#include <vector>

#include "braze/ir/fusion.h"

namespace braze::segment_detail {

/// Whether an Expr of `op` is cheap to compute again wherever its output is needed: elementwise
/// (unary, cast, binary, ternary), or one that keeps its input's shape or only adds, expands or
/// removes broadcast dims (broadcast, expand, squeeze, set). Recomputing such an Expr costs less
/// than a round trip through memory; reshape, permute and the indexing ops change how their
/// input is walked, so they are not.
bool isCheapToRecompute(OpKind op);

/// Per Expr of `exprs` (a fusion's exprs(), topological): whether it is forwarded. Forwardable
/// are factories (full, iota) and cheap ops of one tensor input that is a fusion input or the
/// output of a forwardable Expr: elementwise ops whose other operands are scalars, broadcast,
/// expand, squeeze and set, unless an op reads their output at data-dependent positions
/// (select, index_select, gather) or contracts it (matmul, linear): that tensor must be written
/// to memory first. Of those, forwarded
/// are the ones a non-forwardable Expr needs, directly or through other forwarded ones; the rest
/// (chains that only end in fusion outputs) stay ordinary Exprs.
std::vector<bool> forwardedExprs(const std::vector<Expr*>& exprs);

}  // namespace braze::segment_detail
