#pragma once

// The fusions the pointwise benchmark schedules with the pointwise plugin (and the compile-time
// benchmark compiles), defined with the ops API as a user would.

#include <memory>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"

namespace braze::bench {

/// out = a + b, float32 [M, N].
inline std::unique_ptr<Fusion> defineAdd() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2);
  TensorView* b = makeSymbolicTensor(*fusion, 2);
  fusion->addOutput(add(a, b));
  return fusion;
}

/// out = bf16(gelu_tanh(f32(x) + f32(bias[None, :]))), x bfloat16 [M, N], bias bfloat16 [N].
inline std::unique_ptr<Fusion> defineGeluBias() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* bias = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
  TensorView* y =
      gelu(add(cast(x, DataType::Float32), cast(broadcast(bias, {true, false}), DataType::Float32)),
           GeluApproximation::Tanh);
  fusion->addOutput(cast(y, DataType::BFloat16));
  return fusion;
}

/// out = bf16(f32(f16(bf16(x))) * 0.5), x float32 [M, N].
inline std::unique_ptr<Fusion> defineCastChain() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* narrowed = cast(cast(x, DataType::BFloat16), DataType::Float16);
  fusion->addOutput(cast(mul(cast(narrowed, DataType::Float32), 0.5), DataType::BFloat16));
  return fusion;
}

}  // namespace braze::bench
