// rFactor: the producer's and consumer's domains, maps between them, errors, and the
// reference evaluator computing the same values before and after.

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
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;

std::vector<IterType> iterTypes(const std::vector<IterDomain*>& domain) {
  std::vector<IterType> types;
  for (IterDomain* id : domain) types.push_back(id->iterType());
  return types;
}

std::vector<std::optional<int64_t>> constantExtents(const std::vector<IterDomain*>& domain) {
  std::vector<std::optional<int64_t>> extents;
  for (IterDomain* id : domain) extents.push_back(id->extent()->constantInt());
  return extents;
}

constexpr IterType I = IterType::Iteration;
constexpr IterType R = IterType::Reduction;
using Types = std::vector<IterType>;
using Extents = std::vector<std::optional<int64_t>>;

struct RowSum {
  Fusion fusion;
  TensorView* x;
  TensorView* s;
};

std::unique_ptr<RowSum> makeRowSum(int64_t cols) {
  auto f = std::make_unique<RowSum>();
  f->x = makeInputTensor(f->fusion, {.dtype = DataType::Float32, .sizes = {-1, cols}});
  f->s = sum(f->x, {1});
  f->fusion.addOutput(f->s);
  return f;
}

TEST(RFactorTest, SerialPartialsThenThreads) {
  auto f = makeRowSum(13);
  TensorView* s = f->s;
  IterDomain* row = s->axis(0);
  s->split(1, 4);  // [i0, r1/4 = 4, 4]
  s->parallelize(2, ParallelType::TIDx);
  TensorView* partial = s->rFactor({1});

  EXPECT_TRUE(partial->hasRoot());
  EXPECT_EQ(iterTypes(partial->root()), (Types{I, R}));
  EXPECT_EQ(iterTypes(partial->logical()), (Types{I, R, I}));
  EXPECT_EQ(constantExtents(partial->logical()), (Extents{std::nullopt, 4, 4}));
  EXPECT_EQ(partial->loop(), partial->logical());
  EXPECT_EQ(partial->loopAxis(2)->parallelType(), ParallelType::TIDx);
  EXPECT_EQ(partial->rank(), 2);
  EXPECT_EQ(rootTransforms(partial).size(), 1u);
  EXPECT_EQ(partial->definition()->op(), OpKind::Sum);
  EXPECT_EQ(partial->definition()->input(0), f->x);
  EXPECT_EQ(partial->memoryType(), MemoryType::Local);

  // The consumer keeps its row dim and reduces the 4 partial results per row.
  ASSERT_EQ(s->logical().size(), 2u);
  EXPECT_EQ(s->axis(0), row);
  EXPECT_TRUE(s->axis(1)->isReduction());
  EXPECT_EQ(s->axis(1)->extent()->constantInt(), 4);
  EXPECT_EQ(s->loop(), s->logical());
  EXPECT_EQ(s->loopAxis(1)->parallelType(), ParallelType::TIDx);
  EXPECT_EQ(s->definition()->input(0), partial);
  EXPECT_EQ(s->definition()->attribute<std::vector<int64_t>>("axes"), std::vector<int64_t>{1});

  EXPECT_EQ(mapLoopDomains(partial, s),
            (std::vector<IterDomain*>{s->loopAxis(0), nullptr, s->loopAxis(1)}));
  EXPECT_EQ(mapLoopDomains(f->x, partial)[0], partial->loopAxis(0));
  inlineMost(f->fusion);
  EXPECT_EQ(partial->inlinePosition(), 1);
}

TEST(RFactorTest, EvaluatesLikeTheOriginalNonDivisible) {
  auto f = makeRowSum(13);
  test::RandomTensors random(31);
  const HostTensor input = random.uniform(DataType::Float32, {3, 13});
  const std::vector<HostTensor> before = evaluateFusionTensors(f->fusion, {input});
  f->s->split(1, 4)->split(1, 2);  // [i0, 2, 2, 4]: 16 slots for 13 values
  f->s->rFactor({1, 3});
  const std::vector<HostTensor> after = evaluateFusionTensors(f->fusion, {input});
  test::expectClose(after[0],
                    {DataType::Float32, {3}, test::rowSums(test::valuesOf(input), 3, 13)});
  test::expectClose(after[0], before[0]);
}

