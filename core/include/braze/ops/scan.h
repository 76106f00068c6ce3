#pragma once

#include <optional>

#include "braze/ir/fusion.h"

namespace braze {

/// Inclusive scans along one dim, as PyTorch's torch.cumsum / cumprod / cummax / cummin: the
/// result has x's shape, and its element i along `dim` combines x's elements 0..i along `dim`.
/// `dim` may be negative (counted from the end); a 0-d x accepts 0 and -1 and gives a copy.
///
/// `dtype` is the result dtype, as PyTorch's `dtype=` argument (the input is cast to it
/// first); by default cumsum and cumprod give int64 for integer and bool inputs and the input
/// dtype otherwise. float16 and bfloat16 are accumulated in float32 and each prefix is cast
/// back, so the fusion holds cast -> scan -> cast.
///
/// cummax and cummin keep the input dtype and give the values; cummaxWithIndices and
/// cumminWithIndices add PyTorch's indices. A nan propagates from its position on.
TensorView* cumsum(TensorView* x, int64_t dim, std::optional<DataType> dtype = std::nullopt);
TensorView* cumprod(TensorView* x, int64_t dim, std::optional<DataType> dtype = std::nullopt);
TensorView* cummax(TensorView* x, int64_t dim);
TensorView* cummin(TensorView* x, int64_t dim);

/// The running extremes and, as torch.cummax / torch.cummin return them, the int64 position
/// along `dim` of each one: the last of equal elements, and from the first nan on, that nan's.
/// The indices are made of scans along the same dim and elementwise ops (see scan.cpp), so one
/// scan kernel computes both.
struct ScanWithIndices {
  TensorView* values;
  TensorView* indices;
};
ScanWithIndices cummaxWithIndices(TensorView* x, int64_t dim);
ScanWithIndices cumminWithIndices(TensorView* x, int64_t dim);

}  // namespace braze
