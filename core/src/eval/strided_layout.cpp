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

std::string formatSizes(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

}  // namespace braze