TEST(RFactorTest, OuterSplitAndMaxAndProd) {
  for (OpKind op : {OpKind::Max, OpKind::Prod}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
    TensorView* y = op == OpKind::Max ? max(x, {1}) : prod(x, {1});
    fusion.addOutput(y);
    test::RandomTensors random(32);
    const HostTensor input = random.uniform(DataType::Float32, {4, 11}, 0.5, 1.5);
    const std::vector<double> values = test::valuesOf(input);
    std::vector<double> expected;
    for (int64_t r = 0; r < 4; ++r) {
      double acc = op == OpKind::Max ? -INFINITY : 1.0;
      for (int64_t c = 0; c < 11; ++c) {
        acc = op == OpKind::Max ? std::max(acc, values[r * 11 + c]) : acc * values[r * 11 + c];
      }
      expected.push_back(acc);
    }
    y->split(1, 3, /*inner_split=*/false);  // [i0, 3, ceil(n/3)]
    TensorView* partial = y->rFactor({2});
    EXPECT_EQ(partial->definition()->op(), op);
    EXPECT_EQ(y->definition()->op(), op);
    test::expectClose(evaluateFusionTensors(fusion, {input})[0],
                      {DataType::Float32, {4}, expected});
  }
}

TEST(RFactorTest, MergedReductionDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 3, 5}});
  TensorView* y = sum(x, {1, 2});
  fusion.addOutput(y);
  test::RandomTensors random(33);
  const HostTensor input = random.uniform(DataType::Float32, {2, 3, 5});
  const std::vector<HostTensor> before = evaluateFusionTensors(fusion, {input});
  y->merge(1, 2)->split(1, 4);  // [i0, r15/4, 4]
  TensorView* partial = y->rFactor({2});
  EXPECT_EQ(partial->root().size(), 3u);
  EXPECT_EQ(iterTypes(partial->logical()), (Types{I, I, R}));
  EXPECT_EQ(constantExtents(partial->logical()), (Extents{std::nullopt, 4, 4}));
  const std::vector<HostTensor> after = evaluateFusionTensors(fusion, {input});
  test::expectClose(after[0],
                    {DataType::Float32, {2}, test::rowSums(test::valuesOf(input), 2, 15)});
  test::expectClose(after[0], before[0]);
}

TEST(RFactorTest, WholeReductionDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1, -1, -1}});
  TensorView* y = sum(x, {1, 2});
  fusion.addOutput(y);
  TensorView* partial = y->rFactor({2});
  EXPECT_TRUE(partial->hasRoot());
  EXPECT_EQ(iterTypes(partial->logical()), (Types{I, I, R}));
  EXPECT_EQ(partial->rank(), 2);
  EXPECT_EQ(y->logical().size(), 2u);
  test::RandomTensors random(34);
  const HostTensor input = random.uniform(DataType::Int64, {3, 4, 5}, -50, 50);
  const std::vector<double> values = test::valuesOf(input);
  std::vector<double> expected(3, 0.0);
  for (int64_t i = 0; i < 60; ++i) expected[i / 20] += values[i];
  test::expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Int64, {3}, expected});
}

TEST(RFactorTest, IterationSchedulingIsKept) {
  auto f = makeRowSum(64);
  TensorView* s = f->s;
  s->split(0, 2)->split(2, 16);  // [i0/2, 2, r/16, 16]
  s->parallelize(0, ParallelType::BIDx)->parallelize(1, ParallelType::TIDy);
  s->parallelize(3, ParallelType::TIDx);
  TensorView* partial = s->rFactor({2});
  EXPECT_EQ(iterTypes(partial->loop()), (Types{I, I, R, I}));
  ASSERT_EQ(s->nLoopDims(), 3);
  EXPECT_EQ(s->loopAxis(0)->parallelType(), ParallelType::BIDx);
  EXPECT_EQ(s->loopAxis(1)->parallelType(), ParallelType::TIDy);
  EXPECT_EQ(s->loopAxis(2)->parallelType(), ParallelType::TIDx);
  EXPECT_TRUE(s->loopAxis(2)->isReduction());
  EXPECT_EQ(mapLoopDomains(partial, s),
            (std::vector<IterDomain*>{s->loopAxis(0), s->loopAxis(1), nullptr, s->loopAxis(2)}));
  // The partial results can be the reference of further propagation: its input gets the split.
  propagateTransforms(partial, {f->x});
  EXPECT_EQ(mapLoopDomains(f->x, partial), partial->loop());

  test::RandomTensors random(35);
  const HostTensor input = random.uniform(DataType::Float32, {6, 64});
  test::expectClose(evaluateFusionTensors(f->fusion, {input})[0],
                    {DataType::Float32, {6}, test::rowSums(test::valuesOf(input), 6, 64)});
}

