#include "braze/sched/transform_history.h"

#include <algorithm>
#include <unordered_set>

namespace braze {

std::vector<Expr*> transformsBetween(const std::vector<IterDomain*>& from,
                                     const std::vector<IterDomain*>& to) {
  const std::unordered_set<const Val*> stop(from.begin(), from.end());
  std::unordered_set<const Expr*> seen;
  std::vector<Expr*> exprs;
  std::vector<const Val*> pending(to.begin(), to.end());
  while (!pending.empty()) {
    const Val* val = pending.back();
    pending.pop_back();
    if (stop.count(val)) continue;
    Expr* def = val->definition();
    if (def == nullptr || !seen.insert(def).second) continue;
    exprs.push_back(def);
    for (const Val* input : def->inputs()) {
      if (input->isA<IterDomain>()) pending.push_back(input);
    }
  }
  // An output is always created after its inputs, so ids give a topological order.
  std::sort(exprs.begin(), exprs.end(),
            [](const Expr* a, const Expr* b) { return a->id() < b->id(); });
  return exprs;
}

std::vector<Expr*> loopTransforms(const TensorView* tv) {
  return transformsBetween(tv->logical(), tv->loop());
}

std::vector<Expr*> rootTransforms(const TensorView* tv) {
  if (!tv->hasRoot()) return {};
  return transformsBetween(tv->root(), tv->logical());
}

std::vector<IterDomain*> sourcesIn(const IterDomain* id, const std::vector<IterDomain*>& domain) {
  const std::unordered_set<const Val*> in_domain(domain.begin(), domain.end());
  std::unordered_set<const Val*> found;
  std::vector<const Val*> pending{id};
  std::unordered_set<const Val*> visited;
  while (!pending.empty()) {
    const Val* val = pending.back();
    pending.pop_back();
    if (!visited.insert(val).second) continue;
    if (in_domain.count(val)) {
      found.insert(val);
      continue;
    }
    if (const Expr* def = val->definition()) {
      for (const Val* input : def->inputs()) {
        if (input->isA<IterDomain>()) pending.push_back(input);
      }
    }
  }
  std::vector<IterDomain*> sources;
  for (IterDomain* candidate : domain) {
    if (found.count(candidate)) sources.push_back(candidate);
  }
  return sources;
}

}  // namespace braze
