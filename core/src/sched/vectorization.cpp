#include "braze/sched/vectorization.h"

#include <algorithm>

namespace braze {

namespace {

int64_t largestPowerOfTwoDividing(int64_t value, int64_t cap) {
  int64_t width = 1;
  while (width * 2 <= cap && value % (width * 2) == 0) width *= 2;
  return width;
}

}  // namespace

VectorizationLimit vectorizationLimit(const TensorView* tv, int64_t max_bytes) {
  VectorizationLimit limit;
  const int64_t cap = std::max<int64_t>(1, max_bytes / sizeInBytes(tv->dtype()));
  const std::vector<IterDomain*> visible = tv->logicalNoReductions();
  // Non-broadcast dims from innermost to outermost in memory, with their contiguity.
  std::vector<std::pair<IterDomain*, bool>> inner_first;
  for (auto it = tv->allocationOrder().rbegin(); it != tv->allocationOrder().rend(); ++it) {
    IterDomain* id = visible[static_cast<size_t>(*it)];
    if (id->isBroadcast()) continue;
    inner_first.emplace_back(id, tv->contiguity()[static_cast<size_t>(*it)].value_or(false));
  }
  if (inner_first.empty() || !inner_first.front().second) {
    limit.max_width = 1;
    for (const auto& [id, contiguous] : inner_first) {
      if (!contiguous) limit.strides_to_check.push_back(id);
    }
    return limit;
  }

  int64_t constant_product = 1;
  bool symbolic = false;
  size_t taken = 0;
  while (taken < inner_first.size()) {
    const auto& [id, contiguous] = inner_first[taken];
    // Extending the run over an outer dim needs that dim's stride to follow from the run.
    if (!contiguous) break;
    limit.dims.insert(limit.dims.begin(), id);
    ++taken;
    const std::optional<int64_t> extent = id->extent()->constantInt();
    if (!extent.has_value()) {
      symbolic = true;
      break;
    }
    constant_product *= *extent;
    if (constant_product % cap == 0) break;
  }
  for (size_t i = taken; i < inner_first.size(); ++i) {
    if (!inner_first[i].second) limit.strides_to_check.push_back(inner_first[i].first);
  }
  if (symbolic) {
    // Only the actual sizes tell whether the run is a multiple of the full width.
    limit.max_width = cap;
    for (IterDomain* id : limit.dims) limit.extents_to_check.push_back(id->extent());
    return limit;
  }
  limit.max_width = constant_product == 0 ? cap : largestPowerOfTwoDividing(constant_product, cap);
  return limit;
}

int64_t commonVectorWidth(const std::vector<TensorView*>& tensors, int64_t max_bytes) {
  int64_t width = std::max<int64_t>(1, max_bytes);
  for (const TensorView* tv : tensors)
    width = std::min(width, vectorizationLimit(tv, max_bytes).max_width);
  return tensors.empty() ? 1 : width;
}

}  // namespace braze
