// Whole fusions written with the builders as a user writes them (softmax, log-softmax, layer
// norm, RMS norm, GELU with bias, cross-entropy, attention), checked against straightforward
// loop implementations.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::RandomTensors;
using test::tensorOf;
using test::valuesOf;

// ---- the user's definitions ----

TensorView* softmaxOf(TensorView* x, int64_t dim) {
  TensorView* shifted = sub(x, amax(x, {dim}, /*keepdim=*/true));
  TensorView* e = exp(shifted);
  return div(e, sum(e, {dim}, /*keepdim=*/true));
}

TensorView* logSoftmaxOf(TensorView* x, int64_t dim) {
  TensorView* shifted = sub(x, amax(x, {dim}, /*keepdim=*/true));
  return sub(shifted, log(sum(exp(shifted), {dim}, /*keepdim=*/true)));
}

TensorView* layerNormOf(TensorView* x, TensorView* weight, TensorView* bias, double eps) {
  VarMeanResult stats = var_mean(x, {-1}, /*correction=*/0, /*keepdim=*/true);
  TensorView* normalized = mul(sub(x, stats.mean), rsqrt(add(stats.var, eps)));
  return add(mul(normalized, weight), bias);
}

TensorView* rmsNormOf(TensorView* x, TensorView* weight, double eps) {
  TensorView* mean_square = mean(mul(x, x), {-1}, /*keepdim=*/true);
  return mul(mul(x, rsqrt(add(mean_square, eps))), weight);
}

// ---- the loop references, over rows of a row-major [rows, cols] matrix ----

std::vector<double> softmaxRows(const std::vector<double>& x, int64_t rows, int64_t cols,
                                bool log_space) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = &x[r * cols];
    const double m = *std::max_element(row, row + cols);
    double total = 0;
    for (int64_t c = 0; c < cols; ++c) total += std::exp(row[c] - m);
    for (int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = log_space ? row[c] - m - std::log(total) : std::exp(row[c] - m) / total;
    }
  }
  return out;
}

/// The [cols, rows] transpose of a [rows, cols] matrix.
std::vector<double> transposed(const std::vector<double>& x, int64_t rows, int64_t cols) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = x[r * cols + c];
  }
  return out;
}

// ---- tests ----

TEST(EvaluateComposed, SoftmaxOverTheLastDim) {
  for (DataType dtype : {DataType::Float32, DataType::Float64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(softmaxOf(x, -1));
    RandomTensors random(111);
    // Large values: without the max shift exp would overflow.
    const HostTensor input = random.uniform(dtype, {5, 37}, -80, 120);
    const HostTensor out = evaluateFusionTensors(fusion, {input})[0];
    expectClose(out, {dtype, {5, 37}, softmaxRows(valuesOf(input), 5, 37, false)});
  }
}

TEST(EvaluateComposed, SoftmaxOverTheFirstDim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(softmaxOf(x, 0));
  RandomTensors random(112);
  const HostTensor input = random.uniform(DataType::Float32, {9, 4}, -3, 3);
  // Softmax over columns is softmax over the rows of the transpose.
  const std::vector<double> by_rows = softmaxRows(transposed(valuesOf(input), 9, 4), 4, 9, false);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {9, 4}, transposed(by_rows, 4, 9)});
}

TEST(EvaluateComposed, HalfPrecisionSoftmaxComputedInFloat32) {
  // The usual mixed-precision pattern: upcast, compute, downcast.
  for (DataType dtype : {DataType::Float16, DataType::BFloat16}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 3, dtype);
    fusion.addOutput(cast(softmaxOf(cast(x, DataType::Float32), -1), dtype));
    RandomTensors random(113);
    const HostTensor input = random.uniform(dtype, {2, 3, 50}, -4, 4);
    expectClose(evaluateFusionTensors(fusion, {input})[0],
                {dtype, {2, 3, 50}, softmaxRows(valuesOf(input), 6, 50, false)});
  }
}

TEST(EvaluateComposed, LogSoftmax) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(logSoftmaxOf(x, 1));
  RandomTensors random(114);
  const HostTensor input = random.uniform(DataType::Float32, {6, 21}, -30, 30);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {6, 21}, softmaxRows(valuesOf(input), 6, 21, true)});
}

