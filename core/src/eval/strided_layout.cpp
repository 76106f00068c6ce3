#include "braze/eval/strided_layout.h"

#include <algorithm>
#include <sstream>

namespace braze {

int64_t numelOf(const std::vector<int64_t>& sizes) {
  int64_t result = 1;
  for (const int64_t size : sizes) result *= size;
  return result;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) {
    strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

std::vector<int64_t> denseStrides(const std::vector<int64_t>& sizes,
                                  const std::vector<int64_t>& allocation_order) {
  if (allocation_order.empty()) return contiguousStrides(sizes);
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t running = 1;
  for (size_t k = allocation_order.size(); k-- > 0;) {
    const auto d = static_cast<size_t>(allocation_order[k]);
    strides[d] = running;
    running *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

bool isContiguousLayout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (numelOf(sizes) == 0) return true;
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;  // the stride of a size-1 dim is never used
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool isDenseLayout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (numelOf(sizes) == 0) return true;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size), size-1 dims left out
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1) dims.emplace_back(strides[d], sizes[d]);
  }
  std::sort(dims.begin(), dims.end());  // innermost first
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

bool isDenseInOrder(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& allocation_order) {
  const std::vector<int64_t> dense = denseStrides(sizes, allocation_order);
  for (size_t d = 0; d < dense.size(); ++d) {
    if (sizes[d] != 1 && strides[d] != dense[d]) return false;
  }
  return true;
}

std::string formatSizes(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

}  // namespace braze
