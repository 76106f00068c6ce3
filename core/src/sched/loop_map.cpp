#include "braze/sched/loop_map.h"

#include <algorithm>
#include <unordered_set>

#include "braze/sched/logical_map.h"
#include "braze/sched/transform_history.h"
#include "sched/iter_domain_transforms.h"

namespace braze {

namespace {

using IdSet = std::unordered_set<const IterDomain*>;

IterDomain* lookup(const std::unordered_map<IterDomain*, IterDomain*>& map, Val* id) {
  auto it = map.find(id->as<IterDomain>());
  return it == map.end() ? nullptr : it->second;
}

bool matches(const Expr* consumer_expr, const Expr* producer_expr, const IterDomainMap& map) {
  if (consumer_expr->op() != producer_expr->op()) return false;
  if (consumer_expr->op() == OpKind::Split) {
    return lookup(map.consumer_to_producer, consumer_expr->input(0)) == producer_expr->input(0) &&
           sched_detail::isSplitOf(producer_expr, consumer_expr->input(1)->as<Scalar>(),
                                   consumer_expr->attribute<bool>("inner_split"));
  }
  return lookup(map.consumer_to_producer, consumer_expr->input(0)) == producer_expr->input(0) &&
         lookup(map.consumer_to_producer, consumer_expr->input(1)) == producer_expr->input(1);
}

void link(IterDomainMap& map, Val* producer_id, Val* consumer_id) {
  map.producer_to_consumer[producer_id->as<IterDomain>()] = consumer_id->as<IterDomain>();
  map.consumer_to_producer[consumer_id->as<IterDomain>()] = producer_id->as<IterDomain>();
}

// IterDomains derived only from dims that have no counterpart across the op.
class OneSided {
 public:
  OneSided(const std::vector<IterDomain*>& base, const IdSet& mapped)
      : base_(base), mapped_(mapped) {}
  bool contains(const IterDomain* id) const {
    const std::vector<IterDomain*> sources = sourcesIn(id, base_);
    return !sources.empty() && std::none_of(sources.begin(), sources.end(),
                                            [&](IterDomain* s) { return mapped_.count(s) > 0; });
  }

 private:
  const std::vector<IterDomain*>& base_;
  const IdSet& mapped_;
};

// A Merge with one input mapped and the other one-sided: its output stands for the mapped
// input's counterpart.
bool passThrough(const Expr* merge,
                 const std::unordered_map<IterDomain*, IterDomain*>& here_to_there,
                 const OneSided& one_sided, IterDomain*& counterpart) {
  IterDomain* outer = lookup(here_to_there, merge->input(0));
  IterDomain* inner = lookup(here_to_there, merge->input(1));
  if (outer != nullptr && inner == nullptr &&
      one_sided.contains(merge->input(1)->as<IterDomain>())) {
    counterpart = outer;
    return true;
  }
  if (inner != nullptr && outer == nullptr &&
      one_sided.contains(merge->input(0)->as<IterDomain>())) {
    counterpart = inner;
    return true;
  }
  return false;
}

}  // namespace

IterDomainMap mapIterDomains(const TensorView* producer, const TensorView* consumer) {
  IterDomainMap map;
  IdSet producer_mapped;
  IdSet consumer_mapped;
  for (const LogicalPair& pair : logicalMap(producer, consumer)) {
    link(map, pair.producer, pair.consumer);
    producer_mapped.insert(pair.producer);
    consumer_mapped.insert(pair.consumer);
  }
  std::vector<Expr*> consumer_exprs = transformsBetween(consumer->root(), consumer->loop());
  std::vector<Expr*> producer_exprs = loopTransforms(producer);
  const OneSided consumer_only(consumer->root(), consumer_mapped);
  const OneSided producer_only(producer->logical(), producer_mapped);

  std::vector<bool> consumer_done(consumer_exprs.size(), false);
  std::vector<bool> producer_done(producer_exprs.size(), false);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t c = 0; c < consumer_exprs.size(); ++c) {
      if (consumer_done[c]) continue;
      const Expr* ce = consumer_exprs[c];
      for (size_t p = 0; p < producer_exprs.size(); ++p) {
        if (producer_done[p] || !matches(ce, producer_exprs[p], map)) continue;
        for (size_t k = 0; k < ce->outputs().size(); ++k) {
          link(map, producer_exprs[p]->output(k), ce->output(k));
        }
        consumer_done[c] = producer_done[p] = true;
        changed = true;
        break;
      }
      IterDomain* counterpart = nullptr;
      if (!consumer_done[c] && ce->op() == OpKind::Merge &&
          passThrough(ce, map.consumer_to_producer, consumer_only, counterpart)) {
        map.producer_to_consumer[counterpart] = ce->output(0)->as<IterDomain>();
        map.consumer_to_producer[ce->output(0)->as<IterDomain>()] = counterpart;
        consumer_done[c] = true;
        changed = true;
      }
    }
    for (size_t p = 0; p < producer_exprs.size(); ++p) {
      const Expr* pe = producer_exprs[p];
      IterDomain* counterpart = nullptr;
      if (!producer_done[p] && pe->op() == OpKind::Merge &&
          passThrough(pe, map.producer_to_consumer, producer_only, counterpart)) {
        map.consumer_to_producer[counterpart] = pe->output(0)->as<IterDomain>();
        map.producer_to_consumer[pe->output(0)->as<IterDomain>()] = counterpart;
        producer_done[p] = true;
        changed = true;
      }
    }
  }
  return map;
}

std::vector<IterDomain*> mapLoopDomains(const TensorView* producer, const TensorView* consumer) {
  const IterDomainMap map = mapIterDomains(producer, consumer);
  const std::unordered_set<const IterDomain*> consumer_loop(consumer->loop().begin(),
                                                            consumer->loop().end());
  std::vector<IterDomain*> result;
  result.reserve(producer->loop().size());
  for (IterDomain* id : producer->loop()) {
    auto it = map.producer_to_consumer.find(id);
    result.push_back(it != map.producer_to_consumer.end() && consumer_loop.count(it->second)
                         ? it->second
                         : nullptr);
  }
  return result;
}

}  // namespace braze
