// propagateTransforms: replaying a reference's loop transforms across producers, consumers and
// siblings; where propagation stops; and a softmax scheduled end to end that still evaluates.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "braze/sched/loop_map.h"
#include "braze/sched/transform_history.h"
#include "braze/sched/transform_propagation.h"
#include "sched/fusion_fixtures.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

std::vector<std::optional<int64_t>> constantExtents(const TensorView* tv) {
  std::vector<std::optional<int64_t>> extents;
  for (IterDomain* id : tv->loop()) extents.push_back(id->extent()->constantInt());
  return extents;
}

std::vector<IterType> iterTypes(const TensorView* tv) {
  std::vector<IterType> types;
  for (IterDomain* id : tv->loop()) types.push_back(id->iterType());
  return types;
}

TEST(TransformPropagationTest, PointwiseChainFromTheOutput) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = add(y, 1.0);
  fusion.addOutput(z);
  z->merge(0)->split(0, 128)->split(0, 4);  // [i/512, 4, 128]
  const std::vector<TensorView*> replayed = propagateTransforms(z);
  EXPECT_THAT(replayed, testing::UnorderedElementsAre(x, y));
  for (TensorView* tv : {x, y}) {
    ASSERT_EQ(tv->nLoopDims(), 3) << tv->name();
    EXPECT_EQ(constantExtents(tv), constantExtents(z));
    EXPECT_EQ(loopTransforms(tv).size(), 3u);
  }
  EXPECT_EQ(mapLoopDomains(y, z), z->loop());
  EXPECT_EQ(mapLoopDomains(x, y), y->loop());
  // The reference itself is untouched.
  EXPECT_EQ(loopTransforms(z).size(), 3u);
}

TEST(TransformPropagationTest, ReorderIsReplayed) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = neg(x);
  fusion.addOutput(y);
  y->reorder({{2, 0}});
  propagateTransforms(y);
  EXPECT_EQ(x->loop(), (std::vector<IterDomain*>{x->axis(2), x->axis(0), x->axis(1)}));
}

TEST(TransformPropagationTest, PermuteMapsByThePermutation) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {6, 8}});
  TensorView* t = transpose(x, 0, 1);  // [8, 6]
  TensorView* y = exp(t);
  fusion.addOutput(y);
  y->split(1, 3);  // [8, 2, 3]
  propagateTransforms(y);
  // x's dim 0 (extent 6) is t's dim 1: it is the one split, and x's loop follows y's order.
  EXPECT_EQ(constantExtents(x), (std::vector<std::optional<int64_t>>{8, 2, 3}));
  EXPECT_EQ(x->loop()[0], x->axis(1));
  EXPECT_EQ(mapLoopDomains(x, t), t->loop());
  EXPECT_EQ(mapLoopDomains(t, y), y->loop());
}

TEST(TransformPropagationTest, ReductionReferenceReachesProducersAndConsumers) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* s = sum(e, {1});
  TensorView* o = mul(s, 2.0);
  fusion.addOutput(o);
  s->split(1, 32)->split(0, 4);  // [i/4, 4, r/32, 32]
  propagateTransforms(s);
  EXPECT_EQ(iterTypes(e), (std::vector<IterType>{IterType::Iteration, IterType::Iteration,
                                                 IterType::Iteration, IterType::Iteration}));
  EXPECT_EQ(mapLoopDomains(e, s), s->loop());
  EXPECT_EQ(mapLoopDomains(x, e), e->loop());
  // The consumer has no reduced dim: it gets the split of i0 only.
  ASSERT_EQ(o->nLoopDims(), 2);
  EXPECT_EQ(o->loopAxis(1)->extent()->constantInt(), 4);
  const std::vector<IterDomain*> to_o = mapLoopDomains(s, o);
  EXPECT_EQ(to_o[0], o->loopAxis(0));
  EXPECT_EQ(to_o[1], o->loopAxis(1));
}

TEST(TransformPropagationTest, BroadcastDimsAreKeptAfterReplayedAxes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* e = exp(x);
  TensorView* b = broadcast(e, {false, true});  // [i, b]
  fusion.addOutput(b);
  e->split(0, 64);
  propagateTransforms(e, {b});
  ASSERT_EQ(b->nLoopDims(), 3);
  EXPECT_TRUE(b->loopAxis(2)->isBroadcast());
  EXPECT_EQ(b->loopAxis(2), b->axis(1));
  EXPECT_EQ(mapLoopDomains(e, b), (std::vector<IterDomain*>{b->loopAxis(0), b->loopAxis(1)}));
}