TEST(EvaluateComposed, LayerNormWithWeightAndBias) {
  const double eps = 1e-5;
  for (DataType dtype : {DataType::Float32, DataType::Float64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 3, dtype);
    TensorView* weight = makeSymbolicTensor(fusion, 1, dtype);
    TensorView* bias = makeSymbolicTensor(fusion, 1, dtype);
    fusion.addOutput(layerNormOf(x, weight, bias, eps));
    RandomTensors random(115);
    const int64_t rows = 2 * 3;
    const int64_t cols = 24;
    const HostTensor tx = random.uniform(dtype, {2, 3, cols}, -2, 6);
    const HostTensor tw = random.uniform(dtype, {cols}, 0.5, 1.5);
    const HostTensor tb = random.uniform(dtype, {cols}, -1, 1);
    const std::vector<double> v = valuesOf(tx);
    const std::vector<double> w = valuesOf(tw);
    const std::vector<double> b = valuesOf(tb);
    std::vector<double> expected(v.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0;
      for (int64_t c = 0; c < cols; ++c) mean += v[r * cols + c];
      mean /= static_cast<double>(cols);
      double variance = 0;
      for (int64_t c = 0; c < cols; ++c) variance += std::pow(v[r * cols + c] - mean, 2);
      variance /= static_cast<double>(cols);
      for (int64_t c = 0; c < cols; ++c) {
        expected[r * cols + c] = (v[r * cols + c] - mean) / std::sqrt(variance + eps) * w[c] + b[c];
      }
    }
    expectClose(evaluateFusionTensors(fusion, {tx, tw, tb})[0], {dtype, {2, 3, cols}, expected});
  }
}

TEST(EvaluateComposed, RmsNorm) {
  const double eps = 1e-6;
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* weight = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(rmsNormOf(x, weight, eps));
  RandomTensors random(116);
  const HostTensor tx = random.uniform(DataType::Float32, {7, 32}, -3, 3);
  const HostTensor tw = random.uniform(DataType::Float32, {32}, 0.5, 1.5);
  const std::vector<double> v = valuesOf(tx);
  const std::vector<double> w = valuesOf(tw);
  std::vector<double> expected(v.size());
  for (int64_t r = 0; r < 7; ++r) {
    double mean_square = 0;
    for (int64_t c = 0; c < 32; ++c) mean_square += v[r * 32 + c] * v[r * 32 + c];
    mean_square /= 32.0;
    for (int64_t c = 0; c < 32; ++c) {
      expected[r * 32 + c] = v[r * 32 + c] / std::sqrt(mean_square + eps) * w[c];
    }
  }
  expectClose(evaluateFusionTensors(fusion, {tx, tw})[0], {DataType::Float32, {7, 32}, expected});
}

TEST(EvaluateComposed, GeluWithBias) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeSymbolicTensor(fusion, 1);
  TensorView* biased = add(x, bias);
  fusion.addOutput(gelu(biased));
  fusion.addOutput(gelu(biased, GeluApproximation::Tanh));
  RandomTensors random(117);
  const HostTensor tx = random.uniform(DataType::Float32, {8, 16}, -3, 3);
  const HostTensor tb = random.uniform(DataType::Float32, {16}, -1, 1);
  const std::vector<double> v = valuesOf(tx);
  const std::vector<double> b = valuesOf(tb);
  std::vector<double> exact(v.size());
  std::vector<double> approximate(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double z = v[i] + b[i % 16];
    exact[i] = 0.5 * z * (1 + std::erf(z / std::numbers::sqrt2));
    approximate[i] =
        0.5 * z * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (z + 0.044715 * z * z * z)));
  }
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, tb});
  expectClose(out[0], {DataType::Float32, {8, 16}, exact});
  expectClose(out[1], {DataType::Float32, {8, 16}, approximate});
}

/// Mean negative log-likelihood of `targets` under row-wise softmax of `logits`.
double crossEntropy(const std::vector<double>& logits, const std::vector<double>& targets,
                    int64_t rows, int64_t classes) {
  const std::vector<double> log_probs = softmaxRows(logits, rows, classes, true);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    total -= log_probs[r * classes + static_cast<int64_t>(targets[r])];
  }
  return total / static_cast<double>(rows);
}

TEST(EvaluateComposed, CrossEntropyThroughGather) {
  const int64_t rows = 6;
  const int64_t classes = 11;
  Fusion fusion;
  TensorView* logits = makeSymbolicTensor(fusion, 2);
  TensorView* targets = makeSymbolicTensor(fusion, 1, DataType::Int64);
  TensorView* picked = gather(logSoftmaxOf(logits, 1), 1, unsqueeze(targets, 1));  // [N, 1]
  fusion.addOutput(neg(mean(picked, {})));
  RandomTensors random(118);
  const HostTensor tl = random.uniform(DataType::Float32, {rows, classes}, -4, 4);
  const HostTensor tt = random.uniform(DataType::Int64, {rows}, 0, classes - 1);
  expectClose(evaluateFusionTensors(fusion, {tl, tt})[0],
              {DataType::Float32, {}, {crossEntropy(valuesOf(tl), valuesOf(tt), rows, classes)}});
}

