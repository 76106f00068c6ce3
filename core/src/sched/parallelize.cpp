// TensorView::parallelize: binds a loop axis to a thread or block index, a vector access, an
// unrolled or unswitched loop.

#include <sstream>

#include "sched/iter_domain_transforms.h"
#include "sched/vectorize_validation.h"

namespace braze {

namespace {

// Types that one tensor may use on a single axis: a thread or block index names one loop, and
// a vector access is one innermost axis.
bool isExclusive(ParallelType type) {
  return isThreadDim(type) || isBlockDim(type) || type == ParallelType::Vectorize ||
         type == ParallelType::Stream;
}

}  // namespace

TensorView* TensorView::parallelize(int64_t axis, ParallelType type) {
  std::ostringstream call_text;
  call_text << "parallelize(" << axis << ", " << type << ")";
  const std::string call = call_text.str();
  const int64_t position = sched_detail::normalizeLoopAxis(this, axis, call);
  IterDomain* id = loop_[static_cast<size_t>(position)];
  if (isExclusive(type)) {
    for (int64_t other = 0; other < nLoopDims(); ++other) {
      BRAZE_USER_CHECK(other == position ||
                       loop_[static_cast<size_t>(other)]->parallelType() != type)
          << call << " on " << sched_detail::tensorLabel(this) << ": loop axis " << other << " ("
          << loop_[static_cast<size_t>(other)]->name() << ") is already " << type
          << "; one tensor can bind " << type << " to one axis only";
    }
  }
  if (type == ParallelType::Vectorize) {
    const std::optional<std::string> problem = sched_detail::vectorizeProblem(this, position);
    BRAZE_USER_CHECK(!problem.has_value()) << call << ": " << *problem;
  }
  id->parallelize(type);
  return this;
}

}  // namespace braze
