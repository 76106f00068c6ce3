#include "lower/id_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "braze/sched/loop_map.h"
#include "lower/op_dim_map.h"

namespace braze::lower {

int64_t IdSets::slot(const IterDomain* id) const {
  auto it = slot_of_.find(id);
  if (it != slot_of_.end()) return it->second;
  const auto s = static_cast<int64_t>(parent_.size());
  slot_of_.emplace(id, s);
  parent_.push_back(s);
  return s;
}

int64_t IdSets::find(const IterDomain* id) const {
  int64_t s = slot(id);
  while (parent_[static_cast<size_t>(s)] != s) {
    parent_[static_cast<size_t>(s)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(s)])];
    s = parent_[static_cast<size_t>(s)];
  }
  return s;
}

bool IdSets::join(const IterDomain* a, const IterDomain* b) {
  const int64_t ra = find(a);
  const int64_t rb = find(b);
  if (ra == rb) return false;
  // The smaller root wins, so group numbers do not depend on the order of unions.
  parent_[static_cast<size_t>(std::max(ra, rb))] = std::min(ra, rb);
  return true;
}

namespace {

std::string factorKey(const Val* factor) {
  if (const auto* s = factor->dynCast<Scalar>()) {
    if (auto c = s->constantInt()) return "c" + std::to_string(*c);
  }
  return "v" + std::to_string(factor->id());
}

std::string describeId(const IterDomain* id) {
  return id->name();
}

}  // namespace

IdGraph::IdGraph(const std::vector<const Expr*>& exprs) {
  std::set<const TensorView*> seen;
  auto add_tensor = [&](const Val* v) {
    const auto* tv = v->dynCast<TensorView>();
    if (tv == nullptr || !seen.insert(tv).second) return;
    tensors_.push_back(tv);
    collectTransforms(tv);
  };
  for (const Expr* expr : exprs) {
    for (const Val* v : expr->inputs()) add_tensor(v);
    for (const Val* v : expr->outputs()) add_tensor(v);
  }
  std::set<const Expr*> all;
  for (const auto& [tv, list] : transforms_) all.insert(list.begin(), list.end());
  all_transforms_.assign(all.begin(), all.end());
  std::sort(all_transforms_.begin(), all_transforms_.end(),
            [](const Expr* a, const Expr* b) { return a->id() < b->id(); });

  for (const Expr* expr : exprs) {
    for (size_t o = 0; o < expr->outputs().size(); ++o) {
      const auto* out = expr->output(o)->dynCast<TensorView>();
      if (out == nullptr) continue;
      for (size_t i = 0; i < expr->inputs().size(); ++i) {
        const auto* in = expr->input(i)->dynCast<TensorView>();
        if (in == nullptr) continue;
        auto& consumers = consumers_[in];
        if (std::find(consumers.begin(), consumers.end(), out) == consumers.end())
          consumers.push_back(out);
        for (const DimPair& pair : mapProducerToConsumer(*expr, i, o)) {
          if (pair.exact) exact_.join(pair.producer, pair.consumer);
        }
      }
      // Sibling outputs (Welford's avg, m2, n) iterate together.
      if (o > 0) {
        const auto* first = expr->output(0)->as<TensorView>();
        for (size_t d = 0; d < first->root().size() && d < out->root().size(); ++d) {
          exact_.join(first->root()[d], out->root()[d]);
        }
      }
    }
  }
  mapThroughTransforms(exact_);
  checkSelfMapping();
  buildLoopGroups(exprs);
}