TEST(EvaluateComposed, CrossEntropyThroughIndexSelect) {
  // The flat position of each target is row * classes + target.
  const int64_t rows = 5;
  const int64_t classes = 7;
  Fusion fusion;
  TensorView* logits =
      makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {rows, classes}});
  TensorView* targets = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {rows}});
  TensorView* flat = reshape(logSoftmaxOf(logits, 1), {-1});
  TensorView* positions = add(iota(fusion, rows, 0, classes), targets);
  fusion.addOutput(neg(mean(index_select(flat, 0, positions), {0})));
  RandomTensors random(119);
  const HostTensor tl = random.uniform(DataType::Float32, {rows, classes}, -4, 4);
  const HostTensor tt = random.uniform(DataType::Int64, {rows}, 0, classes - 1);
  expectClose(evaluateFusionTensors(fusion, {tl, tt})[0],
              {DataType::Float32, {}, {crossEntropy(valuesOf(tl), valuesOf(tt), rows, classes)}});
}

TEST(EvaluateComposed, ScaledDotProductAttention) {
  // softmax(q k^T / sqrt(d)) v for one batch of heads.
  const int64_t heads = 2;
  const int64_t seq = 5;
  const int64_t d = 8;
  Fusion fusion;
  TensorView* q = makeSymbolicTensor(fusion, 3);
  TensorView* k = makeSymbolicTensor(fusion, 3);
  TensorView* v = makeSymbolicTensor(fusion, 3);
  TensorView* scores = mul(matmul(q, transpose(k, -2, -1)), 1.0 / std::sqrt(double(d)));
  fusion.addOutput(matmul(softmaxOf(scores, -1), v));
  RandomTensors random(120);
  const HostTensor tq = random.uniform(DataType::Float32, {heads, seq, d});
  const HostTensor tk = random.uniform(DataType::Float32, {heads, seq, d});
  const HostTensor tv = random.uniform(DataType::Float32, {heads, seq, d});
  const std::vector<double> vq = valuesOf(tq);
  const std::vector<double> vk = valuesOf(tk);
  const std::vector<double> vv = valuesOf(tv);
  std::vector<double> expected;
  for (int64_t h = 0; h < heads; ++h) {
    std::vector<double> s(seq * seq);
    for (int64_t i = 0; i < seq; ++i) {
      for (int64_t j = 0; j < seq; ++j) {
        double dot = 0;
        for (int64_t p = 0; p < d; ++p) {
          dot += vq[(h * seq + i) * d + p] * vk[(h * seq + j) * d + p];
        }
        s[i * seq + j] = dot / std::sqrt(double(d));
      }
    }
    const std::vector<double> probs = softmaxRows(s, seq, seq, false);
    for (int64_t i = 0; i < seq; ++i) {
      for (int64_t p = 0; p < d; ++p) {
        double total = 0;
        for (int64_t j = 0; j < seq; ++j) total += probs[i * seq + j] * vv[(h * seq + j) * d + p];
        expected.push_back(total);
      }
    }
  }
  expectClose(evaluateFusionTensors(fusion, {tq, tk, tv})[0],
              {DataType::Float32, {heads, seq, d}, expected});
}

TEST(EvaluateComposed, MaskedFillThenSoftmax) {
  // Causal mask from iota: positions j > i are filled with -inf before the softmax.
  const int64_t n = 6;
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {n, n}});
  TensorView* rows = broadcast(iota(fusion, n), {false, true});
  TensorView* cols = broadcast(iota(fusion, n), {true, false});
  TensorView* masked = where(gt(cols, rows), -std::numeric_limits<double>::infinity(), x);
  fusion.addOutput(softmaxOf(masked, -1));
  RandomTensors random(121);
  const HostTensor input = random.uniform(DataType::Float32, {n, n}, -2, 2);
  std::vector<double> values = valuesOf(input);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j)
      values[i * n + j] = -std::numeric_limits<double>::infinity();
  }
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {n, n}, softmaxRows(values, n, n, false)});
}

}  // namespace
}  // namespace braze
