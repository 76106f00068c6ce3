// recomputeFor: the copied chain, where it stops, the rewired uses, errors, and the reference
// evaluator computing the same values before and after.

#include "braze/sched/recompute.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/persistent_buffer.h"
#include "sched/fusion_fixtures.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;
using testing::ElementsAre;
using testing::UnorderedElementsAre;

// Each Expr lists its inputs' uses consistently, in both directions.
void expectConsistentUses(const Fusion& fusion) {
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* input : expr->inputs()) {
      EXPECT_THAT(input->uses(), testing::Contains(expr))
          << input->name() << " does not list its use by " << expr->op();
    }
  }
  for (const TensorView* tv : fusion.allTensors()) {
    for (const Expr* use : tv->uses()) {
      EXPECT_THAT(use->inputs(), testing::Contains(tv))
          << tv->name() << " lists a use by " << use->op() << " that does not read it";
    }
  }
}

// `copy` is computed like `of` by an op of the same kind, with its own IterDomains of the same
// extents and types, in registers and not yet scheduled.
void expectFreshCopyOf(const TensorView* copy, const TensorView* of) {
  ASSERT_NE(copy, of);
  ASSERT_NE(copy->definition(), nullptr);
  EXPECT_EQ(copy->definition()->op(), of->definition()->op());
  EXPECT_EQ(copy->definition()->attributes(), of->definition()->attributes());
  ASSERT_EQ(copy->logical().size(), of->logical().size());
  for (size_t i = 0; i < of->logical().size(); ++i) {
    EXPECT_NE(copy->logical()[i], of->logical()[i]);
    EXPECT_EQ(copy->logical()[i]->extent(), of->logical()[i]->extent());
    EXPECT_EQ(copy->logical()[i]->iterType(), of->logical()[i]->iterType());
  }
  EXPECT_EQ(copy->loop(), copy->logical());
  EXPECT_EQ(copy->dtype(), of->dtype());
  EXPECT_EQ(copy->memoryType(), MemoryType::Local);
  EXPECT_EQ(copy->inlinePosition(), 0);
}

TEST(RecomputeForTest, SoftmaxExpIsRecomputedFromTheInputAndTheMax) {
  test::SoftmaxFusion s = test::makeSoftmax();
  Expr* division = s.y->definition();
  TensorView* copy = recomputeFor(s.exp, {division});

  // y = exp' / sum_b, exp' = exp(x - broadcast'(max)): x and the max are read, not copied.
  expectFreshCopyOf(copy, s.exp);
  EXPECT_EQ(division->input(0), copy);
  TensorView* shifted = copy->definition()->input(0)->as<TensorView>();
  expectFreshCopyOf(shifted, s.shifted);
  EXPECT_EQ(shifted->definition()->input(0), s.x);
  TensorView* max_b = shifted->definition()->input(1)->as<TensorView>();
  expectFreshCopyOf(max_b, s.max_b);
  EXPECT_TRUE(max_b->logical()[1]->isBroadcast());
  EXPECT_EQ(max_b->definition()->input(0), s.max);

  // The original chain now only feeds the sum.
  EXPECT_THAT(s.exp->uses(), ElementsAre(s.sum->definition()));
  EXPECT_EQ(s.x->uses().size(), 3u);
  EXPECT_THAT(s.max->uses(), UnorderedElementsAre(s.max_b->definition(), max_b->definition()));
  expectConsistentUses(*s.fusion);
  // exp(x - max) is no longer kept; x, an input, still is.
  const std::vector<PersistentBuffer> buffers = persistentBuffers(*s.fusion);
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].tv, s.x);
}

TEST(RecomputeForTest, StopsAtTheGivenTensors) {
  // A register copy of the input (what cacheAfter makes) is read, not copied: only the ops after
  // it are computed again, and the copy becomes the one buffer kept.
  test::SoftmaxFusion s = test::makeSoftmax();
  TensorView* cache = s.x->cacheAfter();
  Expr* division = s.y->definition();
  TensorView* copy = recomputeFor(s.exp, {division}, {cache});
  TensorView* shifted = copy->definition()->input(0)->as<TensorView>();
  EXPECT_EQ(shifted->definition()->input(0), cache);
  EXPECT_EQ(s.x->uses().size(), 1u);  // only the cache reads the input
  expectConsistentUses(*s.fusion);
  const std::vector<PersistentBuffer> buffers = persistentBuffers(*s.fusion);
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].tv, cache);
  EXPECT_TRUE(throwsError([&] { recomputeFor(cache, {shifted->definition()}, {cache}); },
                          {"is one of the tensors to stop at"}));
}

