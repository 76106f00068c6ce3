#include "support/multi_index.h"

namespace braze::test {

int64_t numelOf(const std::vector<int64_t>& sizes) {
  int64_t count = 1;
  for (int64_t size : sizes) count *= size;
  return count;
}

std::vector<int64_t> unravelIndex(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return index;
}

int64_t ravelIndex(const std::vector<int64_t>& index, const std::vector<int64_t>& sizes) {
  int64_t flat = 0;
  for (size_t d = 0; d < sizes.size(); ++d) flat = flat * sizes[d] + index[d];
  return flat;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * sizes[d + 1];
  }
  return strides;
}

}  // namespace braze::test
