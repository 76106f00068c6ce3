#include "braze/sched/parallel_propagation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "braze/sched/loop_map.h"
#include "braze/sched/transform_propagation.h"
#include "sched/tensor_graph.h"
#include "sched/vectorize_validation.h"

namespace braze {

namespace {

using sched_detail::Neighbor;
using sched_detail::Relation;

// Reference loop position -> loop IterDomain of one tensor (nullptr where unmapped).
using Axes = std::vector<IterDomain*>;

// The loop map from `from` to its neighbor, as from-loop-ID -> to-loop-ID.
std::unordered_map<const IterDomain*, IterDomain*> neighborLoopMap(TensorView* from,
                                                                   const Neighbor& to) {
  std::unordered_map<const IterDomain*, IterDomain*> map;
  switch (to.relation) {
    case Relation::Consumer: {
      const std::vector<IterDomain*> m = mapLoopDomains(from, to.tv);
      for (size_t i = 0; i < m.size(); ++i) {
        if (m[i] != nullptr) map[from->loop()[i]] = m[i];
      }
      break;
    }
    case Relation::Producer: {
      const std::vector<IterDomain*> m = mapLoopDomains(to.tv, from);
      for (size_t i = 0; i < m.size(); ++i) {
        if (m[i] != nullptr) map[m[i]] = to.tv->loop()[i];
      }
      break;
    }
    case Relation::Sibling:
      // Outputs of one op are scheduled alike; their loop axes correspond by position.
      if (from->nLoopDims() == to.tv->nLoopDims()) {
        for (size_t i = 0; i < from->loop().size(); ++i) map[from->loop()[i]] = to.tv->loop()[i];
      }
      break;
  }
  return map;
}

size_t countMapped(const Axes& axes) {
  return static_cast<size_t>(
      std::count_if(axes.begin(), axes.end(), [](IterDomain* id) { return id != nullptr; }));
}

// Reference axes as seen by every tensor reachable from it, each through the path that keeps
// the most of them.
std::unordered_map<const TensorView*, Axes> mapThroughFusion(TensorView* reference) {
  const std::vector<TensorView*> tensors = scheduledTensors(reference->fusion());
  std::unordered_set<const TensorView*> allowed(tensors.begin(), tensors.end());
  allowed.insert(reference);
  std::unordered_map<const TensorView*, Axes> axes;
  axes[reference] = reference->loop();
  std::vector<TensorView*> visited{reference};
  while (true) {
    TensorView* best_tv = nullptr;
    Axes best_axes;
    size_t best = 0;
    for (TensorView* from : visited) {
      for (const Neighbor& to : sched_detail::neighborsOf(from, allowed)) {
        if (axes.count(to.tv)) continue;
        const auto map = neighborLoopMap(from, to);
        Axes carried;
        for (IterDomain* id : axes[from]) {
          auto it = id == nullptr ? map.end() : map.find(id);
          carried.push_back(it == map.end() ? nullptr : it->second);
        }
        const size_t count = countMapped(carried);
        if (count > best) {
          best = count;
          best_tv = to.tv;
          best_axes = std::move(carried);
        }
      }
    }
    if (best_tv == nullptr) break;
    axes[best_tv] = std::move(best_axes);
    visited.push_back(best_tv);
  }
  return axes;
}

bool isExclusive(ParallelType type) {
  return type != ParallelType::Serial && type != ParallelType::Unroll &&
         type != ParallelType::Unswitch;
}

void applyTo(TensorView* reference, TensorView* target, const Axes& axes,
             const std::vector<ParallelType>& types) {
  for (size_t r = 0; r < axes.size(); ++r) {
    IterDomain* id = axes[r];
    if (id == nullptr) continue;
    const ParallelType type = reference->loop()[r]->parallelType();
    if (!types.empty() && std::find(types.begin(), types.end(), type) == types.end()) continue;
    const auto& loop = target->loop();
    const auto position =
        static_cast<int64_t>(std::find(loop.begin(), loop.end(), id) - loop.begin());
    if (isExclusive(type)) {
      const bool taken = std::any_of(loop.begin(), loop.end(), [&](IterDomain* other) {
        return other != id && other->parallelType() == type;
      });
      if (taken) continue;
    }
    if (type == ParallelType::Vectorize) {
      // Check with the axis unbound, so an earlier binding of it does not count as a conflict.
      const ParallelType previous = id->parallelType();
      id->parallelize(ParallelType::Serial);
      if (sched_detail::vectorizeProblem(target, position).has_value()) {
        id->parallelize(previous);
        continue;
      }
    }
    id->parallelize(type);
  }
}

}  // namespace

std::vector<IterDomain*> mapReferenceLoop(TensorView* reference, TensorView* tv) {
  const auto axes = mapThroughFusion(reference);
  auto it = axes.find(tv);
  if (it == axes.end()) return Axes(reference->loop().size(), nullptr);
  return it->second;
}

void propagateParallelTypes(TensorView* reference, const std::vector<TensorView*>& targets,
                            const std::vector<ParallelType>& types) {
  BRAZE_USER_CHECK(reference != nullptr) << "propagateParallelTypes: the reference is null";
  const auto axes = mapThroughFusion(reference);
  for (TensorView* target : targets) {
    if (target == reference) continue;
    auto it = axes.find(target);
    if (it != axes.end()) applyTo(reference, target, it->second, types);
  }
}

void propagateParallelTypes(TensorView* reference) {
  BRAZE_USER_CHECK(reference != nullptr) << "propagateParallelTypes: the reference is null";
  propagateParallelTypes(reference, scheduledTensors(reference->fusion()));
}

}  // namespace braze