TEST(RFactorTest, TwiceForAGridReduction) {
  auto f = makeRowSum(1000);
  TensorView* s = f->s;
  s->split(1, 32)->split(1, 8);  // [i0, r/256, 8, 32]
  TensorView* first = s->rFactor({1});
  TensorView* second = s->rFactor({1});
  EXPECT_EQ(second->definition()->input(0), first);
  EXPECT_EQ(iterTypes(s->logical()), (Types{I, R}));
  test::RandomTensors random(36);
  const HostTensor input = random.uniform(DataType::Float32, {2, 1000});
  test::expectClose(evaluateFusionTensors(f->fusion, {input})[0],
                    {DataType::Float32, {2}, test::rowSums(test::valuesOf(input), 2, 1000)},
                    test::Tolerance{1e-5, 1e-4});
}

TEST(RFactorTest, CloneKeepsRootsAndEvaluatesTheSame) {
  auto f = makeRowSum(20);
  f->s->split(1, 8);
  TensorView* partial = f->s->rFactor({1});
  CloneMap map;
  std::unique_ptr<Fusion> copy = f->fusion.clone(&map);
  TensorView* twin = map[partial];
  ASSERT_TRUE(twin->hasRoot());
  for (size_t i = 0; i < partial->root().size(); ++i) {
    EXPECT_EQ(twin->root()[i], map[partial->root()[i]]);
  }
  for (size_t i = 0; i < partial->logical().size(); ++i) {
    EXPECT_EQ(twin->logical()[i], map[partial->logical()[i]]);
  }
  EXPECT_EQ(map[f->s]->logical()[1], map[f->s->logical()[1]]);
  test::RandomTensors random(37);
  const HostTensor input = random.uniform(DataType::Float32, {3, 20});
  test::expectClose(evaluateFusionTensors(*copy, {input})[0],
                    evaluateFusionTensors(f->fusion, {input})[0], test::Tolerance{});
}

TEST(RFactorTest, SoftmaxReductionsEvaluateTheSame) {
  test::SoftmaxFusion s = test::makeSoftmax();
  s.y->split(1, 32);
  propagateTransforms(s.y);
  s.max->rFactor({1});
  s.sum->rFactor({1});
  test::RandomTensors random(38);
  const HostTensor input = random.uniform(DataType::Float32, {4, 50});
  test::expectClose(evaluateFusionTensors(*s.fusion, {input})[0],
                    {DataType::Float32, {4, 50}, test::softmaxRows(test::valuesOf(input), 4, 50)});
}

TEST(RFactorTest, Errors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* s = sum(e, {1});
  WelfordResult w = welford(x, {1});
  fusion.addOutput(s);
  fusion.addOutput(w.avg);
  s->split(1, 4);
  EXPECT_TRUE(throwsError([&] { e->rFactor({1}); }, {"rFactor({1}) on " + e->name(), "exp"}));
  EXPECT_TRUE(throwsError([&] { x->rFactor({1}); }, {"fusion input"}));
  EXPECT_TRUE(throwsError([&] { w.avg->rFactor({1}); }, {"welford is not supported"}));
  EXPECT_TRUE(throwsError([&] { s->rFactor({}); }, {"at least one reduction axis"}));
  EXPECT_TRUE(throwsError([&] { s->rFactor({0}); }, {"loop axis 0", "is not a Reduction axis"}));
  EXPECT_TRUE(throwsError([&] { s->rFactor({3}); }, {"loop axis 3", "out of range"}));
  EXPECT_TRUE(throwsError([&] { s->rFactor({1, -2}); }, {"named twice"}));
  EXPECT_TRUE(throwsError([&] { s->rFactor({1, 2}); }, {"every reduction axis", "leave at least"}));
  TensorView* partial = s->rFactor({1});
  EXPECT_TRUE(throwsError([&] { partial->rFactor({1}); }, {"already the partial result"}));
  EXPECT_TRUE(throwsError([&] { partial->cacheBefore(); },
                          {"cacheBefore()", "partial result", "cache its consumer"}));
}

TEST(RFactorTest, ReductionAxisHoldingABroadcastIsRefused) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.sizes = {-1, 1, -1}});
  TensorView* y = sum(x, {2});  // [i0, b1, r2]
  fusion.addOutput(y);
  y->merge(1, 2)->split(1, 4);
  EXPECT_TRUE(throwsError([&] { y->rFactor({1}); }, {"loop axis 1", "broadcast dim"}));
}

}  // namespace
}  // namespace braze
