#pragma once

// Creating Split and Merge exprs over IterDomains, shared by the TensorView primitives and by
// transform replay. Internal to core/src/sched.
//
// IterType rules (so that lowering can tell a reduction loop from an iteration loop by the
// loop IterDomain alone):
//   split(Iteration) -> Iteration, Iteration      split(Reduction) -> Reduction, Reduction
//   split(Broadcast) -> Broadcast, Broadcast (extent 1; an expanded extent is split as well)
//   merge(Iteration, Iteration) -> Iteration      merge(Reduction, Reduction) -> Reduction
//   merge(Broadcast, Iteration) -> Iteration      merge(Broadcast, Broadcast) -> Broadcast
//   merge(Reduction, Broadcast) -> Reduction      merge(Reduction, Iteration) is refused.

#include <optional>
#include <string>
#include <string_view>

#include "braze/ir/fusion.h"

namespace braze::sched_detail {

struct SplitIds {
  IterDomain* outer;
  IterDomain* inner;
};

/// Creates `Split(in, factor) -> (outer, inner)`. With `inner_split` the factor is inner's
/// extent and outer's is ceil_div(extent, factor); otherwise the other way round. `factor`
/// must be a positive Index scalar (checked by the caller).
/// `outer_type` / `inner_type` override the outputs' IterType (rFactor turns the reduction
/// axes it keeps as partial results into Iteration axes).
SplitIds splitIterDomain(IterDomain* in, Scalar* factor, bool inner_split,
                         std::optional<IterType> outer_type = std::nullopt,
                         std::optional<IterType> inner_type = std::nullopt);

/// Why `outer` and `inner` cannot be merged, or nullopt when they can.
std::optional<std::string> mergeProblem(const IterDomain* outer, const IterDomain* inner);

/// Creates `Merge(outer, inner) -> out`; the caller has checked mergeProblem. `type` overrides
/// the output's IterType.
IterDomain* mergeIterDomains(IterDomain* outer, IterDomain* inner,
                             std::optional<IterType> type = std::nullopt);

/// True when two split factors are the same value: one Scalar, or equal constants.
bool sameScalar(const Scalar* a, const Scalar* b);

/// True when `expr` is a Split with these settings (same factor value and direction).
bool isSplitOf(const Expr* expr, const Scalar* factor, bool inner_split);

/// `axis` (negative counts from the end) as a position in [0, nLoopDims()), or an Error that
/// names `call` (the primitive as the user wrote it), the tensor and the valid range.
int64_t normalizeLoopAxis(const TensorView* tv, int64_t axis, std::string_view call);

/// "T3", or "T3 (input 0)" for a fusion input: how scheduling errors name a tensor.
std::string tensorLabel(const TensorView* tv);

}  // namespace braze::sched_detail
