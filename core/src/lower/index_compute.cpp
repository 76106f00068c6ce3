#include "lower/index_compute.h"

#include <algorithm>
#include <set>

#include "braze/sched/indexed_inputs.h"

namespace braze::lower {

namespace {

const IterDomain* idIn(const Expr* t, size_t i) {
  return t->input(i)->as<IterDomain>();
}
const IterDomain* idOut(const Expr* t, size_t i) {
  return t->output(i)->as<IterDomain>();
}

}  // namespace

bool isDivisibleSplit(const Expr& split) {
  const auto* factor = split.input(1)->as<Scalar>();
  const auto* extent = split.input(0)->as<IterDomain>()->logicalExtent();
  auto f = factor->constantInt();
  auto e = extent->constantInt();
  return f && e && *f > 0 && *e % *f == 0;
}

IndexMap::IndexMap(const LowerContext& ctx, const std::vector<kir::NestPosition>& nest)
    : ctx_(ctx), nest_(nest) {
  for (const kir::NestPosition& position : nest) {
    if (position.id == nullptr) continue;
    known_.emplace(ctx.graph().exactGroup(position.id), position.index);
  }
  propagateBackward(known_);
}

std::optional<kir::Value> IndexMap::find(const IterDomain* id) const {
  auto it = known_.find(ctx_.graph().exactGroup(id));
  if (it == known_.end()) return std::nullopt;
  return it->second;
}

void IndexMap::propagateBackward(std::map<int64_t, kir::Value>& known) const {
  const IdGraph& graph = ctx_.graph();
  auto lookup = [&](const IterDomain* id) -> const kir::Value* {
    auto it = known.find(graph.exactGroup(id));
    return it == known.end() ? nullptr : &it->second;
  };
  const std::vector<const Expr*>& transforms = graph.allTransforms();
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = transforms.rbegin(); it != transforms.rend(); ++it) {
      const Expr* t = *it;
      if (t->op() == OpKind::Split) {
        const IterDomain* in = idIn(t, 0);
        if (lookup(in) != nullptr) continue;
        const kir::Value* outer = lookup(idOut(t, 0));
        const kir::Value* inner = lookup(idOut(t, 1));
        if (outer == nullptr || inner == nullptr) continue;
        known.emplace(graph.exactGroup(in), *outer * ctx_.extentOf(idOut(t, 1)) + *inner);
        changed = true;
      } else {
        const kir::Value* out = lookup(idOut(t, 0));
        if (out == nullptr) continue;
        const IterDomain* outer = idIn(t, 0);
        const IterDomain* inner = idIn(t, 1);
        const kir::Value inner_extent = ctx_.extentOf(inner);
        const kir::Value out_index = *out;
        // Merged with a dim of one in front (a broadcast), the index is the inner dim's as it
        // is: no modulo, which would hide from vectorization that lanes walk it consecutively.
        if (ctx_.extentOf(outer).constantValue() == int64_t{1}) {
          changed |= known.emplace(graph.exactGroup(outer), kir::constant(0)).second;
          changed |= known.emplace(graph.exactGroup(inner), out_index).second;
          continue;
        }
        if (lookup(outer) == nullptr) {
          known.emplace(graph.exactGroup(outer), kir::div(out_index, inner_extent));
          changed = true;
        }
        if (lookup(inner) == nullptr) {
          known.emplace(graph.exactGroup(inner), kir::mod(out_index, inner_extent));
          changed = true;
        }
      }
    }
  }
}

