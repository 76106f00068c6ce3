// TensorView::reorder: permutes the loop domain; it adds no IterDomain expression.

#include <sstream>

#include "sched/iter_domain_transforms.h"

namespace braze {

TensorView* TensorView::reorder(const std::vector<std::pair<int64_t, int64_t>>& old_to_new) {
  std::ostringstream call_text;
  call_text << "reorder({";
  for (size_t i = 0; i < old_to_new.size(); ++i) {
    call_text << (i > 0 ? ", " : "") << "{" << old_to_new[i].first << ", " << old_to_new[i].second
              << "}";
  }
  call_text << "})";
  const std::string call = call_text.str();
  const std::string label = sched_detail::tensorLabel(this);

  const auto n = static_cast<size_t>(nLoopDims());
  std::vector<IterDomain*> reordered(n, nullptr);
  std::vector<bool> moved(n, false);
  for (const auto& [old_axis, new_axis] : old_to_new) {
    const auto from = static_cast<size_t>(sched_detail::normalizeLoopAxis(this, old_axis, call));
    const auto to = static_cast<size_t>(sched_detail::normalizeLoopAxis(this, new_axis, call));
    BRAZE_USER_CHECK(!moved[from])
        << call << " on " << label << ": loop axis " << from << " is moved twice";
    BRAZE_USER_CHECK(reordered[to] == nullptr)
        << call << " on " << label << ": two axes are moved to position " << to;
    moved[from] = true;
    reordered[to] = loop_[from];
  }
  // Unnamed axes fill the free positions in their original relative order.
  size_t next = 0;
  for (size_t from = 0; from < n; ++from) {
    if (moved[from]) continue;
    while (reordered[next] != nullptr) ++next;
    reordered[next] = loop_[from];
  }
  for (size_t i = 0; i < static_cast<size_t>(inlinePosition()); ++i) {
    BRAZE_USER_CHECK(reordered[i] == loop_[i])
        << call << " on " << label << ": loop axis " << i
        << " is shared with consumers (the inline position is " << inlinePosition()
        << "); transform a tensor before inlining it";
  }
  loop_ = std::move(reordered);
  return this;
}

}  // namespace braze
