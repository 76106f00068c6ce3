#pragma once

// Plain loops that tests use to compute expected values: elementwise maps and NumPy-style
// broadcasting. Deliberately naive, so they are easy to trust.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braze::test {

/// f applied to every value.
template <typename F>
std::vector<double> mapValues(const std::vector<double>& values, F f) {
  std::vector<double> result;
  result.reserve(values.size());
  for (double v : values) result.push_back(f(v));
  return result;
}

/// f applied to each pair of values at the same position (equal lengths).
template <typename F>
std::vector<double> zipValues(const std::vector<double>& a, const std::vector<double>& b, F f) {
  std::vector<double> result;
  result.reserve(a.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) result.push_back(f(a[i], b[i]));
  return result;
}

/// NumPy's broadcast of two shapes (dims matched from the right; a size-1 dim takes the other
/// size). The test's shapes must be compatible.
std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// The row-major values of a tensor of `sizes` broadcast to `out_sizes`.
std::vector<double> broadcastValues(const std::vector<double>& values,
                                    const std::vector<int64_t>& sizes,
                                    const std::vector<int64_t>& out_sizes);

}  // namespace braze::test