void IndexMap::propagateForward(std::map<int64_t, kir::Value>& known, const TensorView* tv) const {
  const IdGraph& graph = ctx_.graph();
  auto lookup = [&](const IterDomain* id) -> const kir::Value* {
    auto it = known.find(graph.exactGroup(id));
    return it == known.end() ? nullptr : &it->second;
  };
  for (const Expr* t : graph.transformsOf(tv)) {
    if (t->op() == OpKind::Split) {
      const kir::Value* in = lookup(idIn(t, 0));
      if (in == nullptr) continue;
      const kir::Value in_index = *in;
      const kir::Value inner_extent = ctx_.extentOf(idOut(t, 1));
      if (lookup(idOut(t, 0)) == nullptr)
        known.emplace(graph.exactGroup(idOut(t, 0)), kir::div(in_index, inner_extent));
      if (lookup(idOut(t, 1)) == nullptr)
        known.emplace(graph.exactGroup(idOut(t, 1)), kir::mod(in_index, inner_extent));
    } else {
      const kir::Value* outer = lookup(idIn(t, 0));
      const kir::Value* inner = lookup(idIn(t, 1));
      if (outer == nullptr || inner == nullptr || lookup(idOut(t, 0)) != nullptr) continue;
      known.emplace(graph.exactGroup(idOut(t, 0)), *outer * ctx_.extentOf(idIn(t, 1)) + *inner);
    }
  }
}

std::vector<kir::Value> IndexMap::outputLogical(const TensorView* out) const {
  return indicesOf(out, out->logical());
}

std::vector<kir::Value> IndexMap::indicesOf(const TensorView* out,
                                            const std::vector<IterDomain*>& domain) const {
  std::vector<kir::Value> indices;
  for (size_t d = 0; d < domain.size(); ++d) {
    const IterDomain* id = domain[d];
    if (auto index = find(id)) {
      indices.push_back(*index);
    } else if (id->isBroadcast() || id->logicalExtent()->isConstantEqualTo(1)) {
      indices.push_back(kir::constant(0));
    } else {
      BRAZE_USER_CHECK(false)
          << "lowering: cannot tell which element of " << out->name() << " (logical dim " << d
          << ", " << id->name()
          << ") the loops around it compute: its loop axes after its inline position do not "
             "follow from the loops it shares with its consumer (typically a tensor inlined into "
             "a loop that merges a broadcast dim it does not have, with axes of its own left "
             "over). Inline it at every axis, or not at all";
    }
  }
  return indices;
}

kir::Value IndexMap::normalizedPosition(const kir::Value& position, const IterDomain* dim) const {
  // Negative positions count from the end, as the reference evaluator reads them. A kernel
  // cannot raise the evaluator's out-of-range error (a trap would leave the CUDA context
  // unusable for the rest of the process), so positions still outside the dim are clamped into
  // it: the read stays inside the tensor and the element is the first or last one of the dim.
  // An empty dim is refused before launch (emptyIndexedDimProblem).
  const kir::Value extent = ctx_.extentOf(dim);
  const kir::Value wrapped =
      isNonNegative(position)
          ? position
          : kir::select(kir::lt(position, kir::constant(0)), position + extent, position);
  return kir::min(kir::max(wrapped, kir::constant(0)), extent - kir::constant(1));
}

