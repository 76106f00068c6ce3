#pragma once

#include "braze/eval/strided_layout.h"

// Row-major iteration over several strided operands at once, internal to the evaluator. Used
// by every copy, conversion and elementwise loop, so that none of them divides a flat position
// into a multi-index per element.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace braze::eval_detail {

/// Sizes shared by N operands, and each operand's strides (in elements) and start offset.
template <size_t N>
struct StridedOperands {
  std::vector<int64_t> sizes;
  std::array<std::vector<int64_t>, N> strides;
  std::array<int64_t, N> offsets{};
};

/// Calls body(offsets) for every index of `operands.sizes` in row-major order, where
/// offsets[k] = operands.offsets[k] + sum over d of index[d] * strides[k][d]. Size-1 dims are
/// dropped and dims that are contiguous with their inner neighbour in every operand are
/// merged first, so the inner loop is as long as possible; the visiting order stays row-major.
template <size_t N, typename Body>
void walkStrided(const StridedOperands<N>& operands, Body&& body) {
  std::vector<int64_t> sizes;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t d = 0; d < operands.sizes.size(); ++d) {
    const int64_t size = operands.sizes[d];
    if (size == 0) return;
    if (size == 1) continue;
    bool merges = !sizes.empty();
    for (size_t k = 0; k < N && merges; ++k) {
      merges = strides[k].back() == operands.strides[k][d] * size;
    }
    if (merges) {
      sizes.back() *= size;
      for (size_t k = 0; k < N; ++k) strides[k].back() = operands.strides[k][d];
      continue;
    }
    sizes.push_back(size);
    for (size_t k = 0; k < N; ++k) strides[k].push_back(operands.strides[k][d]);
  }

  std::array<int64_t, N> offsets = operands.offsets;
  if (sizes.empty()) {
    body(offsets);
    return;
  }
  const size_t rank = sizes.size();
  const int64_t inner_size = sizes[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  std::vector<int64_t> counter(rank, 0);
  while (true) {
    std::array<int64_t, N> cursor = offsets;
    for (int64_t i = 0; i < inner_size; ++i) {
      body(cursor);
      for (size_t k = 0; k < N; ++k) cursor[k] += inner_stride[k];
    }
    // Advance the outer dims like an odometer.
    size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      if (++counter[d] < sizes[d]) {
        for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * (sizes[d] - 1);
      counter[d] = 0;
    }
  }
}

using ::braze::contiguousStrides;

}  // namespace braze::eval_detail
