// cacheBefore, cacheAfter and cacheFork: the rewired graph, the copies' domains, errors, and
// the reference evaluator computing the same values before and after.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "sched/fusion_fixtures.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;

// Each user of `tv` lists it as an input, and `tv` lists each Expr that reads it.
void expectConsistentUses(const Fusion& fusion) {
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* input : expr->inputs()) {
      EXPECT_THAT(input->uses(), testing::Contains(expr))
          << input->name() << " does not list its use by " << expr->op();
    }
    for (const Val* output : expr->outputs()) EXPECT_EQ(output->definition(), expr);
  }
  for (const TensorView* tv : fusion.allTensors()) {
    for (const Expr* use : tv->uses()) {
      EXPECT_THAT(use->inputs(), testing::Contains(tv))
          << tv->name() << " lists a use by " << use->op() << " that does not read it";
    }
  }
}

void expectFreshCopyOf(const TensorView* copy, const TensorView* of) {
  const std::vector<IterDomain*> visible = of->logicalNoReductions();
  ASSERT_EQ(copy->logical().size(), visible.size());
  for (size_t i = 0; i < visible.size(); ++i) {
    EXPECT_NE(copy->logical()[i], visible[i]);
    EXPECT_EQ(copy->logical()[i]->extent(), visible[i]->extent());
    EXPECT_EQ(copy->logical()[i]->iterType(), visible[i]->iterType());
  }
  EXPECT_EQ(copy->loop(), copy->logical());
  EXPECT_EQ(copy->dtype(), of->dtype());
}

TEST(CacheAfterTest, ConsumersReadTheCopy) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* a = exp(x);
  TensorView* b = neg(x);
  fusion.addOutput(add(a, b));
  TensorView* cache = x->cacheAfter();
  EXPECT_EQ(cache->definition()->op(), OpKind::Set);
  EXPECT_EQ(cache->definition()->input(0), x);
  EXPECT_EQ(a->definition()->input(0), cache);
  EXPECT_EQ(b->definition()->input(0), cache);
  ASSERT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(x->uses()[0], cache->definition());
  EXPECT_EQ(cache->uses().size(), 2u);
  EXPECT_EQ(cache->memoryType(), MemoryType::Local);
  EXPECT_TRUE(fusion.isInput(x));
  expectFreshCopyOf(cache, x);
  expectConsistentUses(fusion);
}

TEST(CacheAfterTest, SameValuesAsPlainLoops) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* y = mul(exp(x), x);  // x read twice by two ops
  fusion.addOutput(y);
  test::RandomTensors random(11);
  const HostTensor input = random.uniform(DataType::Float32, {5, 7});
  const std::vector<HostTensor> before = evaluateFusionTensors(fusion, {input});
  x->cacheAfter();
  const std::vector<HostTensor> after = evaluateFusionTensors(fusion, {input});
  const std::vector<double> values = test::valuesOf(input);
  std::vector<double> expected;
  for (double v : values) expected.push_back(std::exp(v) * v);
  test::expectClose(after[0], {DataType::Float32, {5, 7}, expected});
  test::expectClose(after[0], before[0], test::Tolerance{});
}

TEST(CacheBeforeTest, TheCopyTakesTheDefinition) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  fusion.addOutput(y);
  Expr* exp_op = y->definition();
  TensorView* cache = y->cacheBefore();
  EXPECT_EQ(cache->definition(), exp_op);
  EXPECT_EQ(exp_op->output(0), cache);
  EXPECT_EQ(y->definition()->op(), OpKind::Set);
  EXPECT_EQ(y->definition()->input(0), cache);
  EXPECT_TRUE(fusion.isOutput(y));
  EXPECT_FALSE(fusion.isOutput(cache));
  EXPECT_EQ(cache->memoryType(), MemoryType::Local);
  expectFreshCopyOf(cache, y);
  expectConsistentUses(fusion);
}

