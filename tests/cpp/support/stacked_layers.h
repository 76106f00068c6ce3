#pragma once

// Stacked transformer-like layers over rows: the segmenter's scale test and benchmark.
// Header-only, so that the benchmarks can use it without the test libraries.
//
//   per layer, on x [rows, n] (float32 inside, a weight w [n] per layer):
//     y = norm(x) * w          layer norm (mean and variance over dim 1) or RMS norm
//     r = x + gelu(y)          residual
//     x = r - mean(r, dim 0)   a reduction over the other axis: a segment break
//   output: x cast back to the input dtype

#include <cstdint>
#include <memory>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze::test {

enum class LayerNorm : uint8_t { Layer, Rms };

/// Layers over a [rows, n] input of `dtype` until the fusion has at least `ops` Exprs: after
/// the op that reaches it (the last layer cut short) or, with `whole_layers`, at the end of
/// that layer.
inline std::unique_ptr<Fusion> stackedLayers(int64_t ops, LayerNorm norm, DataType dtype,
                                             bool whole_layers = false) {
  auto fusion = std::make_unique<Fusion>();
  Fusion& f = *fusion;
  int64_t counted = 0;
  int64_t exprs = 0;
  // Exprs made so far (scalar ones included), counted incrementally.
  const auto reached = [&] {
    for (; counted < f.numStatements(); ++counted) {
      if (f.statement(counted)->isExpr()) ++exprs;
    }
    return exprs >= ops;
  };
  TensorView* input = makeSymbolicTensor(f, 2, dtype);
  TensorView* x = dtype == DataType::Float32 ? input : cast(input, DataType::Float32);
  bool done = false;
  // Applies one step unless the count was reached (in the middle of a layer when cut short).
  const auto step = [&](auto&& make) {
    if (done) return;
    x = make(x);
    done = !whole_layers && reached();
  };
  while (!done) {
    TensorView* w = cast(makeSymbolicTensor(f, 1, dtype), DataType::Float32);
    TensorView* layer_input = x;
    if (norm == LayerNorm::Layer)
      step([](TensorView* v) { return sub(v, mean(v, {1}, /*keepdim=*/true)); });
    step([](TensorView* v) {
      return mul(v, rsqrt(add(mean(mul(v, v), {1}, /*keepdim=*/true), 1e-5)));
    });
    step([&](TensorView* v) { return mul(v, broadcast(w, {true, false})); });
    step([&](TensorView* v) { return add(layer_input, gelu(v)); });
    step([](TensorView* v) { return sub(v, mean(v, {0}, /*keepdim=*/true)); });
    if (reached()) done = true;
  }
  f.addOutput(dtype == DataType::Float32 ? x : cast(x, dtype));
  return fusion;
}

}  // namespace braze::test