TEST(TransformPropagationTest, MergeWithABroadcastOnlyOnOneSide) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* e = exp(x);
  TensorView* b = broadcast(e, {false, true});  // [i, b]
  fusion.addOutput(b);
  b->merge(0)->split(0, 128);
  propagateTransforms(b);
  // e has no broadcast dim: the merge stands for its only dim, which is split alike.
  ASSERT_EQ(e->nLoopDims(), 2);
  EXPECT_EQ(e->loopAxis(1)->extent()->constantInt(), 128);
  EXPECT_EQ(mapLoopDomains(e, b), b->loop());
}

TEST(TransformPropagationTest, StopsAtReshape) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* r = reshape(e, {int64_t{-1}});
  TensorView* y = neg(r);
  fusion.addOutput(y);
  y->split(0, 4);
  const std::vector<TensorView*> replayed = propagateTransforms(y);
  EXPECT_THAT(replayed, testing::ElementsAre(r));
  EXPECT_EQ(e->loop(), e->logical());
  EXPECT_EQ(x->loop(), x->logical());
}

TEST(TransformPropagationTest, OnlyTargetsChangeAndTheWalkStaysInside) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* a = exp(x);
  TensorView* b = neg(a);
  TensorView* c = add(b, 1.0);
  fusion.addOutput(c);
  c->split(0, 8);
  // a is reachable only through b, which is not a target.
  EXPECT_TRUE(propagateTransforms(c, {a}).empty());
  EXPECT_EQ(a->nLoopDims(), 1);
  EXPECT_THAT(propagateTransforms(c, {a, b}), testing::ElementsAre(b, a));
  EXPECT_EQ(a->nLoopDims(), 2);
  EXPECT_EQ(x->nLoopDims(), 1);
}

TEST(TransformPropagationTest, PreviousScheduleIsReplaced) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* a = exp(x);
  TensorView* b = neg(a);
  fusion.addOutput(b);
  a->split(0, 3)->parallelize(1, ParallelType::TIDx);
  b->split(0, 16);
  propagateTransforms(b, {a});
  ASSERT_EQ(a->nLoopDims(), 2);
  EXPECT_EQ(a->loopAxis(1)->extent()->constantInt(), 16);
  EXPECT_EQ(a->loopAxis(1)->parallelType(), ParallelType::Serial);
}

TEST(TransformPropagationTest, WelfordSiblingsAreScheduledAlike) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  WelfordResult w = welford(x, {1});
  fusion.addOutput(w.avg);
  fusion.addOutput(w.m2);
  fusion.addOutput(w.n);
  w.avg->split(1, 16)->split(0, 2);
  propagateTransforms(w.avg);
  for (TensorView* sibling : {w.m2, w.n}) {
    EXPECT_EQ(constantExtents(sibling), constantExtents(w.avg)) << sibling->name();
    EXPECT_EQ(iterTypes(sibling), iterTypes(w.avg)) << sibling->name();
  }
  EXPECT_EQ(mapLoopDomains(x, w.n), w.n->loop());
}

TEST(TransformPropagationTest, SoftmaxFromTheOutput) {
  test::SoftmaxFusion s = test::makeSoftmax();
  s.y->split(1, 128)->split(1, 4);  // [i0, i1/512, 4, 128]
  propagateTransforms(s.y);
  // The reductions get the reference's split of their reduced dim, through x.
  for (TensorView* reduction : {s.max, s.sum}) {
    EXPECT_EQ(iterTypes(reduction),
              (std::vector<IterType>{IterType::Iteration, IterType::Reduction, IterType::Reduction,
                                     IterType::Reduction}))
        << reduction->name();
    EXPECT_EQ(constantExtents(reduction), constantExtents(s.y));
  }
  EXPECT_EQ(mapLoopDomains(s.x, s.max), s.max->loop());
  EXPECT_EQ(mapLoopDomains(s.exp, s.sum), s.sum->loop());
  EXPECT_EQ(mapLoopDomains(s.exp, s.y), s.y->loop());
  EXPECT_EQ(mapLoopDomains(s.shifted, s.exp), s.exp->loop());
  // The broadcasts are scheduled through their consumers: their broadcast dim is split alike.
  EXPECT_EQ(mapLoopDomains(s.sum_b, s.y), s.y->loop());
  EXPECT_EQ(mapLoopDomains(s.max_b, s.shifted), s.shifted->loop());

  inlineMost(*s.fusion);
  EXPECT_EQ(s.shifted->inlinePosition(), 4);
  EXPECT_EQ(s.exp->inlinePosition(), 1);
  EXPECT_EQ(s.max->inlinePosition(), 1);

  test::RandomTensors random(21);
  const HostTensor input = random.uniform(DataType::Float32, {5, 700});
  const std::vector<HostTensor> out = evaluateFusionTensors(*s.fusion, {input});
  test::expectClose(
      out[0], {DataType::Float32, {5, 700}, test::softmaxRows(test::valuesOf(input), 5, 700)});
}

}  // namespace
}  // namespace braze
