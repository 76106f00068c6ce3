#include "sched/tensor_graph.h"

#include "braze/sched/indexed_inputs.h"
#include "braze/sched/logical_map.h"

namespace braze::sched_detail {

namespace {

// Whether `consumer`'s definition reads `producer` only at data-dependent positions (gather's
// input): the producer's loop does not follow the consumer's, so no transform or parallel type
// travels along that edge (it would reach the consumer's other tensors through a partial map).
bool readsOnlyAtDataPositions(const TensorView* producer, const TensorView* consumer) {
  const Expr* def = consumer->definition();
  if (def == nullptr) return false;
  bool indexed = false;
  for (size_t i = 0; i < def->inputs().size(); ++i) {
    if (def->input(i) != producer) continue;
    if (!isIndexedOperand(*def, i)) return false;
    indexed = true;
  }
  return indexed;
}

}  // namespace

std::vector<Neighbor> neighborsOf(TensorView* tv,
                                  const std::unordered_set<const TensorView*>& allowed) {
  std::vector<Neighbor> neighbors;
  for (TensorView* producer : producersOf(tv)) {
    if (allowed.count(producer) && !readsOnlyAtDataPositions(producer, tv))
      neighbors.push_back({producer, Relation::Producer});
  }
  for (TensorView* consumer : consumersOf(tv)) {
    if (allowed.count(consumer) && !readsOnlyAtDataPositions(tv, consumer))
      neighbors.push_back({consumer, Relation::Consumer});
  }
  if (const Expr* def = tv->definition()) {
    for (Val* output : def->outputs()) {
      auto* sibling = output->dynCast<TensorView>();
      if (sibling != nullptr && sibling != tv && allowed.count(sibling)) {
        neighbors.push_back({sibling, Relation::Sibling});
      }
    }
  }
  return neighbors;
}

EdgeMap edgeMap(TensorView* from, const Neighbor& to) {
  EdgeMap map;
  switch (to.relation) {
    case Relation::Consumer:
      for (const LogicalPair& pair : logicalMap(from, to.tv)) {
        map.pairs.emplace_back(pair.producer, pair.consumer);
      }
      map.from_domain = &from->logical();
      map.to_domain = &to.tv->root();
      break;
    case Relation::Producer:
      for (const LogicalPair& pair : logicalMap(to.tv, from)) {
        map.pairs.emplace_back(pair.consumer, pair.producer);
      }
      map.from_domain = &from->root();
      map.to_domain = &to.tv->logical();
      break;
    case Relation::Sibling:
      for (size_t i = 0; i < from->logical().size() && i < to.tv->logical().size(); ++i) {
        map.pairs.emplace_back(from->logical()[i], to.tv->logical()[i]);
      }
      map.from_domain = &from->logical();
      map.to_domain = &to.tv->logical();
      break;
  }
  return map;
}

}  // namespace braze::sched_detail
