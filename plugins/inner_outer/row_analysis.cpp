#include "row_analysis.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "braze/error.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/reduction_analysis.h"
#include "braze/sched/reference_dim_map.h"
#include "braze/sched/runtime_arguments.h"
#include "braze/sched/vectorization.h"

namespace braze::inner_outer {

namespace {

constexpr int64_t kMaxVectorBytes = 16;

// Tensors that hold the row dim innermost (in memory and logically): full-size inputs and
// outputs and per-column inputs such as weights. Per-row tensors (mean, rstd) do not.
bool alongRow(const TensorView* tv, const ReferenceDimMap& map, int64_t row_dim) {
  const std::vector<IterDomain*> dims = tv->logicalNoReductions();
  if (dims.empty()) return false;
  const std::vector<int64_t>& to_ref = map.at(tv);
  const int64_t last = logicalPosition(tv, dims.back());
  return last >= 0 && to_ref[static_cast<size_t>(last)] == row_dim && !dims.back()->isBroadcast();
}

}  // namespace

// The output all others follow: the first one of the largest rank with no reduced dims.
std::optional<int64_t> referenceIndex(const Fusion& fusion) {
  std::optional<int64_t> best;
  int64_t best_rank = -1;
  for (size_t i = 0; i < fusion.outputs().size(); ++i) {
    const auto* tv = fusion.outputs()[i]->dynCast<TensorView>();
    if (tv == nullptr || tv->hasReduction()) continue;
    if (tv->rank() > best_rank) {
      best = static_cast<int64_t>(i);
      best_rank = tv->rank();
    }
  }
  return best;
}

// Sorts the fusion's reductions into row and column reductions; a reason for any other.
std::variant<Reductions, std::string> classifyReductions(const Fusion& fusion) {
  Reductions result;
  for (const ReductionInfo& r : reductionAxes(fusion)) {
    const int64_t n = r.tv->nDims();
    std::vector<int64_t> all_but_last(static_cast<size_t>(std::max<int64_t>(n - 1, 0)));
    std::iota(all_but_last.begin(), all_but_last.end(), 0);
    if (n >= 2 && r.axes == std::vector<int64_t>{n - 1}) {
      result.rows.push_back(r);
    } else if (n >= 2 && r.axes == all_but_last) {
      result.columns.push_back(r);
    } else {
      std::ostringstream os;
      os << r.tv->name() << " reduces dims [";
      for (size_t i = 0; i < r.axes.size(); ++i) os << (i ? ", " : "") << r.axes[i];
      os << "] of " << n << "; this scheduler handles reductions of the innermost dim (rows) "
         << "and, with them, sums over every other dim (columns); use the reduction scheduler";
      return os.str();
    }
  }
  return result;
}

// Binds the arguments (the core's validation throws on a mismatch) and evaluates the
// reference's extents.
RowShape rowShape(const Fusion& fusion, const TensorView* reference,
                  const SchedulerRuntimeInfo& info, ExpressionEvaluator& evaluator) {
  const std::vector<std::optional<int64_t>> extents = evaluateExtents(
      fusion, info.arguments, reference->logicalNoReductions(), "inner-outer scheduler", evaluator);
  RowShape shape;
  for (size_t d = 0; d < extents.size(); ++d) {
    BRAZE_USER_CHECK(extents[d].has_value())
        << "inner-outer scheduler: extent " << d << " of " << reference->name()
        << " depends on a scalar whose value was not given";
    if (d + 1 == extents.size()) {
      shape.length = *extents[d];
    } else {
      shape.rows *= *extents[d];
    }
  }
  return shape;
}

VectorPlan vectorPlan(const Fusion& fusion, const TensorView* reference) {
  const ReferenceDimMap map = mapDimsToReference(fusion, reference);
  const int64_t row_dim = reference->nDims() - 1;
  VectorPlan plan;
  for (Val* input : fusion.inputs()) {
    auto* tv = input->dynCast<TensorView>();
    if (tv != nullptr && !consumersOf(tv).empty() && alongRow(tv, map, row_dim))
      plan.inputs.push_back(tv);
  }
  for (Val* output : fusion.outputs()) {
    auto* tv = output->as<TensorView>();
    if (!tv->hasReduction() && tv->rank() == reference->rank() && alongRow(tv, map, row_dim))
      plan.outputs.push_back(tv);
  }
  return plan;
}

// The widest vector every row tensor allows for these arguments: a divisor of the row length,
// aligned data pointers, unit inner strides and outer strides that keep vectors aligned.
int64_t vectorWidth(const Fusion& fusion, const VectorPlan& plan, const SchedulerRuntimeInfo& info,
                    int64_t row_length) {
  int64_t width = kMaxVectorBytes;
  for (const std::vector<TensorView*>* list : {&plan.inputs, &plan.outputs}) {
    for (const TensorView* tv : *list)
      width = std::min(width, kMaxVectorBytes / sizeInBytes(tv->dtype()));
  }
  const auto fits = [&](int64_t w) {
    if (row_length % w != 0) return false;
    for (TensorView* tv : plan.inputs) {
      const size_t index = fusion.inputIndex(tv);
      const auto& actual = std::get<TensorArgumentInfo>(info.arguments[index]);
      if (vectorAlignment(info, index) % (w * sizeInBytes(tv->dtype())) != 0) return false;
      if (actual.strides.empty() || actual.strides.back() != 1) return false;
      for (size_t d = 0; d + 1 < actual.strides.size(); ++d) {
        if (actual.sizes[d] > 1 && actual.strides[d] % w != 0) return false;
      }
    }
    return true;
  };
  while (width > 1 && !fits(width)) width /= 2;
  return std::max<int64_t>(width, 1);
}

}  // namespace braze::inner_outer
