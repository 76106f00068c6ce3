#include "sched/vectorize_validation.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "braze/sched/logical_map.h"
#include "sched/iter_domain_transforms.h"

namespace braze::sched_detail {

namespace {

constexpr int64_t kMaxVectorBytes = 16;

struct Walk {
  std::optional<std::string> problem;
  VectorizedRange range;
};

std::string positionsText(const TensorView* tv, const std::vector<IterDomain*>& dims) {
  const std::vector<IterDomain*> visible = tv->logicalNoReductions();
  std::ostringstream os;
  os << (dims.size() == 1 ? "dim " : "dims ");
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto at = std::find(visible.begin(), visible.end(), dims[i]) - visible.begin();
    os << (i > 0 ? ", " : "") << at;
  }
  return os.str();
}

// The leaves of a tree of Merges over logical dims, outer before inner; false when the tree
// holds anything but Merges (a split inside a merge has no contiguous run).
bool collectMergeLeaves(IterDomain* id, const std::unordered_set<const IterDomain*>& logical,
                        std::vector<IterDomain*>& leaves) {
  if (logical.count(id)) {
    leaves.push_back(id);
    return true;
  }
  const Expr* def = id->definition();
  if (def == nullptr || def->op() != OpKind::Merge) return false;
  return collectMergeLeaves(def->input(0)->as<IterDomain>(), logical, leaves) &&
         collectMergeLeaves(def->input(1)->as<IterDomain>(), logical, leaves);
}

Walk walkVectorized(const TensorView* tv, int64_t axis) {
  Walk walk;
  IterDomain* v = tv->loop()[static_cast<size_t>(axis)];
  const std::string where =
      "loop axis " + std::to_string(axis) + " (" + v->name() + ") of " + tensorLabel(tv);
  if (axis != tv->nLoopDims() - 1) {
    walk.problem = where + " is not the innermost loop axis; only the innermost axis (" +
                   std::to_string(tv->nLoopDims() - 1) + ") can be vectorized";
    return walk;
  }
  if (v->isReduction()) {
    walk.problem = where +
                   " is a Reduction axis; rFactor the reduction and vectorize the "
                   "producer's serial partial reduction instead";
    return walk;
  }
  const std::optional<int64_t> width = v->extent()->constantInt();
  if (!width.has_value()) {
    walk.problem = where + " has the symbolic extent " + v->extent()->name() +
                   "; a vector width must be a constant (split by a constant factor first)";
    return walk;
  }
  const int64_t bytes = *width * sizeInBytes(tv->dtype());
  if (*width < 1 || (*width & (*width - 1)) != 0 || bytes > kMaxVectorBytes) {
    std::ostringstream os;
    os << where << " has extent " << *width << ": a vector of " << tv->dtype()
       << " must have a power-of-two width of at most " << kMaxVectorBytes << " bytes (up to "
       << kMaxVectorBytes / sizeInBytes(tv->dtype()) << " elements)";
    walk.problem = os.str();
    return walk;
  }
  walk.range.width = *width;

  const std::unordered_set<const IterDomain*> logical(tv->logical().begin(), tv->logical().end());
  IterDomain* top = v;
  while (!logical.count(top)) {
    const Expr* def = top->definition();
    if (def == nullptr || def->op() != OpKind::Split) break;
    if (def->output(0) == top) {
      walk.problem = where +
                     " is the outer part of a split, whose elements are strided in "
                     "memory; vectorize the inner part of an inner split";
      return walk;
    }
    if (top != v) walk.range.divisible_extents.push_back(top->extent());
    top = def->input(0)->as<IterDomain>();
  }
  std::vector<IterDomain*> leaves;
  if (!collectMergeLeaves(top, logical, leaves)) {
    walk.problem = where +
                   " is derived from a split inside a merge; vectorize the inner part of "
                   "a split of (merged) logical dims";
    return walk;
  }
  if (top != v)
    walk.range.divisible_extents.push_back(top->isBroadcast() ? top->logicalExtent()
                                                              : top->extent());
  for (IterDomain* leaf : leaves) {
    if (leaf->hasExpandedExtent()) {
      walk.problem = where +
                     " covers an expanded broadcast dim, which has no storage to load "
                     "as a vector";
      return walk;
    }
    if (!leaf->isBroadcast()) walk.range.dims.push_back(leaf);
  }
  for (Scalar* extent : walk.range.divisible_extents) {
    const std::optional<int64_t> value = extent->constantInt();
    if (value.has_value() && *value % *width != 0) {
      std::ostringstream os;
      os << where << ": the vector width " << *width << " does not divide the extent " << *value
         << " it is split from; use a width that divides " << *value;
      walk.problem = os.str();
      return walk;
    }
  }
  return walk;
}

// `dims` (outermost first) must be the innermost non-broadcast dims of `t` in memory, each
// contiguous.
std::optional<std::string> layoutProblem(const TensorView* t, const std::vector<IterDomain*>& dims,
                                         const std::string& where) {
  const std::vector<IterDomain*> visible = t->logicalNoReductions();
  std::vector<IterDomain*> memory_order;
  std::vector<bool> contiguous;
  for (int64_t position : t->allocationOrder()) {
    IterDomain* id = visible[static_cast<size_t>(position)];
    if (id->isBroadcast()) continue;
    memory_order.push_back(id);
    contiguous.push_back(t->contiguity()[static_cast<size_t>(position)].value_or(false));
  }
  if (dims.size() > memory_order.size() ||
      !std::equal(dims.begin(), dims.end(),
                  memory_order.end() - static_cast<int64_t>(dims.size()))) {
    return where + ": " + positionsText(t, dims) + " of " + tensorLabel(t) +
           " are not the innermost dims in its memory layout; vectorize along the innermost dim";
  }
  for (size_t i = memory_order.size() - dims.size(); i < memory_order.size(); ++i) {
    if (!contiguous[i]) {
      return where + ": " + positionsText(t, {memory_order[i]}) + " of " + tensorLabel(t) +
             " is not contiguous in memory, so a vector access would read the wrong elements";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> vectorizeProblem(const TensorView* tv, int64_t axis) {
  Walk walk = walkVectorized(tv, axis);
  if (walk.problem.has_value()) return walk.problem;
  const std::string where =
      "Vectorize on loop axis " + std::to_string(axis) + " of " + tensorLabel(tv);
  if (tv->memoryType() == MemoryType::Global) {
    if (auto problem = layoutProblem(tv, walk.range.dims, where)) return problem;
  }
  if (tv->hasRoot() || tv->definition() == nullptr) return std::nullopt;
  for (TensorView* producer : producersOf(tv)) {
    if (producer->memoryType() != MemoryType::Global) continue;
    std::unordered_map<const IterDomain*, IterDomain*> to_producer;
    for (const LogicalPair& pair : logicalMap(producer, tv))
      to_producer[pair.consumer] = pair.producer;
    std::vector<IterDomain*> producer_dims;
    bool loads_vectors = true;
    for (IterDomain* dim : walk.range.dims) {
      auto it = to_producer.find(dim);
      // A producer that does not vary along the vectorized dims is read one value at a time.
      if (it == to_producer.end() || it->second->isBroadcast()) {
        loads_vectors = false;
        break;
      }
      producer_dims.push_back(it->second);
    }
    if (!loads_vectors) continue;
    if (auto problem = layoutProblem(producer, producer_dims, where)) return problem;
  }
  return std::nullopt;
}

VectorizedRange vectorizedRange(const TensorView* tv, int64_t axis) {
  Walk walk = walkVectorized(tv, axis);
  BRAZE_INTERNAL_CHECK(!walk.problem.has_value()) << *walk.problem;
  return walk.range;
}

}  // namespace braze::sched_detail