IndexMap::ProducerIndex IndexMap::producerLogical(const Expr& expr, size_t input) const {
  ProducerIndex result;
  const auto* producer = expr.input(input)->as<TensorView>();
  const auto* consumer = expr.output(0)->as<TensorView>();
  const std::vector<IterDomain*> p_dims = producer->logicalNoReductions();
  std::vector<kir::Value> c_all = indicesOf(consumer, consumer->root());
  std::vector<kir::Value> c_vis;
  for (size_t d = 0; d < consumer->root().size(); ++d) {
    if (!consumer->root()[d]->isReduction()) c_vis.push_back(c_all[d]);
  }
  std::vector<kir::Value> guards;
  auto cannot = [&](size_t d) {
    BRAZE_USER_CHECK(false) << "lowering: cannot index dim " << d << " of " << producer->name()
                            << " (" << p_dims[d]->name() << ") where " << consumer->name() << " = "
                            << expr.op() << "(...) is computed";
  };
  // The dim an indexing op reads at data-dependent positions is computed from the data even
  // when another reader of the same tensor walks it along a loop of this nest.
  const int64_t indexed_dim = isIndexedOperand(expr, input) ? expr.attribute<int64_t>("dim") : -1;
  for (size_t d = 0; d < p_dims.size(); ++d) {
    if (static_cast<int64_t>(d) != indexed_dim) {
      if (auto known = find(p_dims[d])) {
        result.logical.push_back(*known);
        continue;
      }
    }
    // A broadcast (or a dim of constant extent 1) has only index 0.
    if (p_dims[d]->isBroadcast() || p_dims[d]->logicalExtent()->isConstantEqualTo(1)) {
      result.logical.push_back(kir::constant(0));
      continue;
    }
    switch (expr.op()) {
      case OpKind::Slice: {
        const kir::Value start = ctx_.scalarValue(expr.input(1 + 2 * d));
        const kir::Value step = ctx_.scalarValue(expr.input(2 + 2 * d));
        result.logical.push_back(start + c_vis[d] * step);
        break;
      }
      case OpKind::Pad: {
        const kir::Value left = ctx_.scalarValue(expr.input(2 + 2 * d));
        const kir::Value position = c_vis[d] - left;
        guards.push_back(kir::le(left, c_vis[d]));
        guards.push_back(kir::lt(position, ctx_.extentOf(p_dims[d])));
        result.logical.push_back(position);
        break;
      }
      case OpKind::Cat: {
        const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
        if (d != dim) cannot(d);
        kir::Value offset = kir::constant(0);
        for (size_t k = 0; k < input; ++k) {
          offset =
              offset + ctx_.extentOf(expr.input(k)->as<TensorView>()->logicalNoReductions()[d]);
        }
        const kir::Value position = c_vis[d] - offset;
        guards.push_back(kir::le(offset, c_vis[d]));
        guards.push_back(kir::lt(position, ctx_.extentOf(p_dims[d])));
        result.logical.push_back(position);
        break;
      }
      case OpKind::Select: {
        result.logical.push_back(normalizedPosition(ctx_.scalarValue(expr.input(1)), p_dims[d]));
        break;
      }
      case OpKind::IndexSelect:
      case OpKind::Gather: {
        const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
        const auto* index_tv = expr.input(1)->as<TensorView>();
        // index_select (take) replaces x's dim `dim` by the index's dims; gather keeps ranks.
        const size_t index_rank =
            expr.op() == OpKind::Gather ? 1 : index_tv->logicalNoReductions().size();
        if (input == 1) {
          result.logical.push_back(c_vis[expr.op() == OpKind::Gather ? d : dim + d]);
          break;
        }
        // The other dims of x are read at the output's own position.
        if (d != dim) {
          result.logical.push_back(c_vis[d < dim ? d : d + index_rank - 1]);
          break;
        }
        const ProducerIndex at = producerLogical(expr, 1);
        const kir::Value element =
            kir::load(storageText(ctx_, index_tv), offsetOf(index_tv, at.logical));
        result.logical.push_back(normalizedPosition(element, p_dims[d]));
        break;
      }
      case OpKind::Reshape: {
        // Same row-major position in both shapes.
        const std::vector<IterDomain*> c_dims = consumer->logicalNoReductions();
        kir::Value flat = kir::constant(0);
        kir::Value c_stride = kir::constant(1);
        for (size_t e = c_dims.size(); e-- > 0;) {
          flat = flat + c_vis[e] * c_stride;
          c_stride = c_stride * ctx_.extentOf(c_dims[e]);
        }
        kir::Value p_stride = kir::constant(1);
        for (size_t e = p_dims.size(); e-- > d + 1;) p_stride = p_stride * ctx_.extentOf(p_dims[e]);
        result.logical.push_back(kir::mod(kir::div(flat, p_stride), ctx_.extentOf(p_dims[d])));
        break;
      }
      default:
        cannot(d);
    }
  }
  if (!guards.empty()) result.guard = kir::conjunction(guards);
  return result;
}

std::string IndexMap::storageText(const LowerContext& ctx, const TensorView* tv) {
  if (ctx.memoryOf(tv) == MemoryType::Global) return tv->name() + ".data";
  return tv->name();
}

