#pragma once

// How a fusion's dims group around its reduction, shared by the checks, the heuristics and
// the schedule (internal to the reduction plugin).
//
// The reference is the output of the first reduction (for Welford, its avg). Every tensor's
// logical dims are mapped to the reference's logical dims (reduced dims included) by
// mapDimsToReference. The reference's dims are then ordered as they lie in memory in the main
// input (the input tensor holding the most of them), and split into two groups:
//
//   x[i0, i1, r2] = input;  T1[i0, i1, r2(R)] = sum(x, {2})
//     iteration = {0, 1}, reduced = {2}, fast_dim = 2, inner = true
//   x[r0, i1] = input;  T1[r0(R), i1] = sum(x, {0})
//     iteration = {1}, reduced = {0}, fast_dim = 1, inner = false

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/sched/reference_dim_map.h"

namespace braze::reduction {

/// Per tensor, per logical dim (reduced dims included): the reference dim it indexes, or -1.
using DimMap = ReferenceDimMap;

struct ReductionLayout {
  /// The output of every reduction and Welford op (avg for Welford), in topological order.
  std::vector<TensorView*> reductions;
  TensorView* reference = nullptr;
  DimMap map;
  /// The reference's logical positions, outermost first in memory.
  std::vector<int64_t> memory_order;
  /// The reference's non-reduced (iteration and broadcast) positions, in memory order.
  std::vector<int64_t> iteration;
  /// The reference's reduced positions, in memory order.
  std::vector<int64_t> reduced;
  /// The innermost non-broadcast position in memory: the dim vectors walk.
  int64_t fast_dim = -1;
  /// True when fast_dim is reduced (rows are contiguous).
  bool inner = true;
};

/// True for the ops this kernel reduces: sum, prod, max, min (OpFamily::Reduction) and Welford.
bool isReductionExpr(const Expr* expr);

/// Why the reduction kernel cannot compute this fusion's reductions and outputs together
/// (reductions over different dims, a reduction of a reduction, a normalization, an output
/// that keeps the reduced dims, ...), or nullopt. Requires at least one reduction.
std::optional<std::string> layoutProblem(const Fusion& fusion);

/// The layout; requires layoutProblem(fusion) to be nullopt.
ReductionLayout reductionLayout(const Fusion& fusion);

/// The input tensors read along the fast dim in contiguous runs: they hold every dim of the
/// reference, and their innermost non-broadcast dim in memory maps to the fast dim and has
/// stride 1. These are loaded as vectors.
std::vector<TensorView*> vectorizableInputs(const Fusion& fusion, const ReductionLayout& layout);

}  // namespace braze::reduction
