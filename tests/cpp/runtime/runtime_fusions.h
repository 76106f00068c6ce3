#pragma once

// Fusions the executor-cache tests run, defined as a user writes them.

#include <memory>

#include "braze/ir/fusion.h"

namespace braze::test {

/// Softmax over rows of a float32 [rows, n] input (n = -1: symbolic).
std::unique_ptr<Fusion> softmaxFusion(int64_t n = -1);
/// y = x * w + b with a per-column weight and bias (float32).
std::unique_ptr<Fusion> scaleBiasFusion();
/// softmax(x - mean(x, dim 0)) over rows: a column reduction the rows read again, so two
/// segments (the column mean, then the softmax).
std::unique_ptr<Fusion> centeredSoftmaxFusion(DataType dtype = DataType::Float32);
/// Inputs x (float32 [rows, cols]), seed and offset (int64 scalars); outputs
/// x + uniform(-1, 1) and normal(0, 1) (selected through x), both shaped like x and drawn with
/// that seed and offset.
std::unique_ptr<Fusion> randomNoiseFusion();

/// Rows of exp(x [rows, cols]) picked by an int64 index [n] (so exp is written first), returned
/// column-major (stride_order [0, 1]); and -x through a segment_set: three kernels.
std::unique_ptr<Fusion> indexingAndCopiesFusion();

}  // namespace braze::test
