#pragma once

// The normalizations and the row sum that the normalization benchmark and the inner-outer
// sweep time: each defined with the ops API as a user would (computed in float32, results cast
// back to the input dtype), its inputs, and a check of a run's results on its first rows
// against the reference evaluator.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/device_tensor.h"
#include "scheduled_case.h"

namespace braze::bench {

constexpr double kEpsilon = 1e-5;
constexpr int64_t kRowLengths[] = {256, 1000, 1024, 4096, 8192, 16384, 65536, 262144};
constexpr DataType kDtypes[] = {DataType::BFloat16, DataType::Float32};

enum class Op {
  SoftmaxFwd,
  SoftmaxBwd,
  LayerNormFwd,
  LayerNormBwd,
  RmsNormFwd,
  RmsNormBwd,
  RowSum,
  ScaleBias,
};

struct OpInfo {
  Op op;
  const char* name;
  /// The scheduler expected to take the whole fusion as one kernel: FusionExecutorCache chooses
  /// on its own (a case that runs as one kernel of another scheduler says so), the --direct
  /// path of the normalization benchmark forces it.
  const char* scheduler;
  /// Another scheduler that takes it where it measured faster (rows in shared memory on sm_90
  /// and newer, braze::tma_ws_normalization's refusals say where), or null.
  const char* alternative = nullptr;
};

constexpr OpInfo kOps[] = {
    {Op::SoftmaxFwd, "softmax_fwd", "braze::inner_outer", "braze::tma_ws_normalization"},
    {Op::SoftmaxBwd, "softmax_bwd", "braze::inner_outer", "braze::tma_ws_normalization"},
    {Op::LayerNormFwd, "layer_norm_fwd", "braze::inner_outer", "braze::tma_ws_normalization"},
    {Op::LayerNormBwd, "layer_norm_bwd", "braze::inner_outer", "braze::tma_ws_normalization"},
    {Op::RmsNormFwd, "rms_norm_fwd", "braze::inner_outer", "braze::tma_ws_normalization"},
    {Op::RmsNormBwd, "rms_norm_bwd", "braze::inner_outer", "braze::tma_ws_normalization"},
    {Op::RowSum, "row_sum", "braze::reduction"},
};

// With --pipeline_check: x * weight + bias through the pointwise scheduler, to check the
// registry-to-launch pipeline and its timing against the copy with a scheduler that exists.
constexpr OpInfo kPipelineCheck = {Op::ScaleBias, "scale_bias", "braze::pointwise"};

inline std::string_view shortName(DataType dtype) {
  return dtype == DataType::BFloat16 ? "bf16" : "fp32";
}

/// Rows so that one M x N input of `dtype` holds at least input_mib MiB.
inline int64_t rowsFor(int64_t n, DataType dtype, int64_t input_mib) {
  const int64_t row_bytes = n * sizeInBytes(dtype);
  return ((input_mib << 20) + row_bytes - 1) / row_bytes;
}

// ---- the fusions, as a user writes them

inline TensorView* inFloat(TensorView* x) {
  return x->dtype() == DataType::Float32 ? x : cast(x, DataType::Float32);
}
inline TensorView* backTo(TensorView* x, DataType dtype) {
  return dtype == DataType::Float32 ? x : cast(x, dtype);
}
// [M] -> [M, 1] and [N] -> [1, N], for the row statistics and the per-column parameters.
inline TensorView* perRow(TensorView* x) {
  return broadcast(x, {false, true});
}
inline TensorView* perColumn(TensorView* x) {
  return broadcast(x, {true, false});
}

inline TensorView* rowInput(Fusion& fusion, DataType dtype) {
  return makeSymbolicTensor(fusion, 2, dtype);
}
inline TensorView* vectorInput(Fusion& fusion, DataType dtype) {
  return makeSymbolicTensor(fusion, 1, dtype);
}

inline std::unique_ptr<Fusion> defineFusion(Op op, DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  Fusion& f = *fusion;
  switch (op) {
    case Op::SoftmaxFwd: {
      TensorView* x = inFloat(rowInput(f, dtype));
      TensorView* e = exp(sub(x, amax(x, {1}, /*keepdim=*/true)));
      f.addOutput(backTo(div(e, sum(e, {1}, /*keepdim=*/true)), dtype));
      break;
    }
    case Op::SoftmaxBwd: {
      // PyTorch's _softmax_backward_data: from the output y, not the input.
      TensorView* dy = inFloat(rowInput(f, dtype));
      TensorView* y = inFloat(rowInput(f, dtype));
      TensorView* dot = sum(mul(dy, y), {1}, /*keepdim=*/true);
      f.addOutput(backTo(mul(y, sub(dy, dot)), dtype));
      break;
    }
    case Op::LayerNormFwd: {
      TensorView* x = inFloat(rowInput(f, dtype));
      TensorView* weight = inFloat(vectorInput(f, dtype));
      TensorView* bias = inFloat(vectorInput(f, dtype));
      // The biased variance as the mean of squared deviations: two passes over a row the
      // persistent schedule keeps on chip (the inner-outer scheduler takes no Welford).
      TensorView* row_mean = mean(x, {1});
      TensorView* centered = sub(x, perRow(row_mean));
      TensorView* rstd = rsqrt(add(mean(mul(centered, centered), {1}), kEpsilon));
      TensorView* y = add(mul(mul(centered, perRow(rstd)), perColumn(weight)), perColumn(bias));
      f.addOutput(backTo(y, dtype));
      f.addOutput(row_mean);
      f.addOutput(rstd);
      break;
    }
    case Op::LayerNormBwd: {
      TensorView* dy = inFloat(rowInput(f, dtype));
      TensorView* x = inFloat(rowInput(f, dtype));
      TensorView* mean_in = vectorInput(f, DataType::Float32);
      TensorView* rstd_in = vectorInput(f, DataType::Float32);
      TensorView* weight = inFloat(vectorInput(f, dtype));
      TensorView* rstd = perRow(rstd_in);
      TensorView* xhat = mul(sub(x, perRow(mean_in)), rstd);
      TensorView* g = mul(dy, perColumn(weight));
      TensorView* g_mean = mean(g, {1}, /*keepdim=*/true);
      TensorView* gx_mean = mean(mul(g, xhat), {1}, /*keepdim=*/true);
      TensorView* dx = mul(rstd, sub(sub(g, g_mean), mul(xhat, gx_mean)));
      f.addOutput(backTo(dx, dtype));
      f.addOutput(backTo(sum(mul(dy, xhat), {0}), dtype));
      f.addOutput(backTo(sum(dy, {0}), dtype));
      break;
    }
    case Op::RmsNormFwd: {
      TensorView* x = inFloat(rowInput(f, dtype));
      TensorView* weight = inFloat(vectorInput(f, dtype));
      TensorView* rstd = rsqrt(add(mean(mul(x, x), {1}), kEpsilon));
      f.addOutput(backTo(mul(mul(x, perRow(rstd)), perColumn(weight)), dtype));
      f.addOutput(rstd);
      break;
    }
    case Op::RmsNormBwd: {
      TensorView* dy = inFloat(rowInput(f, dtype));
      TensorView* x = inFloat(rowInput(f, dtype));
      TensorView* rstd = perRow(vectorInput(f, DataType::Float32));
      TensorView* weight = inFloat(vectorInput(f, dtype));
      TensorView* xhat = mul(x, rstd);
      TensorView* g = mul(dy, perColumn(weight));
      TensorView* gx_mean = mean(mul(g, xhat), {1}, /*keepdim=*/true);
      f.addOutput(backTo(mul(rstd, sub(g, mul(xhat, gx_mean))), dtype));
      f.addOutput(backTo(sum(mul(dy, xhat), {0}), dtype));
      break;
    }
    case Op::RowSum:
      f.addOutput(backTo(sum(inFloat(rowInput(f, dtype)), {1}), dtype));
      break;
    case Op::ScaleBias: {
      TensorView* x = inFloat(rowInput(f, dtype));
      TensorView* weight = inFloat(vectorInput(f, dtype));
      TensorView* bias = inFloat(vectorInput(f, dtype));
      f.addOutput(backTo(add(mul(x, perColumn(weight)), perColumn(bias)), dtype));
      break;
    }
  }
  return fusion;
}

// In the fusion's input order. Values keep every op finite: positive rstd, weights near 1.
inline std::vector<InputSpec> inputsOf(Op op, DataType dtype, int64_t m, int64_t n) {
  const InputSpec x{{m, n}, dtype, -2.0f, 2.0f};
  const InputSpec dy{{m, n}, dtype, -1.0f, 1.0f};
  const InputSpec weight{{n}, dtype, 0.5f, 1.5f};
  const InputSpec bias{{n}, dtype, -0.5f, 0.5f};
  const InputSpec mean{{m}, DataType::Float32, -0.1f, 0.1f};
  const InputSpec rstd{{m}, DataType::Float32, 0.5f, 2.0f};
  switch (op) {
    case Op::SoftmaxFwd:
    case Op::RowSum:
      return {x};
    case Op::SoftmaxBwd:
      return {dy, {{m, n}, dtype, 0.0f, 2.0f / static_cast<float>(n)}};
    case Op::LayerNormFwd:
    case Op::ScaleBias:
      return {x, weight, bias};
    case Op::LayerNormBwd:
      return {dy, x, mean, rstd, weight};
    case Op::RmsNormFwd:
      return {x, weight};
    case Op::RmsNormBwd:
      return {dy, x, rstd, weight};
  }
  return {};
}

/// How many of inputsOf(op), from the first, have the row dim (M) as dim 0; the others are
/// per-column parameters (weight, bias).
inline size_t rowInputs(Op op) {
  switch (op) {
    case Op::SoftmaxBwd:
      return 2;
    case Op::LayerNormBwd:
      return 4;
    case Op::RmsNormBwd:
      return 3;
    default:
      return 1;
  }
}

/// How many of the op's outputs, from the first, have the row dim (M) as dim 0; the others
/// (dw, db) sum over every row.
inline size_t rowOutputs(Op op, size_t outputs) {
  return op == Op::LayerNormBwd || op == Op::RmsNormBwd ? 1 : outputs;
}

// ---- checking a case's results on its first rows

constexpr int64_t kCheckedRows = 2;

// The first `rows` rows of a contiguous device tensor whose dim 0 is the row dim, on the host.
inline HostTensor leadingRows(const DeviceTensor& tensor, int64_t rows) {
  std::vector<int64_t> sizes = tensor.sizes();
  sizes[0] = std::min(rows, sizes[0]);
  return DeviceTensor::borrow(tensor.dtype(), sizes, tensor.strides(), tensor.data(),
                              tensor.device(), tensor.owner())
      .toHost();
}

/// Compares the row outputs of a run of the op's fusion (`outputs`, in the fusion's order, for
/// `inputs`) on the first kCheckedRows rows with the reference evaluator run on those rows of
/// the inputs (every row's results depend on its own row only). Returns what differs, or an
/// empty string.
inline std::string checkLeadingRows(Op op, DataType dtype, const std::vector<DeviceTensor>& inputs,
                                    const std::vector<DeviceTensor>& outputs) {
  std::vector<HostTensor> host_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    host_inputs.push_back(i < rowInputs(op) ? leadingRows(inputs[i], kCheckedRows)
                                            : inputs[i].toHost());
  }
  const std::vector<HostTensor> expected =
      evaluateFusionTensors(*defineFusion(op, dtype), host_inputs);
  // bfloat16 results may differ by an ulp or two; float32 by the order of the additions.
  const double tolerance = dtype == DataType::BFloat16 ? 1.6e-2 : 2e-4;
  for (size_t j = 0; j < rowOutputs(op, outputs.size()); ++j) {
    const HostTensor actual = leadingRows(outputs[j], kCheckedRows);
    double scale = 0.0;
    for (int64_t i = 0; i < expected[j].numel(); ++i) {
      scale = std::max(scale, std::abs(toDouble(expected[j].atFlat(i))));
    }
    for (int64_t i = 0; i < expected[j].numel(); ++i) {
      const double want = toDouble(expected[j].atFlat(i));
      const double got = toDouble(actual.atFlat(i));
      if (!(std::abs(got - want) <= tolerance * (std::abs(want) + 0.01 * scale))) {
        return "wrong result: output " + std::to_string(j) + " element " + std::to_string(i) +
               " of its first " + std::to_string(kCheckedRows) + " rows is " + std::to_string(got) +
               ", the reference evaluator gives " + std::to_string(want);
      }
    }
  }
  return "";
}

}  // namespace braze::bench
