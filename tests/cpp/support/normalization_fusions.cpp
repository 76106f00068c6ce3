#include "support/normalization_fusions.h"

#include "braze/error.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"

namespace braze::test {

namespace {

TensorView* toFloat(TensorView* x) {
  return x->dtype() == DataType::Float32 ? x : cast(x, DataType::Float32);
}

TensorView* toDtype(TensorView* x, DataType dtype) {
  return dtype == DataType::Float32 ? x : cast(x, dtype);
}

// A per-row value [rows] seen along the row: [rows, 1].
TensorView* alongRows(TensorView* row_values) {
  return broadcast(row_values, {false, true});
}

// A per-column value [n] seen by every row: [1, n].
TensorView* alongColumns(TensorView* column_values) {
  return broadcast(column_values, {true, false});
}

void softmax(Fusion& fusion, DataType dtype, bool log) {
  TensorView* x = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* shifted = sub(x, max(x, {1}, /*keepdim=*/true));
  TensorView* e = exp(shifted);
  TensorView* total = sum(e, {1}, /*keepdim=*/true);
  TensorView* y = log ? sub(shifted, ::braze::log(total)) : div(e, total);
  fusion.addOutput(toDtype(y, dtype));
}

void softmaxBackward(Fusion& fusion, DataType dtype) {
  TensorView* dy = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* y = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* dot = sum(mul(dy, y), {1}, /*keepdim=*/true);
  fusion.addOutput(toDtype(mul(y, sub(dy, dot)), dtype));
}

void layerNorm(Fusion& fusion, DataType dtype) {
  TensorView* x = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* w = toFloat(makeSymbolicTensor(fusion, 1, dtype));
  TensorView* b = toFloat(makeSymbolicTensor(fusion, 1, dtype));
  TensorView* mu = mean(x, {1});
  TensorView* centered = sub(x, alongRows(mu));
  TensorView* rstd = rsqrt(add(mean(mul(centered, centered), {1}), kNormEpsilon));
  TensorView* y = add(mul(mul(centered, alongRows(rstd)), alongColumns(w)), alongColumns(b));
  fusion.addOutput(toDtype(y, dtype));
  fusion.addOutput(mu);
  fusion.addOutput(rstd);
}

void rmsNorm(Fusion& fusion, DataType dtype) {
  TensorView* x = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* w = toFloat(makeSymbolicTensor(fusion, 1, dtype));
  TensorView* rstd = rsqrt(add(mean(mul(x, x), {1}), kNormEpsilon));
  TensorView* y = mul(mul(x, alongRows(rstd)), alongColumns(w));
  fusion.addOutput(toDtype(y, dtype));
  fusion.addOutput(rstd);
}

// dx = rstd * (w dy - mean(w dy) - xhat * mean(w dy * xhat)); dw = sum_rows(dy * xhat),
// db = sum_rows(dy). RMS norm drops the mean terms (its xhat is x * rstd).
void normBackward(Fusion& fusion, DataType dtype, bool rms) {
  TensorView* dy = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* x = toFloat(makeSymbolicTensor(fusion, 2, dtype));
  TensorView* mu = rms ? nullptr : makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* rstd = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* w = toFloat(makeSymbolicTensor(fusion, 1, dtype));
  TensorView* rstd_rows = alongRows(rstd);
  TensorView* xhat = mul(rms ? x : sub(x, alongRows(mu)), rstd_rows);
  TensorView* wdy = mul(dy, alongColumns(w));
  TensorView* projection = mul(xhat, mean(mul(wdy, xhat), {1}, /*keepdim=*/true));
  TensorView* centered = rms ? wdy : sub(wdy, mean(wdy, {1}, /*keepdim=*/true));
  TensorView* dx = mul(sub(centered, projection), rstd_rows);
  fusion.addOutput(toDtype(dx, dtype));
  fusion.addOutput(toDtype(sum(mul(dy, xhat), {0}), dtype));
  if (!rms) fusion.addOutput(toDtype(sum(dy, {0}), dtype));
}

}  // namespace

std::string toString(Normalization kind) {
  switch (kind) {
    case Normalization::Softmax:
      return "softmax";
    case Normalization::LogSoftmax:
      return "log_softmax";
    case Normalization::SoftmaxBackward:
      return "softmax_bwd";
    case Normalization::LayerNorm:
      return "layer_norm";
    case Normalization::RmsNorm:
      return "rms_norm";
    case Normalization::LayerNormBackward:
      return "layer_norm_bwd";
    case Normalization::RmsNormBackward:
      return "rms_norm_bwd";
  }
  return "?";
}

const std::vector<Normalization>& allNormalizations() {
  static const std::vector<Normalization> kinds = {
      Normalization::Softmax,         Normalization::LogSoftmax,
      Normalization::LayerNorm,       Normalization::RmsNorm,
      Normalization::SoftmaxBackward, Normalization::LayerNormBackward,
      Normalization::RmsNormBackward};
  return kinds;
}

bool hasColumnReduction(Normalization kind) {
  return kind == Normalization::LayerNormBackward || kind == Normalization::RmsNormBackward;
}

std::unique_ptr<Fusion> makeNormalization(Normalization kind, DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  switch (kind) {
    case Normalization::Softmax:
      softmax(*fusion, dtype, /*log=*/false);
      break;
    case Normalization::LogSoftmax:
      softmax(*fusion, dtype, /*log=*/true);
      break;
    case Normalization::SoftmaxBackward:
      softmaxBackward(*fusion, dtype);
      break;
    case Normalization::LayerNorm:
      layerNorm(*fusion, dtype);
      break;
    case Normalization::RmsNorm:
      rmsNorm(*fusion, dtype);
      break;
    case Normalization::LayerNormBackward:
      normBackward(*fusion, dtype, /*rms=*/false);
      break;
    case Normalization::RmsNormBackward:
      normBackward(*fusion, dtype, /*rms=*/true);
      break;
  }
  return fusion;
}

std::vector<std::vector<int64_t>> normalizationInputSizes(Normalization kind, int64_t rows,
                                                          int64_t n) {
  switch (kind) {
    case Normalization::Softmax:
    case Normalization::LogSoftmax:
      return {{rows, n}};
    case Normalization::SoftmaxBackward:
      return {{rows, n}, {rows, n}};
    case Normalization::LayerNorm:
      return {{rows, n}, {n}, {n}};
    case Normalization::RmsNorm:
      return {{rows, n}, {n}};
    case Normalization::LayerNormBackward:
      return {{rows, n}, {rows, n}, {rows}, {rows}, {n}};
    case Normalization::RmsNormBackward:
      return {{rows, n}, {rows, n}, {rows}, {n}};
  }
  return {};
}

std::vector<DataType> normalizationInputDtypes(Normalization kind, DataType dtype) {
  const DataType f32 = DataType::Float32;
  switch (kind) {
    case Normalization::Softmax:
    case Normalization::LogSoftmax:
      return {dtype};
    case Normalization::SoftmaxBackward:
      return {dtype, dtype};
    case Normalization::LayerNorm:
      return {dtype, dtype, dtype};
    case Normalization::RmsNorm:
      return {dtype, dtype};
    case Normalization::LayerNormBackward:
      return {dtype, dtype, f32, f32, dtype};
    case Normalization::RmsNormBackward:
      return {dtype, dtype, f32, dtype};
  }
  return {};
}

namespace {

// nvFuser's definitions compute reduced-precision inputs in float32.
TensorView* promoted(TensorView* t) {
  return t->dtype() == DataType::Float32 ? t : cast(t, DataType::Float32);
}

// x and dy in float32, the [rows, n] shape, and the weights in float32 expanded to it.
struct RowOperands {
  TensorView* x;
  TensorView* dy;
  Operand rows;
  Operand n;
  std::vector<Operand> shape;
  TensorView* w_full;
};

RowOperands rowOperands(TensorView* x_in, TensorView* dy_in, TensorView* w_in) {
  const Operand rows(x_in->axis(0)->extent());
  const Operand n(x_in->axis(1)->extent());
  const std::vector<Operand> shape = {rows, n};
  return {promoted(x_in), promoted(dy_in),
          rows,           n,
          shape,          broadcast_in_dim(promoted(w_in), shape, {1})};
}

// The outputs in their definition's dtype: reduced-precision results are cast back.
void addOutputsAs(Fusion& fusion, DataType dtype, const std::vector<TensorView*>& outputs) {
  for (TensorView* out : outputs)
    fusion.addOutput(dtype == DataType::Float32 ? out : cast(out, dtype));
}

}  // namespace

std::unique_ptr<Fusion> makeNvfuserStyleLayerNormBackward(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  Fusion& f = *fusion;
  TensorView* x_in = makeInputTensor(f, {.dtype = dtype, .sizes = {-1, -1}});
  TensorView* dy_in = makeInputTensor(f, {.dtype = dtype, .sizes = {-1, -1}});
  TensorView* mean = makeInputTensor(f, {.dtype = DataType::Float32, .sizes = {-1}});
  TensorView* rstd = makeInputTensor(f, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  TensorView* w_in = makeInputTensor(f, {.dtype = dtype, .sizes = {-1}});
  // Named, not structured bindings: the lambdas below capture them, which clang 14 refuses.
  const RowOperands operands = rowOperands(x_in, dy_in, w_in);
  TensorView* x = operands.x;
  TensorView* dy = operands.dy;
  TensorView* w_full = operands.w_full;
  const Operand& n = operands.n;
  const auto perRow = [&](TensorView* t) { return broadcast_in_dim(t, {operands.rows, 1}, {0}); };
  const auto full = [&](TensorView* t) { return broadcast_in_dim(t, operands.shape, {0, 1}); };

  TensorView* centered = sub(x, full(perRow(mean)));
  TensorView* rstd_full = full(rstd);
  TensorView* xhat = mul(centered, rstd_full);
  TensorView* db = sum(dy, {0});
  TensorView* w_dy = mul(dy, w_full);
  TensorView* dw = sum(mul(dy, xhat), {0});
  TensorView* w_dy_rstd = mul(w_dy, rstd_full);
  TensorView* sum_w_dy_centered = sum(mul(w_dy, centered), {1});
  TensorView* sum_neg_w_dy_rstd = sum(neg(w_dy_rstd), {1});
  // d(rstd) per row: -0.5 * sum(w dy (x - mean)) * rstd^3, on [rows, 1] tensors.
  TensorView* d_var = mul(mul(-0.5, perRow(sum_w_dy_centered)), pow(rstd, 3.0));
  TensorView* d_var_rows = sum(d_var, {1});
  Val* inverse_n = reciprocal(n);
  TensorView* from_var =
      mul(mul(mul(2.0, full(perRow(d_var_rows))), sub(x, full(perRow(mean)))), Operand(inverse_n));
  TensorView* from_mean =
      mul(Operand(inverse_n), full(perRow(sum(perRow(sum_neg_w_dy_rstd), {1}))));
  TensorView* dx = add(w_dy_rstd, add(from_var, from_mean));
  addOutputsAs(f, dtype, {dx, dw, db});
  return fusion;
}

std::unique_ptr<Fusion> makeNvfuserStyleRmsNormBackward(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  Fusion& f = *fusion;
  TensorView* x_in = makeInputTensor(f, {.dtype = dtype, .sizes = {-1, -1}});
  TensorView* rms = makeInputTensor(f, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  TensorView* dy_in = makeInputTensor(f, {.dtype = dtype, .sizes = {-1, -1}});
  TensorView* w_in = makeInputTensor(f, {.dtype = dtype, .sizes = {-1}});
  const auto [x, dy, rows, n, shape, w_full] = rowOperands(x_in, dy_in, w_in);
  TensorView* rms_full = broadcast_in_dim(rms, shape, {0, 1});
  TensorView* inverse_rms = reciprocal(rms_full);
  TensorView* xhat = mul(x, inverse_rms);
  TensorView* dw = sum(mul(dy, xhat), {0});
  TensorView* w_dy = mul(dy, w_full);
  TensorView* from_xhat = mul(w_dy, inverse_rms);
  TensorView* terms = mul(mul(neg(w_dy), x), reciprocal(pow(rms_full, 2.0)));
  TensorView* per_row =
      mul(broadcast_in_dim(sum(terms, {1}), {rows, 1}, {0}), reciprocal(mul(2.0, rms)));
  TensorView* scaled = mul(per_row, Operand(reciprocal(n)));
  TensorView* spread =
      broadcast_in_dim(broadcast_in_dim(sum(scaled, {1}), {rows, 1}, {0}), shape, {0, 1});
  TensorView* dx = add(from_xhat, mul(mul(spread, 2.0), x));
  addOutputsAs(f, dtype, {dx, dw});
  return fusion;
}

std::vector<HostTensor> nvfuserStyleLayerNormBackwardArguments(DataType dtype, int64_t rows,
                                                               int64_t n, uint64_t seed) {
  RandomTensors random(seed);
  return {random.uniform(dtype, {rows, n}, -2.0, 2.0), random.uniform(dtype, {rows, n}, -2.0, 2.0),
          random.uniform(DataType::Float32, {rows}, -2.0, 2.0),
          random.uniform(DataType::Float32, {rows, 1}, 0.5, 2.0),
          random.uniform(dtype, {n}, -2.0, 2.0)};
}

std::vector<HostTensor> nvfuserStyleRmsNormBackwardArguments(DataType dtype, int64_t rows,
                                                             int64_t n, uint64_t seed) {
  RandomTensors random(seed);
  return {random.uniform(dtype, {rows, n}, -2.0, 2.0),
          random.uniform(DataType::Float32, {rows, 1}, 0.5, 2.0),
          random.uniform(dtype, {rows, n}, -2.0, 2.0), random.uniform(dtype, {n}, -2.0, 2.0)};
}

std::vector<HostTensor> normalizationArguments(Normalization kind, DataType dtype, int64_t rows,
                                               int64_t n, uint64_t seed) {
  RandomTensors random(seed);
  const std::vector<std::vector<int64_t>> sizes = normalizationInputSizes(kind, rows, n);
  const std::vector<DataType> dtypes = normalizationInputDtypes(kind, dtype);
  std::vector<HostTensor> arguments;
  for (size_t i = 0; i < sizes.size(); ++i) {
    // Per-row statistics (mean, rstd) are 1D inputs of backward fusions; rstd must be positive.
    const bool per_row =
        sizes[i].size() == 1 && sizes[i][0] == rows && rows != n &&
        (kind == Normalization::LayerNormBackward || kind == Normalization::RmsNormBackward);
    const bool rstd = per_row && i + 2 == sizes.size();
    arguments.push_back(random.uniform(dtypes[i], sizes[i], rstd ? 0.5 : -2.0, 2.0));
  }
  return arguments;
}

}  // namespace braze::test
