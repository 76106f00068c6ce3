// logicalMap across each kind of op, and mapIterDomains / mapLoopDomains through transforms.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/loop_map.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

// (producer dim, consumer dim) positions of logicalMap, over the consumer's root domain.
std::vector<std::pair<int64_t, int64_t>> positions(const TensorView* producer,
                                                   const TensorView* consumer) {
  std::vector<std::pair<int64_t, int64_t>> result;
  const std::vector<IterDomain*> p = producer->logicalNoReductions();
  const std::vector<IterDomain*>& c = consumer->root();
  for (const LogicalPair& pair : logicalMap(producer, consumer)) {
    result.emplace_back(std::find(p.begin(), p.end(), pair.producer) - p.begin(),
                        std::find(c.begin(), c.end(), pair.consumer) - c.begin());
  }
  return result;
}

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

TEST(LogicalMapTest, ElementwiseMatchesFromTheRight) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 3);
  TensorView* b = makeInputTensor(fusion, {.sizes = {1, -1}});
  TensorView* y = add(a, b);
  EXPECT_EQ(positions(a, y), (Pairs{{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_EQ(positions(b, y), (Pairs{{0, 1}, {1, 2}}));
}

TEST(LogicalMapTest, ReductionKeepsDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = sum(x, {1});
  EXPECT_EQ(positions(x, y), (Pairs{{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_TRUE(logicalMap(x, y)[1].consumer->isReduction());
  // A consumer of the reduction sees its user-visible dims only.
  TensorView* z = neg(y);
  EXPECT_EQ(positions(y, z), (Pairs{{0, 0}, {1, 1}}));
  EXPECT_EQ(logicalMap(y, z)[1].producer, y->axis(2));
}

TEST(LogicalMapTest, ShapeOps) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  EXPECT_EQ(positions(x, broadcast(x, {false, true, false, false})),
            (Pairs{{0, 0}, {1, 2}, {2, 3}}));
  EXPECT_EQ(positions(x, permute(x, {2, 0, 1})), (Pairs{{0, 1}, {1, 2}, {2, 0}}));
  TensorView* u = makeInputTensor(fusion, {.sizes = {-1, 1, -1}});
  EXPECT_EQ(positions(u, squeeze(u, {1})), (Pairs{{0, 0}, {2, 1}}));
  EXPECT_EQ(positions(u, expand(u, {int64_t{-1}, int64_t{7}, int64_t{-1}})),
            (Pairs{{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_EQ(positions(x, select(x, 1, 0)), (Pairs{{0, 0}, {2, 1}}));
  EXPECT_EQ(positions(x, slice(x, 1, 2, std::nullopt)), (Pairs{{0, 0}, {2, 2}}));
  EXPECT_EQ(positions(x, pad(x, {1, 1})), (Pairs{{0, 0}, {1, 1}}));
  TensorView* other = makeSymbolicTensor(fusion, 3);
  EXPECT_EQ(positions(other, cat({x, other}, 1)), (Pairs{{0, 0}, {2, 2}}));
  EXPECT_TRUE(positions(x, reshape(x, {int64_t{-1}})).empty());
}

TEST(LogicalMapTest, Contractions) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 3);
  TensorView* b = makeSymbolicTensor(fusion, 2);
  TensorView* y = matmul(a, b);  // [B, M, N, rK]
  EXPECT_EQ(positions(a, y), (Pairs{{0, 0}, {1, 1}, {2, 3}}));
  EXPECT_EQ(positions(b, y), (Pairs{{0, 3}, {1, 2}}));
  TensorView* w = makeSymbolicTensor(fusion, 2);
  TensorView* z = linear(b, w);  // [M, N, rK]
  EXPECT_EQ(positions(b, z), (Pairs{{0, 0}, {1, 2}}));
  EXPECT_EQ(positions(w, z), (Pairs{{0, 1}, {1, 2}}));
}

TEST(LogicalMapTest, NotAProducerIsAnError) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = neg(x);
  TensorView* z = neg(y);
  EXPECT_TRUE(throwsError([&] { logicalMap(x, z); }, {x->name(), "is not an input", z->name()}));
  EXPECT_TRUE(throwsError([&] { logicalMap(y, x); }, {"has no definition"}));
}

TEST(LoopMapTest, SameTransformsMapPositionally) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = add(y, 1.0);
  fusion.addOutput(z);
  y->merge(0)->split(0, 128);
  z->merge(0)->split(0, 128);
  EXPECT_EQ(mapLoopDomains(y, z), z->loop());
  // A different factor breaks the map below the merge.
  TensorView* w = neg(y);
  w->merge(0)->split(0, 64);
  const std::vector<IterDomain*> map = mapLoopDomains(y, w);
  EXPECT_EQ(map[0], nullptr);
  EXPECT_EQ(map[1], nullptr);
  EXPECT_EQ(mapIterDomains(y, w).producer_to_consumer.at(
                y->loopAxis(0)->definition()->input(0)->as<IterDomain>()),
            w->loopAxis(0)->definition()->input(0));
}

TEST(LoopMapTest, OrderOfLoopAxesDoesNotMatter) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = neg(y);
  fusion.addOutput(z);
  z->reorder({{0, 1}});
  EXPECT_EQ(mapLoopDomains(y, z), (std::vector<IterDomain*>{z->loopAxis(1), z->loopAxis(0)}));
}

TEST(LoopMapTest, BroadcastDimOnlyInTheConsumerPassesThroughAMerge) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  TensorView* b = broadcast(y, {false, true});  // [i, b]
  fusion.addOutput(b);
  b->merge(0)->split(0, 32);
  y->split(0, 32);
  EXPECT_EQ(mapLoopDomains(y, b), b->loop());
}

TEST(LoopMapTest, ReductionToConsumerAndProducerToReduction) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(x);
  TensorView* s = sum(e, {1});
  TensorView* o = neg(s);
  fusion.addOutput(o);
  s->split(1, 32);
  e->split(1, 32);
  EXPECT_EQ(mapLoopDomains(e, s), s->loop());
  // The reduction's reduction axes have no counterpart in its consumer.
  const std::vector<IterDomain*> to_o = mapLoopDomains(s, o);
  EXPECT_EQ(to_o[0], o->loopAxis(0));
  EXPECT_EQ(to_o[1], nullptr);
  EXPECT_EQ(to_o[2], nullptr);
}

}  // namespace
}  // namespace braze
