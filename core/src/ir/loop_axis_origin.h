#pragma once

// Where a definition's parallelized loop axis comes from, for the passes that turn loop-domain
// annotations into tensor attributes (takeStreamAxes, takeShardings): a logical axis itself, or
// the outer axis of one split of a logical axis.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::ir_detail {

struct LoopAxisOrigin {
  int64_t logical_axis = 0;  ///< the logical axis it is, or splits
  /// The split whose outer axis it is: null for a logical axis. Its factor is constant_factor
  /// when constant; `by_count` for a split in that many parts (inner_split false).
  const Expr* split = nullptr;
  std::optional<int64_t> constant_factor;
  bool by_count = false;
};

/// The origin of loop axis `id` of `tv`, or, where it is neither a logical axis nor the outer
/// axis of a split of one, why not ("the inner axis of a split", "a merge of two axes", ...).
struct LoopAxisOriginOrReason {
  std::optional<LoopAxisOrigin> origin;
  std::string reason;
};
LoopAxisOriginOrReason loopAxisOrigin(const TensorView* tv, const IterDomain* id);

/// `tv`'s logical domain with logical axis `origin.logical_axis` replaced by its split's two
/// axes, applied to `expected` (the logical domain, possibly with other axes replaced already):
/// what the loop domain is when that split is its only scheduling.
void replaceBySplit(std::vector<IterDomain*>& expected, const TensorView* tv,
                    const LoopAxisOrigin& origin);

/// "T3" or "T0 (input 0)".
std::string tensorLabel(const TensorView* tv);

}  // namespace braze::ir_detail
