#pragma once

#include <cstdint>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// One reduction of a fusion: its output and where its reduced dims are.
struct ReductionInfo {
  /// The output (for Welford, the avg output; m2 and n share its domains).
  TensorView* tv;
  /// Positions of the Reduction dims in tv's logical domain.
  std::vector<int64_t> axes;
  /// True when the input's innermost dim in memory is reduced (an "inner" reduction: a row is
  /// contiguous); false for an "outer" reduction, which reduces across rows.
  bool inner;
};

/// The reductions (sum, prod, max, min, welford, and the K dim of matmul and linear) of the
/// Exprs that contribute to an output, in topological order.
std::vector<ReductionInfo> reductionAxes(const Fusion& fusion);

/// Whether any Expr contributing to an output reduces.
bool hasReductions(const Fusion& fusion);

}  // namespace braze
