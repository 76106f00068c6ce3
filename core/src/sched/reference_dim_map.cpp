#include "braze/sched/reference_dim_map.h"

#include <algorithm>
#include <numeric>

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
  ReferenceDimMap map;
  for (const TensorView* tv : fusion.allTensors()) map[tv].assign(tv->logical().size(), -1);
  std::iota(map[reference].begin(), map[reference].end(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (const TensorView* consumer : fusion.allTensors()) {
      if (consumer->definition() == nullptr) continue;
      for (const TensorView* producer : producersOf(consumer)) {
        for (const LogicalPair& pair : logicalMap(producer, consumer)) {
          const int64_t p = logicalPosition(producer, pair.producer);
          const int64_t c = logicalPosition(consumer, pair.consumer);
          if (p < 0 || c < 0) continue;
          int64_t& pd = map[producer][p];
          int64_t& cd = map[consumer][c];
          if (pd < 0 && cd >= 0) {
            pd = cd;
            changed = true;
          } else if (cd < 0 && pd >= 0) {
            cd = pd;
            changed = true;
          }
        }
      }
    }
  }
  return map;
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