void IdGraph::collectTransforms(const TensorView* tv) {
  // Loop to logical, and logical to root for rFactor's partial results.
  std::set<const IterDomain*> logical(tv->root().begin(), tv->root().end());
  for (const IterDomain* id : tv->root()) owner_.emplace(id, tv);
  std::set<const Expr*> found;
  std::vector<const IterDomain*> stack(tv->loop().begin(), tv->loop().end());
  stack.insert(stack.end(), tv->logical().begin(), tv->logical().end());
  std::set<const IterDomain*> visited;
  for (const IterDomain* id : tv->logical()) owner_.emplace(id, tv);
  while (!stack.empty()) {
    const IterDomain* id = stack.back();
    stack.pop_back();
    if (!visited.insert(id).second) continue;
    owner_.emplace(id, tv);
    if (logical.count(id)) continue;
    const Expr* def = id->definition();
    if (def == nullptr) continue;
    if (found.insert(def).second) {
      for (const Val* v : def->outputs()) owner_.emplace(v->as<IterDomain>(), tv);
      for (const Val* v : def->inputs()) {
        if (const auto* in = v->dynCast<IterDomain>()) stack.push_back(in);
      }
    }
  }
  std::vector<const Expr*> list(found.begin(), found.end());
  std::sort(list.begin(), list.end(),
            [](const Expr* a, const Expr* b) { return a->id() < b->id(); });
  transforms_[tv] = std::move(list);
}

void IdGraph::mapThroughTransforms(IdSets& sets) {
  // Identical splits (same factor) of mapped IterDomains give mapped outputs; likewise
  // merges of mapped pairs. Repeat until nothing changes: a union can enable another.
  bool changed = true;
  while (changed) {
    changed = false;
    std::map<std::string, const Expr*> first_of;
    for (const Expr* t : all_transforms_) {
      std::ostringstream key;
      key << static_cast<int>(t->op());
      if (t->op() == OpKind::Split) {
        key << " " << sets.find(t->input(0)->as<IterDomain>()) << " " << factorKey(t->input(1))
            << " " << t->attribute<bool>("inner_split");
      } else {
        key << " " << sets.find(t->input(0)->as<IterDomain>()) << " "
            << sets.find(t->input(1)->as<IterDomain>());
      }
      auto [it, inserted] = first_of.emplace(key.str(), t);
      if (inserted) continue;
      const Expr* other = it->second;
      for (size_t o = 0; o < t->outputs().size(); ++o) {
        if (sets.join(t->output(o)->as<IterDomain>(), other->output(o)->as<IterDomain>()))
          changed = true;
      }
    }
  }
}

void IdGraph::checkSelfMapping() const {
  for (const TensorView* tv : tensors_) {
    const std::vector<IterDomain*>& dims = tv->logical();
    for (size_t a = 0; a < dims.size(); ++a) {
      if (dims[a]->isBroadcast()) continue;
      for (size_t b = a + 1; b < dims.size(); ++b) {
        if (dims[b]->isBroadcast()) continue;
        BRAZE_USER_CHECK(!exact_.same(dims[a], dims[b]))
            << "lowering: dims " << a << " and " << b << " of " << tv->name()
            << " are the same iteration through the ops of this kernel (the tensor is combined "
               "with a permutation of itself); such a fusion cannot be lowered as one kernel. "
               "Split it into two kernels or materialize one side in global memory in another "
               "kernel.";
      }
    }
  }
}

