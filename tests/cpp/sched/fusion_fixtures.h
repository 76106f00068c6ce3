#pragma once

// Small fusions the scheduling tests share, and the plain loops that give their expected values.

#include <cmath>
#include <memory>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze::test {

/// y = softmax(x, dim 1) for x [rows, cols]; the tensors in the order they are made.
struct SoftmaxFusion {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* x;
  TensorView* max;      // max over dim 1: [i, r]
  TensorView* max_b;    // broadcast: [i, b]
  TensorView* shifted;  // x - max_b
  TensorView* exp;      // exp(shifted)
  TensorView* sum;      // sum over dim 1: [i, r]
  TensorView* sum_b;    // broadcast: [i, b]
  TensorView* y;        // exp / sum_b
};

inline SoftmaxFusion makeSoftmax(std::vector<int64_t> sizes = {-1, -1}) {
  SoftmaxFusion s;
  s.x = makeInputTensor(*s.fusion, {.dtype = DataType::Float32, .sizes = std::move(sizes)});
  s.max = braze::max(s.x, {1});
  s.max_b = broadcast(s.max, {false, true});
  s.shifted = sub(s.x, s.max_b);
  s.exp = braze::exp(s.shifted);
  s.sum = braze::sum(s.exp, {1});
  s.sum_b = broadcast(s.sum, {false, true});
  s.y = div(s.exp, s.sum_b);
  s.fusion->addOutput(s.y);
  return s;
}

/// Softmax over the last dim of row-major `values` of shape [rows, cols], in double.
inline std::vector<double> softmaxRows(const std::vector<double>& values, int64_t rows,
                                       int64_t cols) {
  std::vector<double> result(values.size());
  for (int64_t r = 0; r < rows; ++r) {
    double row_max = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) row_max = std::max(row_max, values[r * cols + c]);
    double total = 0;
    for (int64_t c = 0; c < cols; ++c) total += std::exp(values[r * cols + c] - row_max);
    for (int64_t c = 0; c < cols; ++c) {
      result[r * cols + c] = std::exp(values[r * cols + c] - row_max) / total;
    }
  }
  return result;
}

/// Sums of each row of row-major `values` of shape [rows, cols].
inline std::vector<double> rowSums(const std::vector<double>& values, int64_t rows, int64_t cols) {
  std::vector<double> result(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) result[r] += values[r * cols + c];
  }
  return result;
}

}  // namespace braze::test
