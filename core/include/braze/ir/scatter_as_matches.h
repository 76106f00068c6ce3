#pragma once

#include <cstdint>

#include "braze/ir/fusion.h"

namespace braze {

/// Rewrites each scatter(x, dim, index, src) as ops every scheduler knows: each position j
/// along `dim` of the result looks for the index entries that name it,
///
///   match[.., m, j, ..] = (index[.., m, ..] == j)            (negative entries from the end)
///   last[.., j, ..]     = max over m of (match ? m : -1)     (the last write wins, as in the
///                                                             reference evaluator)
///   y[.., j, ..]        = last >= 0 ? src[.., last, ..] : x[.., j, ..]
///
/// with index and src taken at x's extents in the other dims: extents known at definition time
/// that differ are widened (entries past the index's match nothing); symbolic ones are taken
/// as equal (scatterAssumesEqual), which the executor cache checks before each run. The
/// result reads x once, elementwise, so an output written into x (aliasOutputToInput) stays in
/// place. The work per element of y grows with index's extent along `dim`: cheap for the
/// common updates of a few positions (a cache written at the current step), quadratic for a
/// permutation of a long dim. Entries out of range write nothing, where the reference
/// evaluator reports them. Returns how many scatters were rewritten; the executor cache
/// applies it to its copy of a fusion before segmentation.
int64_t scattersAsMatches(Fusion& fusion);

/// Whether the rewrite takes extents `a` and `b` of a scatter's index and of its input or src
/// as equal without widening: both symbolic, or one symbolic and one constant, and not the
/// same value.
bool scatterAssumesEqual(const Scalar* a, const Scalar* b);

}  // namespace braze
