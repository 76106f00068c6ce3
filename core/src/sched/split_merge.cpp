// TensorView::split, merge and loopAxis: the primitives that reshape a loop domain.

#include <algorithm>
#include <sstream>

#include "braze/ops/elementwise.h"
#include "sched/iter_domain_transforms.h"

namespace braze {

namespace {

using sched_detail::normalizeLoopAxis;
using sched_detail::tensorLabel;

// Loops left of the inline position are shared with consumers; changing them would silently
// break the mapping inlineAt checked.
void checkOutsideInlinedLoops(const TensorView* tv, int64_t axis, std::string_view call) {
  BRAZE_USER_CHECK(axis >= tv->inlinePosition())
      << call << " on " << tensorLabel(tv) << ": loop axis " << axis
      << " is shared with consumers (the inline position is " << tv->inlinePosition()
      << "); transform a tensor before inlining it";
}

Scalar* indexFactor(TensorView* tv, Scalar* factor, std::string_view call) {
  BRAZE_USER_CHECK(factor != nullptr)
      << call << " on " << tensorLabel(tv) << ": the factor is null";
  BRAZE_USER_CHECK(&factor->fusion() == &tv->fusion())
      << call << " on " << tensorLabel(tv) << ": the factor " << factor->name()
      << " belongs to another fusion";
  BRAZE_USER_CHECK(isIntegral(factor->dtype()))
      << call << " on " << tensorLabel(tv) << ": the factor " << factor->name() << " has dtype "
      << factor->dtype() << "; a split factor must be an integer (Index or int) scalar";
  if (const std::optional<int64_t> value = factor->constantInt()) {
    BRAZE_USER_CHECK(*value > 0) << call << " on " << tensorLabel(tv) << ": the factor " << *value
                                 << " must be positive";
    return tv->fusion().constantIndex(*value);
  }
  if (factor->dtype() == DataType::Index) return factor;
  return cast(Operand(factor), DataType::Index)->as<Scalar>();
}

std::string splitCall(int64_t axis, const std::string& factor, bool inner_split) {
  std::ostringstream os;
  os << "split(" << axis << ", " << factor << (inner_split ? "" : ", inner_split=false") << ")";
  return os.str();
}

}  // namespace

IterDomain* TensorView::loopAxis(int64_t axis) const {
  const int64_t position = normalizeLoopAxis(this, axis, "loopAxis(" + std::to_string(axis) + ")");
  return loop_[static_cast<size_t>(position)];
}

TensorView* TensorView::split(int64_t axis, int64_t factor, bool inner_split) {
  const std::string call = splitCall(axis, std::to_string(factor), inner_split);
  BRAZE_USER_CHECK(factor > 0) << call << " on " << tensorLabel(this) << ": the factor " << factor
                               << " must be positive";
  return split(axis, fusion().constantIndex(factor), inner_split);
}

TensorView* TensorView::split(int64_t axis, Scalar* factor, bool inner_split) {
  const std::string call =
      splitCall(axis, factor == nullptr ? "null" : factor->name(), inner_split);
  const int64_t position = normalizeLoopAxis(this, axis, call);
  checkOutsideInlinedLoops(this, position, call);
  Scalar* index_factor = indexFactor(this, factor, call);
  const sched_detail::SplitIds ids = sched_detail::splitIterDomain(
      loop_[static_cast<size_t>(position)], index_factor, inner_split);
  loop_[static_cast<size_t>(position)] = ids.outer;
  loop_.insert(loop_.begin() + position + 1, ids.inner);
  return this;
}

TensorView* TensorView::merge(int64_t outer, int64_t inner) {
  const std::string call = "merge(" + std::to_string(outer) + ", " + std::to_string(inner) + ")";
  const int64_t first = normalizeLoopAxis(this, outer, call);
  const int64_t second = normalizeLoopAxis(this, inner, call);
  BRAZE_USER_CHECK(first != second)
      << call << " on " << tensorLabel(this) << ": both axes are loop axis " << first
      << "; merge two different axes";
  checkOutsideInlinedLoops(this, std::min(first, second), call);
  IterDomain* outer_id = loop_[static_cast<size_t>(first)];
  IterDomain* inner_id = loop_[static_cast<size_t>(second)];
  const std::optional<std::string> problem = sched_detail::mergeProblem(outer_id, inner_id);
  BRAZE_USER_CHECK(!problem.has_value())
      << call << " on " << tensorLabel(this) << ": loop axis " << first << " (" << outer_id->name()
      << ") and loop axis " << second << " (" << inner_id->name()
      << ") cannot be merged: " << *problem
      << ". Reorder so that reduction axes are merged only with reduction axes";
  IterDomain* out = sched_detail::mergeIterDomains(outer_id, inner_id);
  // The merged axis takes the place of the leftmost of the two.
  loop_.erase(loop_.begin() + std::max(first, second));
  loop_[static_cast<size_t>(std::min(first, second))] = out;
  return this;
}

}  // namespace braze
