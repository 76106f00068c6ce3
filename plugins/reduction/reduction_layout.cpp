#include "reduction_layout.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <unordered_set>

#include "braze/ir/tensor_view.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/persistent_buffer.h"

namespace braze::reduction {

namespace {

std::vector<TensorView*> reductionOutputs(const Fusion& fusion) {
  std::vector<TensorView*> reductions;
  for (const Expr* expr : fusion.exprs()) {
    if (isReductionExpr(expr)) reductions.push_back(expr->output(0)->as<TensorView>());
  }
  return reductions;
}

std::string positionsText(const std::vector<int64_t>& positions) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < positions.size(); ++i) os << (i > 0 ? ", " : "") << positions[i];
  os << "}";
  return os.str();
}

std::vector<int64_t> reducedPositions(const TensorView* tv) {
  std::vector<int64_t> positions;
  for (size_t i = 0; i < tv->logical().size(); ++i) {
    if (tv->logical()[i]->isReduction()) positions.push_back(static_cast<int64_t>(i));
  }
  return positions;
}

// Every tensor `tv` is computed from (not `tv` itself).
std::unordered_set<const TensorView*> upstreamOf(const TensorView* tv) {
  std::unordered_set<const TensorView*> seen;
  std::vector<const TensorView*> stack = {tv};
  while (!stack.empty()) {
    const TensorView* current = stack.back();
    stack.pop_back();
    for (const TensorView* producer : producersOf(current)) {
      if (seen.insert(producer).second) stack.push_back(producer);
    }
  }
  return seen;
}

// The input tensor holding the most non-broadcast reference dims: its layout is the memory
// order the kernel reads along.
const TensorView* mainInput(const Fusion& fusion, const DimMap& map) {
  const TensorView* best = nullptr;
  int64_t best_count = 0;
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr) continue;
    int64_t count = 0;
    for (size_t d = 0; d < tv->logical().size(); ++d) {
      if (!tv->logical()[d]->isBroadcast() && map.at(tv)[d] >= 0) ++count;
    }
    if (count > best_count) {
      best = tv;
      best_count = count;
    }
  }
  return best;
}

// Reference positions ordered as the main input lays them out; dims it lacks stay right after
// the dim that precedes them logically.
std::vector<int64_t> memoryOrder(const Fusion& fusion, const TensorView* reference,
                                 const DimMap& map) {
  const auto rank = static_cast<int64_t>(reference->logical().size());
  std::vector<double> key(rank, -1.0);
  if (const TensorView* input = mainInput(fusion, map)) {
    const std::vector<int64_t>& order = input->allocationOrder();
    for (size_t k = 0; k < order.size(); ++k) {
      const int64_t ref = map.at(input)[order[k]];
      if (ref >= 0 && key[ref] < 0) key[ref] = static_cast<double>(k);
    }
  }
  double previous = -1.0;
  for (int64_t d = 0; d < rank; ++d) {
    if (key[d] < 0) key[d] = previous + 1e-3;
    previous = key[d];
  }
  std::vector<int64_t> positions(rank);
  std::iota(positions.begin(), positions.end(), 0);
  std::stable_sort(positions.begin(), positions.end(),
                   [&](int64_t a, int64_t b) { return key[a] < key[b]; });
  return positions;
}

}  // namespace

bool isReductionExpr(const Expr* expr) {
  const OpFamily family = familyOf(expr->op());
  return family == OpFamily::Reduction || family == OpFamily::Welford;
}

