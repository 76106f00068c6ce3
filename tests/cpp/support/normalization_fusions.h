#pragma once

// The normalizations the inner-outer scheduler and the segmenter are tested on, defined with
// the core ops the way a user writes them (no scheduling): softmax, log-softmax, layer norm and RMS
// norm forward and backward, and softmax backward. Inputs are [rows, row length] tensors of any
// size; reduced-precision inputs (float16, bfloat16) are computed in float32 and the results
// cast back, while per-row statistics (mean, rstd) are float32 as PyTorch's training forward
// returns them.
//
//   softmax          y = exp(x - max(x)) / sum(exp(x - max(x)))                 out: y
//   log_softmax      y = (x - max(x)) - log(sum(exp(x - max(x))))               out: y
//   softmax_bwd      dx = y * (dy - sum(dy * y))                     in: dy, y  out: dx
//   layer_norm       y = (x - mean) * rstd * w + b                   in: x, w, b
//                                                                   out: y, mean, rstd
//   rms_norm         y = x * rstd * w,  rstd = rsqrt(mean(x^2) + eps)           out: y, rstd
//   layer_norm_bwd   dx, dw = sum_rows(dy * xhat), db = sum_rows(dy)
//                                          in: dy, x, mean, rstd, w  out: dx, dw, db
//   rms_norm_bwd     dx, dw = sum_rows(dy * xhat)        in: dy, x, rstd, w  out: dx, dw

#include <memory>
#include <string>
#include <vector>

#include "braze/eval/host_tensor.h"
#include "braze/ir/fusion.h"

namespace braze::test {

enum class Normalization {
  Softmax,
  LogSoftmax,
  SoftmaxBackward,
  LayerNorm,
  RmsNorm,
  LayerNormBackward,
  RmsNormBackward,
};

/// "softmax", "log_softmax", "softmax_bwd", "layer_norm", "rms_norm", "layer_norm_bwd",
/// "rms_norm_bwd".
std::string toString(Normalization kind);

/// Every kind, forward ones first.
const std::vector<Normalization>& allNormalizations();

/// True for layer norm and RMS norm backward: they also reduce over the rows (dw, db).
bool hasColumnReduction(Normalization kind);

inline constexpr double kNormEpsilon = 1e-5;

/// A fresh fusion of `kind` over [rows, row length] inputs of `dtype` (weights and biases
/// have `dtype` too; mean and rstd inputs and outputs are float32).
std::unique_ptr<Fusion> makeNormalization(Normalization kind, DataType dtype);

/// The sizes of the fusion's tensor inputs, in order, for `rows` rows of length `n`.
std::vector<std::vector<int64_t>> normalizationInputSizes(Normalization kind, int64_t rows,
                                                          int64_t n);

/// The dtypes of the fusion's tensor inputs, in order.
std::vector<DataType> normalizationInputDtypes(Normalization kind, DataType dtype);

/// Fresh random inputs for `kind` over `rows` rows of length `n` from a generator seeded with
/// `seed` (per-row statistics such as rstd drawn positive).
std::vector<HostTensor> normalizationArguments(Normalization kind, DataType dtype, int64_t rows,
                                               int64_t n, uint64_t seed);

/// Layer norm backward as nvFuser's benchmark suite defines it (test_layernorm_bwd.py), written
/// with Braze's ops: inputs x, dy ([rows, n], `dtype`), mean ([rows], float32), rstd ([rows, 1],
/// float32), w ([n], `dtype`); outputs dx, dw, db. Per-row terms are computed on [rows, 1]
/// tensors (-0.5 * sum * rstd^3), x - mean is computed twice, and the weights and statistics
/// are expanded with broadcast_in_dim, as its Python definition does.
std::unique_ptr<Fusion> makeNvfuserStyleLayerNormBackward(DataType dtype);

/// RMS norm backward as nvFuser's benchmark suite defines it (test_rmsnorm_bwd.py): inputs x
/// ([rows, n], `dtype`), rms ([rows, 1], float32: the root mean square, not its reciprocal),
/// dy ([rows, n], `dtype`), w ([n], `dtype`); outputs dx, dw.
std::unique_ptr<Fusion> makeNvfuserStyleRmsNormBackward(DataType dtype);

/// Fresh random inputs for makeNvfuserStyleLayerNormBackward (rstd positive).
std::vector<HostTensor> nvfuserStyleLayerNormBackwardArguments(DataType dtype, int64_t rows,
                                                               int64_t n, uint64_t seed);

/// Fresh random inputs for makeNvfuserStyleRmsNormBackward (rms positive).
std::vector<HostTensor> nvfuserStyleRmsNormBackwardArguments(DataType dtype, int64_t rows,
                                                             int64_t n, uint64_t seed);

}  // namespace braze::test
