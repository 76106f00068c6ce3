// inlineAt and inlineMost: positions chosen, and every refusal with its message.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/inlining.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

struct Chain {
  Fusion fusion;
  TensorView* x;
  TensorView* y;
  TensorView* z;
};

std::unique_ptr<Chain> makeChain() {
  auto chain = std::make_unique<Chain>();
  chain->x = makeSymbolicTensor(chain->fusion, 2);
  chain->y = exp(chain->x);
  chain->z = add(chain->y, 1.0);
  chain->fusion.addOutput(chain->z);
  for (TensorView* tv : {chain->y, chain->z}) tv->merge(0)->split(0, 128);
  return chain;
}

TEST(InlineAtTest, SetsThePosition) {
  auto chain = makeChain();
  inlineAt(chain->y, 1);
  EXPECT_EQ(chain->y->inlinePosition(), 1);
  inlineAt(chain->y, -1);
  EXPECT_EQ(chain->y->inlinePosition(), 2);
  EXPECT_EQ(maxInlinePosition(chain->y), 2);
}

TEST(InlineAtTest, Errors) {
  auto chain = makeChain();
  EXPECT_TRUE(throwsError([&] { inlineAt(chain->x, 1); }, {"fusion input", "(input 0)"}));
  EXPECT_TRUE(
      throwsError([&] { inlineAt(chain->y, 3); }, {"position 3 is out of range", "2 loop axes"}));
  EXPECT_EQ(maxInlinePosition(chain->x), 0);
}

TEST(InlineAtTest, UnmappedAxisIsRefused) {
  auto chain = makeChain();
  chain->z->reorder({{0, 1}});
  EXPECT_TRUE(throwsError([&] { inlineAt(chain->y, 1); },
                          {"inlineAt(" + chain->y->name() + ", 1)", "loop axis 0",
                           "does not map to loop axis 0 of its consumer " + chain->z->name()}));
}

TEST(InlineAtTest, PastAReductionIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* s = sum(x, {1});
  TensorView* b = broadcast(s, {false, true});
  TensorView* y = sub(x, b);
  fusion.addOutput(y);
  inlineAt(s, 1);
  EXPECT_TRUE(throwsError([&] { inlineAt(s, 2); },
                          {"loop axis 1", s->name(), "is a Reduction axis", "position <= 1"}));
}

TEST(InlineAtTest, PastAVectorizedAxisIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  TensorView* z = neg(y);
  fusion.addOutput(z);
  for (TensorView* tv : {y, z}) tv->split(0, 4);
  z->parallelize(1, ParallelType::Vectorize);
  inlineAt(y, 1);
  EXPECT_TRUE(throwsError([&] { inlineAt(y, 2); }, {"vectorized", z->name()}));
  y->setMemoryType(MemoryType::Local);
  y->parallelize(1, ParallelType::Vectorize);
  EXPECT_TRUE(throwsError([&] { inlineAt(y, 2); }, {"loop axis 1", y->name(), "is vectorized"}));
}

TEST(InlineAtTest, ConflictingParallelTypesAreRefused) {
  auto chain = makeChain();
  chain->y->parallelize(0, ParallelType::BIDx);
  chain->z->parallelize(0, ParallelType::BIDy);
  EXPECT_TRUE(throwsError([&] { inlineAt(chain->y, 1); }, {"conflicting parallel types"}));
  chain->z->parallelize(0, ParallelType::BIDx);
  inlineAt(chain->y, 1);
}

TEST(InlineAtTest, TransformsInsideTheInlinedLoopsAreRefused) {
  auto chain = makeChain();
  inlineAt(chain->y, 1);
  EXPECT_TRUE(throwsError([&] { chain->y->split(0, 2); },
                          {"shared with consumers", "inline position is 1"}));
  EXPECT_TRUE(throwsError([&] { chain->y->reorder({{0, 1}}); }, {"shared with consumers"}));
  chain->y->split(1, 2);  // right of the inline position: fine
}

TEST(InlineMostTest, PointwiseChainInlinesFully) {
  auto chain = makeChain();
  inlineMost(chain->fusion);
  EXPECT_EQ(chain->y->inlinePosition(), 2);
  EXPECT_EQ(chain->z->inlinePosition(), 2);
  EXPECT_EQ(chain->x->inlinePosition(), 0);
}

TEST(InlineMostTest, StopsAtReductionAndVectorizedAxes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* s = sum(e, {1});
  TensorView* o = neg(s);
  fusion.addOutput(o);
  inlineMost(fusion);
  EXPECT_EQ(e->inlinePosition(), 2);  // inside the reduction loop
  EXPECT_EQ(s->inlinePosition(), 1);  // not past its reduction axis
  EXPECT_EQ(o->inlinePosition(), 1);
}

TEST(InlineMostTest, SoftmaxKeepsTheRowOutsideTheInnerLoop) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* m = max(x, {1});
  TensorView* shifted = sub(x, broadcast(m, {false, true}));
  TensorView* e = exp(shifted);
  TensorView* s = sum(e, {1});
  TensorView* y = div(e, broadcast(s, {false, true}));
  fusion.addOutput(y);
  inlineMost(fusion);
  // e is read inside the sum's reduction loop and by the division after it: it cannot live in
  // either loop only.
  EXPECT_EQ(e->inlinePosition(), 1);
  EXPECT_EQ(shifted->inlinePosition(), 2);
  EXPECT_EQ(m->inlinePosition(), 1);
  EXPECT_EQ(s->inlinePosition(), 1);
}

TEST(InlineMostTest, DiamondInlinesFully) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* t = exp(x);
  TensorView* a = add(t, 1.0);
  TensorView* b = mul(t, 2.0);
  TensorView* c = add(a, b);
  fusion.addOutput(c);
  inlineMost(fusion);
  EXPECT_EQ(t->inlinePosition(), 2);
  EXPECT_EQ(a->inlinePosition(), 2);
}

TEST(InlineMostTest, SelectedTensorsOnly) {
  auto chain = makeChain();
  inlineMost(std::vector<TensorView*>{chain->z});
  EXPECT_EQ(chain->y->inlinePosition(), 0);
  EXPECT_EQ(chain->z->inlinePosition(), 2);
}

TEST(InlineMostTest, WelfordOutputsShareOnePosition) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  WelfordResult w = welford(x, {1});
  TensorView* y = add(w.avg, w.m2);
  fusion.addOutput(y);
  fusion.addOutput(w.n);
  inlineMost(fusion);
  EXPECT_EQ(w.avg->inlinePosition(), 1);
  EXPECT_EQ(w.m2->inlinePosition(), 1);
  EXPECT_EQ(w.n->inlinePosition(), 1);
  inlineAt(w.avg, 0);
  EXPECT_EQ(w.n->inlinePosition(), 0);
}

TEST(InlineMostTest, ProducerOfAWelfordInlinesIntoItsOneStatement) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  WelfordResult w = welford(e, {1});
  fusion.addOutput(add(w.avg, w.m2));
  fusion.addOutput(w.n);
  inlineMost(fusion);
  // avg, m2 and n all read e, but they are one Expr: e is computed inside its reduction loop.
  EXPECT_EQ(e->inlinePosition(), 2);
  EXPECT_EQ(w.avg->inlinePosition(), 1);
}

}  // namespace
}  // namespace braze
