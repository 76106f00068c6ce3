#include "braze/sched/transform_propagation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "braze/sched/transform_history.h"
#include "sched/iter_domain_transforms.h"
#include "sched/tensor_graph.h"

namespace braze {

namespace {

using sched_detail::EdgeMap;
using sched_detail::Neighbor;

using IdMap = std::unordered_map<const IterDomain*, IterDomain*>;

IterDomain* find(const IdMap& map, const Val* id) {
  auto it = map.find(id->as<IterDomain>());
  return it == map.end() ? nullptr : it->second;
}

// Replays `source`'s transforms (from the domain the edge starts in to its loop domain) onto
// `target`, whose loop domain is rebuilt from its logical domain. Returns the source-to-target
// map of IterDomains.
IdMap replay(TensorView* source, TensorView* target, const EdgeMap& edge) {
  IdMap map;
  for (const auto& [from, to] : edge.pairs) map[from] = to;

  // Target IterDomains above its logical domain (an rFactor producer's root) cannot be
  // transformed again; transforms there are matched against the existing ones instead.
  std::unordered_set<const IterDomain*> fixed;
  std::vector<Expr*> root_exprs = rootTransforms(target);
  for (const Expr* expr : root_exprs) {
    for (const Val* input : expr->inputs()) {
      if (input->isA<IterDomain>()) fixed.insert(input->as<IterDomain>());
    }
  }
  const auto matchFixed = [&](const Expr* source_expr) -> const Expr* {
    for (const Expr* candidate : root_exprs) {
      if (candidate->op() != source_expr->op()) continue;
      if (candidate->op() == OpKind::Split) {
        if (candidate->input(0) == find(map, source_expr->input(0)) &&
            sched_detail::isSplitOf(candidate, source_expr->input(1)->as<Scalar>(),
                                    source_expr->attribute<bool>("inner_split"))) {
          return candidate;
        }
      } else if (candidate->input(0) == find(map, source_expr->input(0)) &&
                 candidate->input(1) == find(map, source_expr->input(1))) {
        return candidate;
      }
    }
    return nullptr;
  };

  std::vector<IterDomain*> leaves = target->logical();
  const auto replaceLeaf = [&](IterDomain* old_leaf, std::vector<IterDomain*> replacements) {
    auto it = std::find(leaves.begin(), leaves.end(), old_leaf);
    it = leaves.erase(it);
    leaves.insert(it, replacements.begin(), replacements.end());
  };
  const auto isLeaf = [&](const IterDomain* id) {
    return std::find(leaves.begin(), leaves.end(), id) != leaves.end();
  };

  for (const Expr* expr : transformsBetween(*edge.from_domain, source->loop())) {
    if (expr->op() == OpKind::Split) {
      IterDomain* in = find(map, expr->input(0));
      if (in == nullptr) continue;
      if (fixed.count(in)) {
        if (const Expr* existing = matchFixed(expr)) {
          map[expr->output(0)->as<IterDomain>()] = existing->output(0)->as<IterDomain>();
          map[expr->output(1)->as<IterDomain>()] = existing->output(1)->as<IterDomain>();
        }
        continue;
      }
      if (!isLeaf(in)) continue;
      const sched_detail::SplitIds ids = sched_detail::splitIterDomain(
          in, expr->input(1)->as<Scalar>(), expr->attribute<bool>("inner_split"));
      replaceLeaf(in, {ids.outer, ids.inner});
      map[expr->output(0)->as<IterDomain>()] = ids.outer;
      map[expr->output(1)->as<IterDomain>()] = ids.inner;
      continue;
    }
    IterDomain* outer = find(map, expr->input(0));
    IterDomain* inner = find(map, expr->input(1));
    auto* out = expr->output(0)->as<IterDomain>();
    if (outer == nullptr || inner == nullptr) {
      // A dim present on one side only: the merge stands for the dim that has a counterpart.
      if (outer != nullptr) map[out] = outer;
      if (inner != nullptr) map[out] = inner;
      continue;
    }
    if (fixed.count(outer) || fixed.count(inner)) {
      if (const Expr* existing = matchFixed(expr)) map[out] = existing->output(0)->as<IterDomain>();
      continue;
    }
    if (!isLeaf(outer) || !isLeaf(inner) || sched_detail::mergeProblem(outer, inner)) continue;
    IterDomain* merged = sched_detail::mergeIterDomains(outer, inner);
    leaves.erase(std::find(leaves.begin(), leaves.end(), inner));
    replaceLeaf(outer, {merged});
    map[out] = merged;
  }

  // The replayed axes in the source's loop order, then the rest in logical order.
  std::vector<IterDomain*> loop;
  for (IterDomain* id : source->loop()) {
    IterDomain* twin = find(map, id);
    if (twin != nullptr && isLeaf(twin) &&
        std::find(loop.begin(), loop.end(), twin) == loop.end()) {
      loop.push_back(twin);
    }
  }
  for (IterDomain* leaf : leaves) {
    if (std::find(loop.begin(), loop.end(), leaf) == loop.end()) loop.push_back(leaf);
  }
  target->setLoop(std::move(loop));
  target->setInlinePosition(0);
  return map;
}

// How many of `covered` (loop IterDomains of `from` that carry the reference's axes) the edge
// relates to the neighbor.
size_t estimateCoverage(const std::vector<IterDomain*>& covered, const EdgeMap& edge) {
  std::unordered_set<const IterDomain*> mapped;
  for (const auto& pair : edge.pairs) mapped.insert(pair.first);
  size_t count = 0;
  for (IterDomain* id : covered) {
    const std::vector<IterDomain*> sources = sourcesIn(id, *edge.from_domain);
    if (std::any_of(sources.begin(), sources.end(),
                    [&](IterDomain* s) { return mapped.count(s) > 0; })) {
      ++count;
    }
  }
  return count;
}

}  // namespace

std::vector<TensorView*> scheduledTensors(const Fusion& fusion) {
  std::unordered_set<const TensorView*> wanted;
  for (Val* input : fusion.inputs()) {
    if (auto* tv = input->dynCast<TensorView>()) wanted.insert(tv);
  }
  for (const Expr* expr : fusion.exprs()) {
    for (Val* output : expr->outputs()) {
      if (auto* tv = output->dynCast<TensorView>()) wanted.insert(tv);
    }
  }
  std::vector<TensorView*> tensors;
  for (TensorView* tv : fusion.allTensors()) {
    if (wanted.count(tv)) tensors.push_back(tv);
  }
  return tensors;
}

std::vector<TensorView*> propagateTransforms(TensorView* reference,
                                             const std::vector<TensorView*>& targets) {
  BRAZE_USER_CHECK(reference != nullptr) << "propagateTransforms: the reference is null";
  std::unordered_set<const TensorView*> allowed(targets.begin(), targets.end());
  allowed.insert(reference);

  // Prim's algorithm on a maximum spanning tree: always extend from the visited tensor whose
  // edge keeps the most reference axes.
  std::unordered_map<const TensorView*, std::vector<IterDomain*>> covered;
  covered[reference] = reference->loop();
  std::vector<TensorView*> visited{reference};
  std::vector<TensorView*> replayed;
  while (true) {
    TensorView* best_from = nullptr;
    Neighbor best_to{nullptr, sched_detail::Relation::Consumer};
    size_t best = 0;
    for (TensorView* from : visited) {
      for (const Neighbor& to : sched_detail::neighborsOf(from, allowed)) {
        if (covered.count(to.tv)) continue;
        const size_t coverage = estimateCoverage(covered[from], sched_detail::edgeMap(from, to));
        if (coverage > best) {
          best = coverage;
          best_from = from;
          best_to = to;
        }
      }
    }
    if (best_from == nullptr) break;
    const IdMap map = replay(best_from, best_to.tv, sched_detail::edgeMap(best_from, best_to));
    std::vector<IterDomain*> carried;
    for (IterDomain* id : covered[best_from]) {
      IterDomain* twin = find(map, id);
      const auto& loop = best_to.tv->loop();
      if (twin != nullptr && std::find(loop.begin(), loop.end(), twin) != loop.end()) {
        carried.push_back(twin);
      }
    }
    covered[best_to.tv] = std::move(carried);
    visited.push_back(best_to.tv);
    replayed.push_back(best_to.tv);
  }
  return replayed;
}

std::vector<TensorView*> propagateTransforms(TensorView* reference) {
  BRAZE_USER_CHECK(reference != nullptr) << "propagateTransforms: the reference is null";
  return propagateTransforms(reference, scheduledTensors(reference->fusion()));
}

}  // namespace braze
