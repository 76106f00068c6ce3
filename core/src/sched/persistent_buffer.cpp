#include "braze/sched/persistent_buffer.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "braze/sched/logical_map.h"
#include "braze/sched/reduction_analysis.h"
#include "braze/sched/transform_propagation.h"

namespace braze {

namespace {

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

// A set of tensors as one bit per position in the topological list: the descendant sets of
// every tensor are built for each candidate segment, where hash sets cost most of the analysis.
class TensorBits {
 public:
  explicit TensorBits(size_t size = 0) : words_((size + 63) / 64, 0) {}
  void insert(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  bool contains(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void insertAll(const TensorBits& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  bool intersects(const TensorBits& other) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      if (words_[w] & other.words_[w]) return true;
    }
    return false;
  }

 private:
  std::vector<uint64_t> words_;
};

// Positions of the tensors in `tensors` (the live ones).
using Positions = std::unordered_map<const TensorView*, size_t>;

// Tensors computed from each tensor, through live Exprs, by position.
std::vector<TensorBits> descendants(const std::vector<TensorView*>& tensors,
                                    const Positions& live) {
  std::vector<TensorBits> result(tensors.size(), TensorBits(tensors.size()));
  // Consumers first, so that each tensor can take its consumers' sets.
  for (size_t i = tensors.size(); i-- > 0;) {
    for (TensorView* consumer : consumersOf(tensors[i])) {
      const auto found = live.find(consumer);
      if (found == live.end()) continue;
      result[i].insert(found->second);
      result[i].insertAll(result[found->second]);
    }
  }
  return result;
}

// The logical dims of `from` that reach the Reduction root dims of `reduction` along a chain
// of producer-consumer maps inside `path_tensors`.
template <typename OnPath>
std::vector<IterDomain*> reducedDims(TensorView* from, TensorView* reduction,
                                     const OnPath& on_path) {
  // Breadth-first search for a producer chain from `from` to `reduction`.
  std::unordered_map<const TensorView*, TensorView*> parent;
  std::deque<TensorView*> queue{from};
  parent[from] = nullptr;
  while (!queue.empty() && !parent.count(reduction)) {
    TensorView* tv = queue.front();
    queue.pop_front();
    for (TensorView* consumer : consumersOf(tv)) {
      if (parent.count(consumer) || (!on_path(consumer) && consumer != reduction)) {
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
  Positions live;
  live.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) live.emplace(tensors[i], i);
  const std::vector<TensorBits> below = descendants(tensors, live);
  std::unordered_map<const TensorView*, PersistentBuffer> found;
  for (const ReductionInfo& info : reductionAxes(fusion)) {
    TensorView* reduction = info.tv;
    const auto reduction_at = live.find(reduction);
    if (reduction_at == live.end()) continue;  // feeds no output
    const TensorBits& after = below[reduction_at->second];
    // Tensors the reduction is computed from.
    TensorBits before(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (below[i].contains(reduction_at->second)) before.insert(i);
    }
    const auto on_path = [&](const TensorView* tv) {
      const auto at = live.find(tv);
      return at != live.end() && before.contains(at->second);
    };
    for (size_t i = 0; i < tensors.size(); ++i) {
      TensorView* tv = tensors[i];
      if (!before.contains(i) || found.count(tv)) continue;
      std::vector<Expr*> rereads;
      for (Expr* use : tv->uses()) {
        for (Val* output : use->outputs()) {
          auto* consumer = output->dynCast<TensorView>();
          const auto at = consumer == nullptr ? live.end() : live.find(consumer);
          if (at == live.end() || consumer == reduction || before.contains(at->second)) continue;
          // Read by something that also needs the finished reduction.
          if (after.contains(at->second) || below[at->second].intersects(after)) {
            rereads.push_back(use);
            break;
          }
        }
      }
      if (rereads.empty()) continue;
      std::vector<IterDomain*> dims = reducedDims(tv, reduction, on_path);
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
