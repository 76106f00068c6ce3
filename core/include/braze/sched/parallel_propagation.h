#pragma once

#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Gives each loop axis of `targets` the parallel type of the reference loop axis it maps to.
///
/// Axes are related through chains of producer/consumer loop maps (loop_map.h), along the
/// path that relates the most axes, through any tensor of the fusion; so run it after
/// propagateTransforms, which makes the maps line up. An axis with no counterpart keeps its
/// type. Serial is copied like any other type (it clears an earlier binding).
///
/// Vectorize is given only where parallelize() would accept it: the innermost axis of the
/// target, covering its (and its global producers') innermost contiguous dims. A type already
/// bound to another axis of the target is not given twice. With `types` non-empty only those
/// types are copied (for example vectorize cached inputs and outputs only).
void propagateParallelTypes(TensorView* reference, const std::vector<TensorView*>& targets,
                            const std::vector<ParallelType>& types = {});

/// As above, for every tensor of the reference's fusion.
void propagateParallelTypes(TensorView* reference);

/// For each loop axis of `reference`, the loop IterDomain of `tv` it maps to through the
/// fusion (or nullptr): the relation propagateParallelTypes uses.
std::vector<IterDomain*> mapReferenceLoop(TensorView* reference, TensorView* tv);

}  // namespace braze
