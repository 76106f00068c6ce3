#pragma once

#include <memory>
#include <span>
#include <utility>

#include "braze/ir/fusion.h"

namespace braze {

/// Rewrites `fusion` in place into the form the schedulers are asked about: nvFuser-style
/// definitions stated the way Braze's schedulers take them. The executor cache applies it to
/// its copy of a fusion before segmenting; anything else that asks a scheduler about a user's
/// fusion (fd.sched.can_schedule, compute_heuristics, schedule) must ask about the prepared
/// one too, or it answers for a fusion fd.execute never schedules. First takeStreamAxes turns
/// ParallelType::Stream axes into the tensors' stream axes (the definition is then unscheduled,
/// and not counted as a rewrite); then, in order:
///   1. bypassRedundantExpands: elementwise ops read a broadcast instead of an expand that adds
///      nothing (`mul(x, broadcast_in_dim(w, x.shape(), [1]))`);
///   2. scattersAsMatches: a scatter becomes matches over its index, which the shipped
///      schedulers run (its symbolic extents must be among `equal_extents`, as the cache's are);
///   3. welfordAsSums: a Welford whose input the fusion reads anyway becomes two sums;
///   4. reductionsOverBroadcastsAsSqueezes: reductions over broadcast dims of extent 1 become
///      squeezes; after steps 2 and 3, so that it also sees the reductions they wrote;
///   5. copyUnsafeAliasedOutputs: an output written into an input that other parts still read
///      goes through a copy; last, since that depends on the fusion as it will run.
///
/// Requires: `equal_extents` pairs extents of `fusion` that every run checks equal before it
/// starts (the executor cache's extent checks, collected before this call, so none is lost);
/// pass none to assume nothing beyond equal Vals and constants. Returns how many rewrites
/// applied, 0 when the fusion was already in this form.
int64_t prepareForScheduling(Fusion& fusion,
                             std::span<const std::pair<const Val*, const Val*>> equal_extents);

/// A copy of `fusion` prepared as the executor cache prepares its own (prepareForScheduling,
/// with the extent equalities the cache collects from the definition): the fusion whose
/// segments a run schedules.
std::unique_ptr<Fusion> prepareCopyForScheduling(const Fusion& fusion);

}  // namespace braze
