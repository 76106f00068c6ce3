#include "runtime/runtime_fusions.h"

#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze::test {

std::unique_ptr<Fusion> softmaxFusion(int64_t n) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float32, .sizes = {-1, n}});
  TensorView* e = exp(sub(x, amax(x, {-1}, /*keepdim=*/true)));
  fusion->addOutput(div(e, sum(e, {-1}, /*keepdim=*/true)));
  return fusion;
}

std::unique_ptr<Fusion> scaleBiasFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* w = makeSymbolicTensor(*fusion, 1);
  TensorView* b = makeSymbolicTensor(*fusion, 1);
  fusion->addOutput(add(mul(x, broadcast(w, {true, false})), broadcast(b, {true, false})));
  return fusion;
}

std::unique_ptr<Fusion> centeredSoftmaxFusion(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* centered = sub(xf, mean(xf, {0}, /*keepdim=*/true));
  TensorView* e = exp(sub(centered, amax(centered, {-1}, /*keepdim=*/true)));
  fusion->addOutput(cast(div(e, sum(e, {-1}, /*keepdim=*/true)), dtype));
  return fusion;
}

std::unique_ptr<Fusion> randomNoiseFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  Scalar* seed = makeInputScalar(*fusion, DataType::Int64);
  Scalar* offset = makeInputScalar(*fusion, DataType::Int64);
  const std::vector<Operand> shape = {x->logical()[0]->extent(), x->logical()[1]->extent()};
  fusion->addOutput(add(x, uniform(*fusion, shape, -1.0, 1.0, DataType::Float32, seed, offset)));
  // Selected through x (always the draw), so that the output maps onto x's dims and one
  // pointwise kernel covers both outputs; a factory output unrelated to any input dim would
  // get a segment of its own.
  TensorView* noise = normal(*fusion, shape, 0.0, 1.0, DataType::Float32, seed, offset);
  fusion->addOutput(where(gt(x, 1e30), x, noise));
  return fusion;
}

std::unique_ptr<Fusion> indexingAndCopiesFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* rows = makeSymbolicTensor(*fusion, 1, DataType::Int64);
  fusion->addOutput(stride_order(index_select(exp(x), 0, rows), {0, 1}));
  fusion->addOutput(neg(segment_set(x)));
  return fusion;
}

}  // namespace braze::test
