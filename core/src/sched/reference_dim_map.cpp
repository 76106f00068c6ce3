#include "braze/sched/reference_dim_map.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "braze/ir/tensor_view.h"
#include "braze/sched/logical_map.h"

namespace braze {

int64_t logicalPosition(const TensorView* tv, const IterDomain* id) {
  const std::vector<IterDomain*>& root = tv->root();
  auto it = std::find(root.begin(), root.end(), id);
  if (it != root.end()) return static_cast<int64_t>(it - root.begin());
  const std::vector<IterDomain*>& logical = tv->logical();
  it = std::find(logical.begin(), logical.end(), id);
  return it == logical.end() ? -1 : static_cast<int64_t>(it - logical.begin());
}

ReferenceDimMap mapDimsToReference(const Fusion& fusion, const TensorView* reference) {
  // The pairs of dims every op relates, found once as positions; the fixpoint then runs over
  // those links alone (it takes as many passes as the longest chain against their order, and
  // schedulers ask this for every candidate segment).
  struct Link {
    int32_t producer, consumer;          // tensors, as positions in `tensors`
    int32_t producer_dim, consumer_dim;  // logical positions
  };
  const std::vector<TensorView*> tensors = fusion.allTensors();
  std::unordered_map<const TensorView*, int32_t> position;
  position.reserve(tensors.size());
  std::vector<std::vector<int64_t>> dims(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    position.emplace(tensors[i], static_cast<int32_t>(i));
    dims[i].assign(tensors[i]->logical().size(), -1);
  }
  std::vector<Link> links;
  for (size_t c = 0; c < tensors.size(); ++c) {
    const TensorView* consumer = tensors[c];
    if (consumer->definition() == nullptr) continue;
    for (const TensorView* producer : producersOf(consumer)) {
      const auto p = position.find(producer);
      if (p == position.end()) continue;
      for (const LogicalPair& pair : logicalMap(producer, consumer)) {
        const int64_t pd = logicalPosition(producer, pair.producer);
        const int64_t cd = logicalPosition(consumer, pair.consumer);
        if (pd < 0 || cd < 0) continue;
        links.push_back({p->second, static_cast<int32_t>(c), static_cast<int32_t>(pd),
                         static_cast<int32_t>(cd)});
      }
    }
  }

  ReferenceDimMap map;
  map.reserve(tensors.size() + 1);
  const auto ref = position.find(reference);
  if (ref == position.end()) {
    std::vector<int64_t>& own = map[reference];
    own.resize(reference->logical().size());
    std::iota(own.begin(), own.end(), 0);
  } else {
    std::iota(dims[ref->second].begin(), dims[ref->second].end(), 0);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Link& link : links) {
      int64_t& pd = dims[link.producer][link.producer_dim];
      int64_t& cd = dims[link.consumer][link.consumer_dim];
      if (pd < 0 && cd >= 0) {
        pd = cd;
        changed = true;
      } else if (cd < 0 && pd >= 0) {
        cd = pd;
        changed = true;
      }
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i) map[tensors[i]] = std::move(dims[i]);
  return map;
}

int64_t outputWithFewestBroadcasts(const Fusion& fusion) {
  const auto broadcasts = [&](size_t i) {
    const std::vector<IterDomain*> dims =
        fusion.outputs()[i]->as<TensorView>()->logicalNoReductions();
    return std::count_if(dims.begin(), dims.end(),
                         [](const IterDomain* id) { return id->isBroadcast(); });
  };
  size_t best = 0;
  for (size_t i = 1; i < fusion.outputs().size(); ++i) {
    if (broadcasts(i) < broadcasts(best)) best = i;
  }
  return static_cast<int64_t>(best);
}

std::optional<std::string> unmappedOutputDimProblem(const Fusion& fusion,
                                                    const ReferenceDimMap& map,
                                                    const TensorView* reference) {
  for (const Val* output : fusion.outputs()) {
    const auto* tv = output->as<TensorView>();
    const std::vector<int64_t>& to_reference = map.at(tv);
    const std::vector<IterDomain*>& dims = tv->logical();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!dims[d]->isBroadcast() && to_reference[d] < 0) {
        return "dim " + std::to_string(d) + " of output " + tv->name() +
               " does not map to a dim of the reference output " + reference->name();
      }
    }
  }
  return std::nullopt;
}

}  // namespace braze
