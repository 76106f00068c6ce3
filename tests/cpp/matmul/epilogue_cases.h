#pragma once

// Linear fusions with the epilogues the matmul scheduler fuses, shared by the CPU tier (they
// are accepted and compile for sm_90a) and the GPU tier (they match the reference evaluator).
// Every case's fusion takes x [M, K] and weight [N, K] first, then its own inputs.
//
// The operands are random multiples of 1/4 in [-1, 1] (exactOperand): every product is a
// multiple of 1/16 and every sum up to K = 4096 is exact in fp32 as in the reference's fp64,
// so the GPU and the reference round the same linear result to bf16 or fp16 and the epilogue is
// compared at the output dtype's tolerance. (With arbitrary operands a result near a rounding
// boundary lands on the other neighbour in one of them, and an epilogue that subtracts, such
// as alpha y + beta c, turns that one step into a large relative difference.)

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"

namespace braze::test {

inline HostTensor exactOperand(RandomTensors& random, DataType dtype, std::vector<int64_t> sizes) {
  const HostTensor steps = random.uniform(DataType::Int32, sizes, -4, 4);
  HostTensor operand = HostTensor::empty(dtype, std::move(sizes));
  for (int64_t i = 0; i < steps.numel(); ++i) operand.setFlat(i, toDouble(steps.atFlat(i)) / 4);
  return operand;
}

/// linear(x [M, K], weight [N, K]) with no epilogue (with `bias`, linear's own [N] bias).
inline std::unique_ptr<Fusion> linearFusion(DataType dtype, bool bias = false) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* w = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* b = bias ? makeSymbolicTensor(*fusion, 1, dtype) : nullptr;
  fusion->addOutput(linear(x, w, b));
  return fusion;
}

/// linear(x [(batch,) M, K], weight [N, K], bias [N]) followed by GELU (tanh), with x, the
/// weight or both cast from fp32 inputs before it (a prologue the matmul kernel converts as it
/// copies the tiles in); without `epilogue`, linear(x, weight) alone.
inline std::unique_ptr<Fusion> castPrologueFusion(bool convert_x, bool convert_w, DataType dtype,
                                                  int64_t batch_dims = 0, bool epilogue = true) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x =
      makeSymbolicTensor(*fusion, 2 + batch_dims, convert_x ? DataType::Float32 : dtype);
  TensorView* w = makeSymbolicTensor(*fusion, 2, convert_w ? DataType::Float32 : dtype);
  TensorView* bias = epilogue ? makeSymbolicTensor(*fusion, 1, dtype) : nullptr;
  TensorView* y = linear(convert_x ? cast(x, dtype) : x, convert_w ? cast(w, dtype) : w, bias);
  fusion->addOutput(epilogue ? gelu(y, GeluApproximation::Tanh) : y);
  return fusion;
}

struct EpilogueCase {
  std::string name;
  std::function<std::unique_ptr<Fusion>(DataType)> build;
  /// The inputs after x and weight, for an M x N result.
  std::function<std::vector<EvaluatorArgument>(RandomTensors&, DataType, int64_t m, int64_t n)>
      extra_inputs;
};

inline std::vector<EpilogueCase> epilogueCases() {
  const auto operands = [](Fusion& fusion, DataType dtype) {
    return std::pair{makeSymbolicTensor(fusion, 2, dtype), makeSymbolicTensor(fusion, 2, dtype)};
  };
  const auto none = [](RandomTensors&, DataType, int64_t, int64_t) {
    return std::vector<EvaluatorArgument>{};
  };
  std::vector<EpilogueCase> cases;
  cases.push_back({"bias_gelu",
                   [=](DataType dtype) {
                     auto fusion = std::make_unique<Fusion>();
                     auto [x, w] = operands(*fusion, dtype);
                     TensorView* bias = makeSymbolicTensor(*fusion, 1, dtype);
                     fusion->addOutput(gelu(linear(x, w, bias), GeluApproximation::Tanh));
                     return fusion;
                   },
                   [](RandomTensors& random, DataType dtype, int64_t, int64_t n) {
                     return std::vector<EvaluatorArgument>{random.uniform(dtype, {n})};
                   }});
  cases.push_back({"silu_in_float",
                   [=](DataType dtype) {
                     auto fusion = std::make_unique<Fusion>();
                     auto [x, w] = operands(*fusion, dtype);
                     fusion->addOutput(silu(cast(linear(x, w), DataType::Float32)));
                     return fusion;
                   },
                   none});
  cases.push_back({"relu_residual",
                   [=](DataType dtype) {
                     auto fusion = std::make_unique<Fusion>();
                     auto [x, w] = operands(*fusion, dtype);
                     TensorView* residual = makeSymbolicTensor(*fusion, 2, dtype);
                     fusion->addOutput(add(relu(linear(x, w)), residual));
                     return fusion;
                   },
                   [](RandomTensors& random, DataType dtype, int64_t m, int64_t n) {
                     return std::vector<EvaluatorArgument>{random.uniform(dtype, {m, n})};
                   }});
  // alpha x·wᵀ + beta c, with alpha and beta scalar inputs.
  cases.push_back({"alpha_beta",
                   [=](DataType dtype) {
                     auto fusion = std::make_unique<Fusion>();
                     auto [x, w] = operands(*fusion, dtype);
                     TensorView* c = makeSymbolicTensor(*fusion, 2, dtype);
                     Scalar* alpha = makeInputScalar(*fusion, DataType::Float64);
                     Scalar* beta = makeInputScalar(*fusion, DataType::Float64);
                     fusion->addOutput(cast(add(mul(linear(x, w), alpha), mul(c, beta)), dtype));
                     return fusion;
                   },
                   [](RandomTensors& random, DataType dtype, int64_t m, int64_t n) {
                     return std::vector<EvaluatorArgument>{random.uniform(dtype, {m, n}),
                                                           ScalarValue(0.75), ScalarValue(-1.5)};
                   }});
  // A bias per row (along M) as a broadcast, and the linear's own result as a second output.
  cases.push_back({"row_bias_two_outputs",
                   [=](DataType dtype) {
                     auto fusion = std::make_unique<Fusion>();
                     auto [x, w] = operands(*fusion, dtype);
                     TensorView* row_bias = makeSymbolicTensor(*fusion, 1, DataType::Float32);
                     TensorView* y = linear(x, w);
                     fusion->addOutput(y);
                     fusion->addOutput(add(y, broadcast(row_bias, {false, true})));
                     return fusion;
                   },
                   [](RandomTensors& random, DataType, int64_t m, int64_t) {
                     return std::vector<EvaluatorArgument>{random.uniform(DataType::Float32, {m})};
                   }});
  return cases;
}

}  // namespace braze::test