kir::Value IndexMap::offsetOf(const TensorView* tv, const std::vector<kir::Value>& logical) const {
  const std::vector<IterDomain*> dims = tv->logicalNoReductions();
  BRAZE_INTERNAL_CHECK(logical.size() == dims.size())
      << "lowering: " << logical.size() << " indices for " << tv->name() << " of rank "
      << dims.size();
  if (ctx_.memoryOf(tv) == MemoryType::Global) {
    const std::vector<kir::Value> strides = ctx_.globalStrides(tv);
    kir::Value offset = kir::constant(0);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d]->isBroadcast() && !dims[d]->hasExpandedExtent()) continue;
      offset = offset + logical[d] * strides[d];
    }
    return offset;
  }
  std::map<int64_t, kir::Value> known = known_;
  for (size_t d = 0; d < dims.size(); ++d) {
    known.emplace(ctx_.graph().exactGroup(dims[d]), logical[d]);
  }
  propagateForward(known, tv);
  const AllocationLayout& layout = ctx_.layoutOf(tv);
  kir::Value offset = kir::constant(0);
  for (size_t i = 0; i < layout.positions.size(); ++i) {
    const int64_t j = layout.positions[i];
    auto it = known.find(ctx_.graph().exactGroup(tv->loopAxis(j)));
    BRAZE_USER_CHECK(it != known.end())
        << "lowering: cannot index " << describeAxis(tv, j) << " of " << tv->name() << " ("
        << toString(ctx_.memoryOf(tv))
        << " memory) where it is read; the reader's loops "
           "must be replayed from the same transforms";
    offset = offset + it->second * layout.strides[i];
  }
  return offset;
}

kir::Value IndexMap::outputOffset(const TensorView* out) const {
  return offsetOf(out, indicesOf(out, out->logicalNoReductions()));
}

IndexMap::Bounds IndexMap::bounds(const TensorView* out) const {
  const IdGraph& graph = ctx_.graph();
  std::set<const Expr*> splits;
  auto add_splits = [&](const TensorView* tv) {
    if (tv == nullptr) return;
    for (const Expr* t : graph.transformsOf(tv)) {
      if (t->op() == OpKind::Split && !ctx_.dividesEvenly(*t)) splits.insert(t);
    }
  };
  add_splits(out);
  for (const kir::NestPosition& position : nest_) {
    if (position.id != nullptr) add_splits(graph.ownerOf(position.id));
  }
  std::vector<const Expr*> ordered(splits.begin(), splits.end());
  std::sort(ordered.begin(), ordered.end(),
            [](const Expr* a, const Expr* b) { return a->id() < b->id(); });
  Bounds bounds;
  std::set<int64_t> done;
  // A broadcast dim has only index 0 wherever its loop runs: a copy of a tensor that has one
  // into registers or shared memory reads that index in every block and thread, so the dim
  // bounds nothing (for a global write the bound keeps one writer).
  const bool free_broadcasts = out != nullptr && ctx_.memoryOf(out) != MemoryType::Global;
  for (const Expr* split : ordered) {
    // The outer output of a split is in bounds whenever the split's input is, so only the
    // start of a chain of outer splits needs a condition. Below a split that divides evenly the
    // converse holds too, so the condition stays on its outer output: a row split by the width
    // of its vector copies is bounded once per vector, not once per element.
    const IterDomain* root = idIn(split, 0);
    while (root->definition() != nullptr && root->definition()->op() == OpKind::Split &&
           root == root->definition()->output(0) && !ctx_.dividesEvenly(*root->definition())) {
      root = idIn(root->definition(), 0);
    }
    if (free_broadcasts && root->isBroadcast()) continue;
    if (!done.insert(graph.exactGroup(root)).second) continue;
    auto index = find(root);
    if (!index) continue;
    const kir::Value condition = kir::lt(*index, ctx_.extentOf(root));
    if (condition.isTrue()) continue;
    (root->isReduction() ? bounds.reduction : bounds.iteration).push_back(condition);
  }
  for (const kir::NestPosition& position : nest_) {
    if (position.id == nullptr) continue;
    const ParallelType type = position.id->parallelType();
    if (!isThreadDim(type) && !isBlockDim(type)) continue;
    if (free_broadcasts && position.id->isBroadcast()) continue;
    const kir::Value condition = kir::lt(position.index, ctx_.extentOf(position.id));
    if (condition.isTrue()) continue;
    (position.id->isReduction() ? bounds.reduction : bounds.iteration).push_back(condition);
  }
  return bounds;
}

}  // namespace braze::lower
