#pragma once

// What the inner-outer scheduler reads off a fusion and its arguments before choosing a shape:
// the reference output, the row and column reductions, the row length and count, and which
// tensors are read or written along the row (cached and vectorized).

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/sched/reduction_analysis.h"

namespace braze {
class ExpressionEvaluator;
}  // namespace braze

namespace braze::inner_outer {

inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The output all others follow: the first one of the largest rank with no reduced dims.
std::optional<int64_t> referenceIndex(const Fusion& fusion);

struct Reductions {
  std::vector<ReductionInfo> rows;     // reduce the innermost dim
  std::vector<ReductionInfo> columns;  // reduce every dim but the innermost
};

// Sorts the fusion's reductions into row and column reductions; a reason for any other.
std::variant<Reductions, std::string> classifyReductions(const Fusion& fusion);

struct RowShape {
  int64_t rows = 1;    // product of the reference's outer dims
  int64_t length = 1;  // the reference's innermost dim
};

// Binds the arguments (the core's validation throws on a mismatch) and evaluates the
// reference's extents.
RowShape rowShape(const Fusion& fusion, const TensorView* reference,
                  const SchedulerRuntimeInfo& info, ExpressionEvaluator& evaluator);

// The fusion inputs and outputs that hold the row dim innermost (in memory and logically):
// full-size inputs and outputs and per-column inputs such as weights, not per-row tensors
// (mean, rstd).
struct VectorPlan {
  std::vector<TensorView*> inputs;
  std::vector<TensorView*> outputs;
};

VectorPlan vectorPlan(const Fusion& fusion, const TensorView* reference);

// The widest vector every row tensor allows for these arguments: a divisor of the row length,
// aligned data pointers, unit inner strides and outer strides that keep vectors aligned.
int64_t vectorWidth(const Fusion& fusion, const VectorPlan& plan, const SchedulerRuntimeInfo& info,
                    int64_t row_length);

}  // namespace braze::inner_outer
