#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace braze {

// Layout arithmetic shared by every strided tensor type (HostTensor, DeviceTensor, the
// evaluator's own tensors) and by the executor's checks. Strides are in elements.

/// Product of `sizes` (1 for a 0-d tensor).
int64_t numelOf(const std::vector<int64_t>& sizes);

/// Row-major strides of a contiguous tensor of `sizes` (size-0 dims count as 1, so strides
/// stay distinct).
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

/// Strides of a dense tensor of `sizes` laid out in `allocation_order` (dims from outermost to
/// innermost in memory; empty: row-major), size-0 dims counting as 1 as above.
std::vector<int64_t> denseStrides(const std::vector<int64_t>& sizes,
                                  const std::vector<int64_t>& allocation_order);

/// True when `strides` address `sizes` densely in row-major order; strides of size-1 dims are
/// never used and may be anything; an empty tensor is contiguous.
bool isContiguousLayout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

/// True when `strides` address `sizes` densely in some order of the dims (one block with no
/// gaps: a row-major tensor, or one dense in another allocation order); size-1 dims' strides are
/// never used; an empty tensor is dense.
bool isDenseLayout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

/// True when `strides` address `sizes` densely in `allocation_order` (dims from outermost to
/// innermost; empty: row-major): denseStrides' strides, where size-1 dims' may be anything.
bool isDenseInOrder(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& allocation_order);

/// "[2, 3]": how messages show sizes and strides.
std::string formatSizes(const std::vector<int64_t>& values);

}  // namespace braze
