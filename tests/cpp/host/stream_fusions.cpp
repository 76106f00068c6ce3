#include "host/stream_fusions.h"

#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze::test {

void streamOver(TensorView* tv, int64_t axis, int64_t slices) {
  if (slices > 0) tv->split(axis, slices, /*inner_split=*/false);
  tv->parallelize(axis, ParallelType::Stream);
}

std::unique_ptr<Fusion> streamedPointwise(int64_t slices, bool stream_middle) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* t = mul(y, 2.0);
  TensorView* z = add(t, 1.0);
  fusion->addOutput(z);
  for (TensorView* tv : {y, t, z}) {
    if (tv != t || stream_middle) streamOver(tv, 0, slices);
  }
  return fusion;
}

std::unique_ptr<Fusion> streamedInPlaceUpdate(int64_t slices) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* p = makeSymbolicTensor(*fusion, 2);
  TensorView* g = makeSymbolicTensor(*fusion, 2);
  TensorView* step = mul(g, 0.1);
  TensorView* updated = sub(p, step);
  fusion->addOutput(updated);
  fusion->aliasOutputToInput(updated, p);
  for (TensorView* tv : {step, updated}) streamOver(tv, 0, slices);
  return fusion;
}

std::unique_ptr<Fusion> streamedTwoKernels() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* copy = segment_set(y);
  TensorView* z = neg(copy);
  fusion->addOutput(z);
  for (TensorView* tv : {y, copy, z}) streamOver(tv);
  return fusion;
}

std::unique_ptr<Fusion> streamedSoftmax(int64_t rows_per_slice) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* e = exp(sub(x, amax(x, {-1}, /*keepdim=*/true)));
  fusion->addOutput(div(e, sum(e, {-1}, /*keepdim=*/true)));
  for (TensorView* tv : fusion->allTensors()) {
    if (fusion->isInput(tv)) continue;
    tv->split(0, rows_per_slice);
    tv->parallelize(0, ParallelType::Stream);
  }
  return fusion;
}

std::unique_ptr<Fusion> streamedMatmul(int64_t slices) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* c = matmul(a, b);
  fusion->addOutput(c);
  streamOver(c, 0, slices);
  return fusion;
}

std::unique_ptr<Fusion> streamedRowSumsOfWork(int64_t slices, int64_t work) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* y = makeSymbolicTensor(*fusion, 2);
  for (int64_t k = 0; k < work; ++k) y = add(mul(sin(y), 0.5), y);
  fusion->addOutput(sum(y, {1}));
  for (TensorView* tv : fusion->allTensors()) {
    if (!fusion->isInput(tv)) streamOver(tv, 0, slices);
  }
  return fusion;
}

}  // namespace braze::test