TEST(RecomputeRereadBuffersTest, RecomputesWhatItAcceptsUntilNothingIsLeft) {
  // Everything: only the input stays a buffer.
  test::SoftmaxFusion all = test::makeSoftmax();
  recomputeRereadBuffers(*all.fusion, [](const PersistentBuffer&) { return true; });
  std::vector<PersistentBuffer> buffers = persistentBuffers(*all.fusion);
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].tv, all.x);
  expectConsistentUses(*all.fusion);

  // Not exp: exp(x - max) stays a buffer, and nothing else is kept beside it but the input.
  test::SoftmaxFusion some = test::makeSoftmax();
  recomputeRereadBuffers(*some.fusion, [](const PersistentBuffer& b) {
    return b.tv->definition()->op() != OpKind::Exp;
  });
  buffers = persistentBuffers(*some.fusion);
  std::vector<const TensorView*> kept;
  for (const PersistentBuffer& b : buffers) kept.push_back(b.tv);
  EXPECT_THAT(kept, UnorderedElementsAre(some.x, some.exp));
}

TEST(RecomputeForTest, SameValuesAsPlainLoops) {
  test::SoftmaxFusion s = test::makeSoftmax();
  test::RandomTensors random(21);
  const HostTensor input = random.uniform(DataType::Float32, {6, 10});
  const std::vector<HostTensor> before = evaluateFusionTensors(*s.fusion, {input});
  recomputeFor(s.exp, {s.y->definition()});
  const std::vector<HostTensor> after = evaluateFusionTensors(*s.fusion, {input});
  test::expectClose(after[0],
                    {DataType::Float32, {6, 10}, test::softmaxRows(test::valuesOf(input), 6, 10)});
  test::expectClose(after[0], before[0], test::Tolerance{});
}

TEST(RecomputeForTest, EveryBufferOfALayerNormUntilOnlyTheInputIsKept) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* mean = braze::mean(xf, {1}, /*keepdim=*/true);
  TensorView* centered = sub(xf, mean);
  TensorView* var = braze::mean(mul(centered, centered), {1}, /*keepdim=*/true);
  fusion.addOutput(cast(mul(centered, rsqrt(add(var, 1e-5))), DataType::Float16));
  test::RandomTensors random(22);
  const HostTensor input = random.uniform(DataType::Float16, {5, 33});
  const std::vector<HostTensor> before = evaluateFusionTensors(fusion, {input});

  // Each round moves one buffer's rereads onto a copy computed from x.
  int rounds = 0;
  for (;;) {
    const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
    auto it = std::find_if(buffers.begin(), buffers.end(),
                           [](const PersistentBuffer& b) { return isRecomputable(b.tv); });
    if (it == buffers.end()) break;
    recomputeFor(it->tv, it->rereads);
    ASSERT_LT(++rounds, 10);
  }
  EXPECT_EQ(rounds, 2);
  const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].tv, x);
  // x is cast three times: for the mean, for the variance and for the normalization.
  EXPECT_EQ(x->uses().size(), 3u);
  for (const Expr* use : x->uses()) EXPECT_EQ(use->op(), OpKind::Cast);
  expectConsistentUses(fusion);

  const std::vector<HostTensor> after = evaluateFusionTensors(fusion, {input});
  test::expectClose(after[0], before[0], test::toleranceFor(DataType::Float16));
}

TEST(RecomputeForTest, ATensorReadTwiceIsCopiedOnce) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* e = exp(x);
  TensorView* square = mul(e, e);
  TensorView* total = sum(square, {1}, /*keepdim=*/true);
  fusion.addOutput(div(square, total));
  Expr* division = fusion.outputs()[0]->definition();
  TensorView* copy = recomputeFor(square, {division});
  EXPECT_EQ(copy->definition()->input(0), copy->definition()->input(1));
  expectFreshCopyOf(copy->definition()->input(0)->as<TensorView>(), e);
  EXPECT_EQ(e->uses().size(), 1u);
  expectConsistentUses(fusion);
}

TEST(RecomputeForTest, OtherUsesKeepTheOriginal) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* e = exp(x);
  TensorView* a = neg(e);
  TensorView* b = abs(e);
  fusion.addOutput(a);
  fusion.addOutput(b);
  TensorView* copy = recomputeFor(e, {b->definition()});
  EXPECT_EQ(a->definition()->input(0), e);
  EXPECT_EQ(b->definition()->input(0), copy);
  EXPECT_EQ(copy->definition()->input(0), x);
  expectConsistentUses(fusion);
}

TEST(RecomputeForTest, Refusals) {
  test::SoftmaxFusion s = test::makeSoftmax();
  EXPECT_FALSE(isRecomputable(s.x));
  EXPECT_FALSE(isRecomputable(s.max));
  EXPECT_TRUE(isRecomputable(s.max_b));
  EXPECT_TRUE(isRecomputable(s.exp));
  EXPECT_TRUE(throwsError([&] { recomputeFor(s.x, {s.shifted->definition()}); },
                          {"recomputeFor() on T0 (input 0)", "no definition", "fusion input"}));
  EXPECT_TRUE(throwsError([&] { recomputeFor(s.max, {s.max_b->definition()}); },
                          {"recomputeFor() on " + s.max->name(), "computed by max",
                           "not an elementwise op, cast, broadcast or set"}));
  EXPECT_TRUE(throwsError([&] { recomputeFor(s.exp, {}); }, {"no uses given"}));
  EXPECT_TRUE(throwsError([&] { recomputeFor(s.exp, {s.shifted->definition()}); },
                          {"does not read " + s.exp->name(), "uses()"}));
}

}  // namespace
}  // namespace braze
