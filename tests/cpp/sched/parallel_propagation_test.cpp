// propagateParallelTypes: copying parallel types through loop maps, Vectorize only where it is
// valid, conflicts skipped, and type filters.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"
#include "sched/fusion_fixtures.h"

namespace braze {
namespace {

std::vector<ParallelType> typesOf(const TensorView* tv) {
  std::vector<ParallelType> types;
  for (IterDomain* id : tv->loop()) types.push_back(id->parallelType());
  return types;
}

using Types = std::vector<ParallelType>;

TEST(ParallelPropagationTest, PointwiseChain) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = add(y, 1.0);
  fusion.addOutput(z);
  z->merge(0)->split(0, 128)->split(0, 2);
  propagateTransforms(z);
  z->parallelize(0, ParallelType::BIDx)->parallelize(1, ParallelType::Unroll);
  z->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(z);
  EXPECT_EQ(typesOf(y), typesOf(z));
  EXPECT_EQ(typesOf(x), typesOf(z));
  EXPECT_EQ(mapReferenceLoop(z, x), x->loop());
}

TEST(ParallelPropagationTest, ReductionGetsTheThreadTypesOfItsInput) {
  test::SoftmaxFusion s = test::makeSoftmax();
  s.y->split(1, 128);  // [i0, i1/128, 128]
  propagateTransforms(s.y);
  s.y->parallelize(0, ParallelType::BIDx)->parallelize(2, ParallelType::TIDx);
  propagateParallelTypes(s.y);
  for (TensorView* tv : {s.max, s.sum, s.exp, s.shifted, s.max_b, s.sum_b}) {
    EXPECT_EQ(typesOf(tv), (Types{ParallelType::BIDx, ParallelType::Serial, ParallelType::TIDx}))
        << tv->name();
  }
}

TEST(ParallelPropagationTest, VectorizeOnlyWhereContiguous) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* w = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {true, false}});
  TensorView* y = add(x, w);
  TensorView* out = neg(y);
  fusion.addOutput(out);
  TensorView* xc = x->cacheAfter();
  TensorView* wc = w->cacheAfter();
  TensorView* oc = out->cacheBefore();
  out->split(1, 4);
  propagateTransforms(out);
  y->setMemoryType(MemoryType::Local);
  out->parallelize(0, ParallelType::BIDx)->parallelize(2, ParallelType::Vectorize);
  propagateParallelTypes(out, {xc, wc, y, oc}, {ParallelType::Vectorize});
  EXPECT_EQ(xc->loopAxis(2)->parallelType(), ParallelType::Vectorize);
  // w's rows are strided: its copy keeps scalar loads.
  EXPECT_EQ(wc->loopAxis(2)->parallelType(), ParallelType::Serial);
  EXPECT_EQ(y->loopAxis(2)->parallelType(), ParallelType::Vectorize);
  EXPECT_EQ(oc->loopAxis(2)->parallelType(), ParallelType::Vectorize);
  // Only Vectorize was asked for.
  EXPECT_EQ(xc->loopAxis(0)->parallelType(), ParallelType::Serial);
}

TEST(ParallelPropagationTest, ATypeAlreadyTakenIsNotGivenTwice) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = neg(y);
  fusion.addOutput(z);
  y->parallelize(0, ParallelType::TIDx);
  z->parallelize(1, ParallelType::TIDx);
  propagateParallelTypes(z, {y});
  // z's axis 0 is Serial, so y's axis 0 is cleared; its axis 1 then takes TIDx.
  EXPECT_EQ(typesOf(y), (Types{ParallelType::Serial, ParallelType::TIDx}));

  y->parallelize(1, ParallelType::Serial)->parallelize(0, ParallelType::TIDx);
  z->parallelize(0, ParallelType::TIDy);
  propagateParallelTypes(z, {y}, {ParallelType::TIDx});
  // Axis 0 keeps TIDx (TIDy is filtered out), so axis 1 cannot take TIDx as well.
  EXPECT_EQ(typesOf(y), (Types{ParallelType::TIDx, ParallelType::Serial}));
}

}  // namespace
}  // namespace braze
