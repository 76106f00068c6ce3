#include "support/reference_loops.h"

#include <algorithm>

#include "support/multi_index.h"

namespace braze::test {

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t size_a = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t size_b = i < b.size() ? b[b.size() - 1 - i] : 1;
    result[rank - 1 - i] = size_a == 1 ? size_b : size_a;
  }
  return result;
}

std::vector<double> broadcastValues(const std::vector<double>& values,
                                    const std::vector<int64_t>& sizes,
                                    const std::vector<int64_t>& out_sizes) {
  const int64_t count = numelOf(out_sizes);
  const size_t offset = out_sizes.size() - sizes.size();
  std::vector<double> result(static_cast<size_t>(count));
  for (int64_t flat = 0; flat < count; ++flat) {
    const std::vector<int64_t> out_index = unravelIndex(flat, out_sizes);
    std::vector<int64_t> index(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) index[d] = sizes[d] == 1 ? 0 : out_index[d + offset];
    result[flat] = values[ravelIndex(index, sizes)];
  }
  return result;
}

}  // namespace braze::test
