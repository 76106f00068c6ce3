#pragma once

// Row-major index arithmetic for tests that compute expected values with plain loops.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braze::test {

/// Product of `sizes` (1 for a 0-d shape).
int64_t numelOf(const std::vector<int64_t>& sizes);

/// The multi-index of row-major position `flat` in a tensor of `sizes`.
std::vector<int64_t> unravelIndex(int64_t flat, const std::vector<int64_t>& sizes);

/// The row-major position of `index` in a tensor of `sizes`.
int64_t ravelIndex(const std::vector<int64_t>& index, const std::vector<int64_t>& sizes);

/// Row-major strides (in elements) of a contiguous tensor of `sizes`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

}  // namespace braze::test
