#include "braze/sched/persistent_buffer.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "braze/sched/logical_map.h"
#include "braze/sched/reduction_analysis.h"
#include "braze/sched/transform_propagation.h"

namespace braze {

namespace {

using TensorSet = std::unordered_set<const TensorView*>;

// Input tensors, then the outputs of the Exprs that contribute to an output, in topological
// order (creation order is not: cache primitives insert tensors before older ones).
std::vector<TensorView*> topologicalTensors(const Fusion& fusion) {
  std::vector<TensorView*> tensors;
  for (Val* input : fusion.inputs()) {
    if (auto* tv = input->dynCast<TensorView>()) tensors.push_back(tv);
  }
  for (const Expr* expr : fusion.exprs()) {
    for (Val* output : expr->outputs()) {
      if (auto* tv = output->dynCast<TensorView>()) tensors.push_back(tv);
    }
  }
  return tensors;
}

// Tensors computed from each tensor, through live Exprs.
std::unordered_map<const TensorView*, TensorSet> descendants(
    const std::vector<TensorView*>& tensors, const TensorSet& live) {
  std::unordered_map<const TensorView*, TensorSet> result;
  // Consumers first, so that each tensor can take its consumers' sets.
  for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {
    TensorSet& set = result[*it];
    for (TensorView* consumer : consumersOf(*it)) {
      if (!live.count(consumer)) continue;
      set.insert(consumer);
      const TensorSet& further = result[consumer];
      set.insert(further.begin(), further.end());
    }
  }
  return result;
}

// The logical dims of `from` that reach the Reduction root dims of `reduction` along a chain
// of producer-consumer maps inside `path_tensors`.
std::vector<IterDomain*> reducedDims(TensorView* from, TensorView* reduction,
                                     const TensorSet& path_tensors) {
  // Breadth-first search for a producer chain from `from` to `reduction`.
  std::unordered_map<const TensorView*, TensorView*> parent;
  std::deque<TensorView*> queue{from};
  parent[from] = nullptr;
  while (!queue.empty() && !parent.count(reduction)) {
    TensorView* tv = queue.front();
    queue.pop_front();
    for (TensorView* consumer : consumersOf(tv)) {
      if (parent.count(consumer) || (!path_tensors.count(consumer) && consumer != reduction)) {
        continue;
      }
      parent[consumer] = tv;
      queue.push_back(consumer);
    }
  }
  if (!parent.count(reduction)) return {};
  std::vector<TensorView*> chain;
  for (TensorView* tv = reduction; tv != nullptr; tv = parent.at(tv)) chain.push_back(tv);
  std::reverse(chain.begin(), chain.end());
  // Follow each dim of `from` along the chain.
  std::unordered_map<const IterDomain*, IterDomain*> origin;
  for (IterDomain* id : from->logicalNoReductions()) origin[id] = id;
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    std::unordered_map<const IterDomain*, IterDomain*> next;
    for (const LogicalPair& pair : logicalMap(chain[i], chain[i + 1])) {
      auto it = origin.find(pair.producer);
      if (it != origin.end()) next[pair.consumer] = it->second;
    }
    origin = std::move(next);
  }
  std::vector<IterDomain*> dims;
  for (IterDomain* id : reduction->root()) {
    auto it = origin.find(id);
    if (id->isReduction() && it != origin.end()) dims.push_back(it->second);
  }
  std::sort(dims.begin(), dims.end(), [from](IterDomain* a, IterDomain* b) {
    const auto& logical = from->logical();
    return std::find(logical.begin(), logical.end(), a) <
           std::find(logical.begin(), logical.end(), b);
  });
  return dims;
}

}  // namespace

std::vector<PersistentBuffer> persistentBuffers(const Fusion& fusion) {
  const std::vector<TensorView*> tensors = topologicalTensors(fusion);
  const TensorSet live(tensors.begin(), tensors.end());
  auto below = descendants(tensors, live);
  std::unordered_map<const TensorView*, PersistentBuffer> found;
  for (const ReductionInfo& info : reductionAxes(fusion)) {
    TensorView* reduction = info.tv;
    const TensorSet& after = below[reduction];
    // Tensors the reduction is computed from.
    TensorSet before;
    for (TensorView* tv : tensors) {
      if (below[tv].count(reduction)) before.insert(tv);
    }
    for (TensorView* tv : tensors) {
      if (!before.count(tv) || found.count(tv)) continue;
      std::vector<Expr*> rereads;
      for (Expr* use : tv->uses()) {
        for (Val* output : use->outputs()) {
          auto* consumer = output->dynCast<TensorView>();
          if (consumer == nullptr || !live.count(consumer) || consumer == reduction ||
              before.count(consumer))
            continue;
          // Read by something that also needs the finished reduction.
          const TensorSet& further = below[consumer];
          if (after.count(consumer) ||
              std::any_of(further.begin(), further.end(),
                          [&](const TensorView* t) { return after.count(t) > 0; })) {
            rereads.push_back(use);
            break;
          }
        }
      }
      if (rereads.empty()) continue;
      std::vector<IterDomain*> dims = reducedDims(tv, reduction, before);
      if (!dims.empty()) found[tv] = {tv, reduction, std::move(dims), std::move(rereads)};
    }
  }
  std::vector<PersistentBuffer> buffers;
  for (TensorView* tv : scheduledTensors(fusion)) {
    auto it = found.find(tv);
    if (it != found.end()) buffers.push_back(it->second);
  }
  return buffers;
}

std::optional<int64_t> persistentBufferBytes(const Fusion& fusion, ExpressionEvaluator& extents) {
  int64_t total = 0;
  for (const PersistentBuffer& buffer : persistentBuffers(fusion)) {
    int64_t elements = 1;
    for (IterDomain* dim : buffer.dims) {
      const std::optional<ScalarValue> value = extents.evaluate(dim->logicalExtent());
      if (!value.has_value()) return std::nullopt;
      elements *= toInt64(*value);
    }
    total += elements * sizeInBytes(buffer.tv->dtype());
  }
  return total;
}

}  // namespace braze