TEST(CacheBeforeTest, ReductionMovesToTheCopy) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* s = sum(x, {1});
  fusion.addOutput(s);
  test::RandomTensors random(12);
  const HostTensor input = random.uniform(DataType::Float32, {4, 9});
  const std::vector<HostTensor> before = evaluateFusionTensors(fusion, {input});

  s->split(1, 4)->split(0, 2);  // [i0/2, 2, r1/4, 4]
  TensorView* cache = s->cacheBefore();
  ASSERT_EQ(cache->logical().size(), 2u);
  EXPECT_TRUE(cache->logical()[1]->isReduction());
  EXPECT_EQ(cache->loop(), cache->logical());
  // The output is now a copy without reduced dims, and its loop keeps the iteration axes.
  ASSERT_EQ(s->logical().size(), 1u);
  EXPECT_FALSE(s->hasReduction());
  ASSERT_EQ(s->nLoopDims(), 2);
  EXPECT_TRUE(s->loopAxis(0)->isIteration());
  EXPECT_TRUE(s->loopAxis(1)->isIteration());
  expectConsistentUses(fusion);

  const std::vector<HostTensor> after = evaluateFusionTensors(fusion, {input});
  test::expectClose(after[0], {DataType::Float32, {4}, test::rowSums(test::valuesOf(input), 4, 9)});
  test::expectClose(after[0], before[0], test::Tolerance{});
}

TEST(CacheBeforeTest, OneWelfordOutput) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  WelfordResult w = welford(x, {1});
  fusion.addOutput(w.avg);
  fusion.addOutput(w.m2);
  test::RandomTensors random(13);
  const HostTensor input = random.uniform(DataType::Float32, {3, 6});
  const std::vector<HostTensor> before = evaluateFusionTensors(fusion, {input});
  TensorView* cache = w.m2->cacheBefore();
  EXPECT_EQ(cache->definition()->op(), OpKind::Welford);
  EXPECT_EQ(cache->definition()->output(1), cache);
  expectConsistentUses(fusion);
  const std::vector<HostTensor> after = evaluateFusionTensors(fusion, {input});
  test::expectClose(after[0], before[0], test::Tolerance{});
  test::expectClose(after[1], before[1], test::Tolerance{});
}

TEST(CacheForkTest, TheCopyBecomesTheOutput) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* y = neg(e);
  fusion.addOutput(e);
  fusion.addOutput(y);
  TensorView* copy = e->cacheFork();
  EXPECT_EQ(fusion.outputs()[0], copy);
  EXPECT_EQ(fusion.outputs()[1], y);
  EXPECT_FALSE(fusion.isOutput(e));
  EXPECT_EQ(copy->definition()->input(0), e);
  EXPECT_EQ(y->definition()->input(0), e);
  expectFreshCopyOf(copy, e);
  expectConsistentUses(fusion);
}

TEST(CacheTest, Errors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* unused = makeSymbolicTensor(fusion, 1);
  TensorView* e = exp(x);
  TensorView* y = neg(e);
  fusion.addOutput(y);
  EXPECT_TRUE(throwsError([&] { x->cacheBefore(); }, {"cacheBefore()", x->name(), "(input 0)",
                                                      "fusion input", "cacheAfter()"}));
  EXPECT_TRUE(throwsError([&] { y->cacheAfter(); },
                          {"cacheAfter()", y->name(), "no consumers", "cacheBefore()"}));
  EXPECT_TRUE(throwsError([&] { unused->cacheAfter(); }, {"(input 1)", "no consumers"}));
  EXPECT_TRUE(
      throwsError([&] { e->cacheFork(); }, {"cacheFork()", e->name(), "is not a fusion output"}));
  EXPECT_TRUE(throwsError([&] { y->cacheFork(); }, {"no op reads", "cacheBefore()"}));
}

TEST(CacheTest, SoftmaxWithEveryCacheEvaluatesTheSame) {
  test::SoftmaxFusion s = test::makeSoftmax();
  s.fusion->addOutput(s.exp);
  test::RandomTensors random(14);
  const HostTensor input = random.uniform(DataType::Float32, {6, 10});
  const std::vector<HostTensor> before = evaluateFusionTensors(*s.fusion, {input});

  s.x->cacheAfter();
  s.y->cacheBefore();
  s.exp->cacheFork();
  s.sum->cacheBefore();
  s.max->cacheAfter();
  expectConsistentUses(*s.fusion);

  const std::vector<HostTensor> after = evaluateFusionTensors(*s.fusion, {input});
  ASSERT_EQ(after.size(), 2u);
  test::expectClose(after[0],
                    {DataType::Float32, {6, 10}, test::softmaxRows(test::valuesOf(input), 6, 10)});
  test::expectClose(after[0], before[0], test::Tolerance{});
  test::expectClose(after[1], before[1], test::Tolerance{});

  // A clone of the rewired fusion computes the same.
  std::unique_ptr<Fusion> copy = s.fusion->clone();
  const std::vector<HostTensor> cloned = evaluateFusionTensors(*copy, {input});
  test::expectClose(cloned[0], after[0], test::Tolerance{});
}

}  // namespace
}  // namespace braze