void IdGraph::buildLoopGroups(const std::vector<const Expr*>& exprs) {
  for (const TensorView* tv : tensors_) {
    for (const IterDomain* id : tv->loop()) loop_.find(id);
  }
  for (const Expr* expr : exprs) {
    const auto* first = expr->output(0)->dynCast<TensorView>();
    for (size_t o = 0; o < expr->outputs().size(); ++o) {
      const auto* out = expr->output(o)->dynCast<TensorView>();
      if (out == nullptr) continue;
      if (o > 0) {
        BRAZE_USER_CHECK(out->nLoopDims() == first->nLoopDims())
            << "lowering: " << out->name() << " and " << first->name() << " are outputs of one "
            << expr->op() << " but have " << out->nLoopDims() << " and " << first->nLoopDims()
            << " loop axes; schedule them alike";
        for (int64_t j = 0; j < out->nLoopDims(); ++j)
          loop_.join(first->loopAxis(j), out->loopAxis(j));
      }
      for (const Val* v : expr->inputs()) {
        const auto* producer = v->dynCast<TensorView>();
        if (producer == nullptr || producer->definition() == nullptr) continue;
        const int64_t k = producer->inlinePosition();
        BRAZE_USER_CHECK(k <= producer->nLoopDims() && k <= out->nLoopDims())
            << "lowering: " << producer->name() << " is inlined at position " << k << " but it has "
            << producer->nLoopDims() << " loop axes and its consumer " << out->name() << " has "
            << out->nLoopDims();
        // The scheduling primitives' own loop map decides which loops a producer shares.
        const std::vector<IterDomain*> shared = mapLoopDomains(producer, out);
        for (int64_t j = 0; j < k; ++j) {
          const IterDomain* p = producer->loopAxis(j);
          const IterDomain* c = out->loopAxis(j);
          BRAZE_USER_CHECK(shared[static_cast<size_t>(j)] == c)
              << "lowering: " << producer->name() << " is inlined at position " << k << " into "
              << out->name() << ", but loop axis " << j << " of " << producer->name() << " ("
              << describeId(p) << ") is not the same iteration as axis " << j << " of "
              << out->name() << " (" << describeId(c)
              << "); replay the consumer's transforms on the producer before inlining";
          loop_.join(p, c);
        }
      }
    }
  }
  // Promotion: the member whose tensor is not inlined at that position owns the loop.
  std::map<int64_t, std::vector<std::pair<const TensorView*, int64_t>>> owners;
  for (const TensorView* tv : tensors_) {
    if (tv->definition() == nullptr) continue;
    for (int64_t j = 0; j < tv->nLoopDims(); ++j) {
      if (j >= inlinePositionOf(tv)) owners[loop_.find(tv->loopAxis(j))].push_back({tv, j});
    }
  }
  for (const auto& [group, list] : owners) {
    const IterDomain* best = nullptr;
    for (const auto& [tv, j] : list) {
      const IterDomain* id = tv->loopAxis(j);
      if (best == nullptr || (best->isBroadcast() && !id->isBroadcast())) best = id;
    }
    promoted_[group] = best;
  }
  // Parallel types must agree within a loop.
  for (const TensorView* tv : tensors_) {
    if (tv->definition() == nullptr) continue;
    for (int64_t j = 0; j < tv->nLoopDims(); ++j) {
      const IterDomain* id = tv->loopAxis(j);
      const IterDomain* owner = promoted(id);
      const ParallelType a = id->parallelType();
      const ParallelType b = owner->parallelType();
      BRAZE_USER_CHECK(a == b || a == ParallelType::Serial || b == ParallelType::Serial)
          << "lowering: loop axis " << j << " of " << tv->name() << " is parallelized as " << a
          << " but it is the same loop as " << describeId(owner) << ", parallelized as " << b
          << "; conflicting parallel types on one loop";
    }
  }
}

const IterDomain* IdGraph::promoted(const IterDomain* loop_id) const {
  auto it = promoted_.find(loop_.find(loop_id));
  return it == promoted_.end() ? loop_id : it->second;
}

const std::vector<const Expr*>& IdGraph::transformsOf(const TensorView* tv) const {
  static const std::vector<const Expr*> kNone;
  auto it = transforms_.find(tv);
  return it == transforms_.end() ? kNone : it->second;
}

std::vector<const IterDomain*> IdGraph::allIds() const {
  std::vector<const IterDomain*> ids;
  ids.reserve(owner_.size());
  for (const auto& [id, tv] : owner_) ids.push_back(id);
  std::sort(ids.begin(), ids.end(),
            [](const IterDomain* a, const IterDomain* b) { return a->id() < b->id(); });
  return ids;
}

const TensorView* IdGraph::ownerOf(const IterDomain* id) const {
  auto it = owner_.find(id);
  return it == owner_.end() ? nullptr : it->second;
}

int64_t IdGraph::inlinePositionOf(const TensorView* tv) const {
  return consumersOf(tv).empty() ? 0 : tv->inlinePosition();
}

const std::vector<const TensorView*>& IdGraph::consumersOf(const TensorView* tv) const {
  static const std::vector<const TensorView*> kNone;
  auto it = consumers_.find(tv);
  return it == consumers_.end() ? kNone : it->second;
}

}  // namespace braze::lower