std::optional<std::string> layoutProblem(const Fusion& fusion) {
  const std::vector<TensorView*> reductions = reductionOutputs(fusion);
  if (reductions.empty()) return "the fusion has no reduction";
  std::unordered_set<const TensorView*> reduction_set(reductions.begin(), reductions.end());
  for (const TensorView* tv : reductions) {
    if (!tv->hasReduction()) {
      return "the reduction " + tv->name() +
             " reduces no dim (a 0-d tensor has none): it is a copy, the pointwise scheduler's "
             "work";
    }
    const Expr* def = tv->definition();
    for (const TensorView* upstream : upstreamOf(tv)) {
      if (reduction_set.count(upstream)) {
        return "the reduction " + tv->name() + " reads the result of the reduction " +
               upstream->name() +
               "; reductions in sequence (a normalization such as softmax or layer norm) are "
               "the inner_outer scheduler's work";
      }
    }
    const auto* input = def->input(0)->as<TensorView>();
    for (const LogicalPair& pair : logicalMap(input, tv)) {
      if (pair.consumer->isReduction() && pair.producer->isBroadcast()) {
        return "the reduction " + tv->name() + " reduces dim " +
               std::to_string(logicalPosition(tv, pair.consumer)) + ", a broadcast dim of " +
               input->name() + "; squeeze it instead of reducing it";
      }
    }
  }
  const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
  if (!buffers.empty()) {
    return buffers.front().tv->name() + " is read again after the reduction " +
           buffers.front().reduction->name() +
           " finishes (a persistent buffer, as in softmax or layer norm); that is the "
           "inner_outer scheduler's work";
  }

  const TensorView* reference = reductions.front();
  const DimMap map = mapDimsToReference(fusion, reference);
  for (const TensorView* tv : reductions) {
    if (tv == reference) continue;
    const std::vector<int64_t>& to_ref = map.at(tv);
    bool same = tv->logical().size() == reference->logical().size();
    for (size_t d = 0; same && d < to_ref.size(); ++d) {
      same = to_ref[d] >= 0 &&
             tv->logical()[d]->isReduction() == reference->logical()[to_ref[d]]->isReduction();
    }
    if (!same) {
      return "the reductions " + reference->name() + " (dims " +
             positionsText(reducedPositions(reference)) + " of " +
             std::to_string(reference->logical().size()) + ") and " + tv->name() + " (dims " +
             positionsText(reducedPositions(tv)) + " of " + std::to_string(tv->logical().size()) +
             ") do not reduce the same dims of the same data; one reduction kernel covers one "
             "set of reduced dims, so they need separate kernels";
    }
  }
  for (const Val* output : fusion.outputs()) {
    const auto* tv = output->as<TensorView>();
    const std::vector<IterDomain*>& logical = tv->logical();
    for (size_t d = 0; d < logical.size(); ++d) {
      if (logical[d]->isBroadcast() || logical[d]->isReduction()) continue;
      const int64_t ref = map.at(tv)[d];
      if (ref < 0) {
        return "dim " + std::to_string(d) + " of output " + tv->name() +
               " maps to no dim of the reduction " + reference->name() +
               "; the kernel's loops cover only the reduction's dims";
      }
      if (reference->logical()[ref]->isReduction()) {
        return "output " + tv->name() + " keeps dim " + std::to_string(d) + ", which " +
               reference->name() +
               " reduces; the reduction kernel writes only reduced results (a full-size output "
               "needs a pointwise kernel of its own)";
      }
    }
  }
  return std::nullopt;
}

ReductionLayout reductionLayout(const Fusion& fusion) {
  ReductionLayout layout;
  layout.reductions = reductionOutputs(fusion);
  BRAZE_INTERNAL_CHECK(!layout.reductions.empty())
      << "reductionLayout: the fusion has no reduction; please report";
  layout.reference = layout.reductions.front();
  layout.map = mapDimsToReference(fusion, layout.reference);
  layout.memory_order = memoryOrder(fusion, layout.reference, layout.map);
  const std::vector<IterDomain*>& dims = layout.reference->logical();
  for (const int64_t d : layout.memory_order) {
    (dims[d]->isReduction() ? layout.reduced : layout.iteration).push_back(d);
    if (!dims[d]->isBroadcast()) layout.fast_dim = d;
  }
  layout.inner = layout.fast_dim < 0 || dims[layout.fast_dim]->isReduction();
  return layout;
}

std::vector<TensorView*> vectorizableInputs(const Fusion& fusion, const ReductionLayout& layout) {
  std::vector<TensorView*> inputs;
  if (layout.fast_dim < 0) return inputs;
  const std::vector<IterDomain*>& reference_dims = layout.reference->logical();
  for (Val* input : fusion.inputs()) {
    auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr || consumersOf(tv).empty()) continue;
    // Its cache is computed inside the reference's loops, so it must hold every one of them
    // (a bias broadcast along some dims is read in place instead).
    std::vector<bool> held(reference_dims.size(), false);
    for (size_t d = 0; d < tv->logical().size(); ++d) {
      const int64_t ref = layout.map.at(tv)[d];
      if (ref >= 0 && !tv->logical()[d]->isBroadcast()) held[ref] = true;
    }
    bool holds_all = true;
    for (size_t d = 0; d < reference_dims.size(); ++d)
      holds_all = holds_all && (held[d] || reference_dims[d]->isBroadcast());
    if (!holds_all) continue;
    const std::vector<IterDomain*> visible = tv->logicalNoReductions();
    for (auto it = tv->allocationOrder().rbegin(); it != tv->allocationOrder().rend(); ++it) {
      if (visible[*it]->isBroadcast()) continue;
      if (layout.map.at(tv)[*it] == layout.fast_dim && tv->contiguity()[*it].value_or(false))
        inputs.push_back(tv);
      break;
    }
  }
  return inputs;
}

}  // namespace braze::reduction
