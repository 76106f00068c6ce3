#include "braze/sched/inlining.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "braze/sched/logical_map.h"
#include "braze/sched/loop_map.h"
#include "sched/iter_domain_transforms.h"

namespace braze {

namespace {

using sched_detail::tensorLabel;

// The tensors computed by Exprs that contribute to an output, in topological order.
std::vector<TensorView*> liveTensors(const Fusion& fusion) {
  std::vector<TensorView*> tensors;
  for (const Expr* expr : fusion.exprs()) {
    for (Val* output : expr->outputs()) {
      if (auto* tv = output->dynCast<TensorView>()) tensors.push_back(tv);
    }
  }
  return tensors;
}

std::vector<TensorView*> liveConsumers(const TensorView* tv,
                                       const std::unordered_set<const TensorView*>& live) {
  std::vector<TensorView*> consumers = consumersOf(tv);
  std::erase_if(consumers, [&](TensorView* c) { return !live.count(c); });
  return consumers;
}

std::vector<TensorView*> siblingsOf(const TensorView* tv) {
  std::vector<TensorView*> siblings;
  if (const Expr* def = tv->definition()) {
    for (Val* output : def->outputs()) {
      if (auto* sibling = output->dynCast<TensorView>()) siblings.push_back(sibling);
    }
  }
  return siblings;
}

bool compatible(ParallelType a, ParallelType b) {
  return a == b || a == ParallelType::Serial || b == ParallelType::Serial ||
         a == ParallelType::Unroll || b == ParallelType::Unroll;
}

// Why `tv` cannot share loop axis `axis` with its consumers, or an empty string. `maps` holds
// mapLoopDomains(tv, consumer) for each consumer.
std::string axisProblem(const TensorView* tv, int64_t axis,
                        const std::vector<TensorView*>& consumers,
                        const std::vector<std::vector<IterDomain*>>& maps) {
  const auto i = static_cast<size_t>(axis);
  IterDomain* id = tv->loop()[i];
  std::ostringstream os;
  if (id->isReduction()) {
    os << "loop axis " << axis << " (" << id->name() << ") of " << tensorLabel(tv)
       << " is a Reduction axis";
    if (!consumers.empty()) os << " that " << consumers[0]->name() << " does not reduce";
    os << "; its consumers need the finished reduction, so " << tv->name()
       << " can be inlined only left of its reduction axes (position <= " << axis << ")";
    return os.str();
  }
  if (id->parallelType() == ParallelType::Vectorize) {
    os << "loop axis " << axis << " (" << id->name() << ") of " << tensorLabel(tv)
       << " is vectorized; a vector access cannot hold other computations, so inline at most at "
       << axis;
    return os.str();
  }
  for (size_t c = 0; c < consumers.size(); ++c) {
    const TensorView* consumer = consumers[c];
    if (axis >= consumer->nLoopDims() || maps[c][i] != consumer->loop()[i]) {
      os << "loop axis " << axis << " (" << id->name() << ") of " << tensorLabel(tv)
         << " does not map to loop axis " << axis << " of its consumer " << consumer->name();
      if (axis < consumer->nLoopDims()) os << " (" << consumer->loop()[i]->name() << ")";
      os << "; schedule both alike (propagateTransforms) or inline at most at " << axis;
      return os.str();
    }
    IterDomain* other = consumer->loop()[i];
    if (other->parallelType() == ParallelType::Vectorize) {
      os << "loop axis " << axis << " of " << consumer->name() << " (" << other->name()
         << ") is vectorized; " << tv->name() << " cannot be computed inside a vector access";
      return os.str();
    }
    if (!compatible(id->parallelType(), other->parallelType())) {
      os << "loop axis " << axis << " of " << tensorLabel(tv) << " (" << id->name() << ") and of "
         << consumer->name() << " (" << other->name()
         << ") have conflicting parallel types; a shared loop has one";
      return os.str();
    }
  }
  return "";
}

struct InlineContext {
  std::vector<TensorView*> consumers;
  std::vector<std::vector<IterDomain*>> maps;
};

InlineContext contextOf(const TensorView* tv, const std::unordered_set<const TensorView*>& live) {
  InlineContext context;
  context.consumers = liveConsumers(tv, live);
  for (const TensorView* consumer : context.consumers) {
    context.maps.push_back(mapLoopDomains(tv, consumer));
  }
  return context;
}

int64_t maxPosition(const TensorView* tv, const InlineContext& context) {
  int64_t position = 0;
  while (position < tv->nLoopDims() &&
         axisProblem(tv, position, context.consumers, context.maps).empty()) {
    ++position;
  }
  return position;
}

// Loop IterDomains known to be one loop, from inline positions already decided.
class LoopGroups {
 public:
  IterDomain* find(IterDomain* id) {
    auto it = parent_.find(id);
    if (it == parent_.end() || it->second == id) return id;
    IterDomain* root = find(it->second);
    parent_[id] = root;
    return root;
  }
  void unite(IterDomain* a, IterDomain* b) {
    IterDomain* ra = find(a);
    IterDomain* rb = find(b);
    if (ra != rb) parent_[ra] = rb;
  }

 private:
  std::unordered_map<IterDomain*, IterDomain*> parent_;
};

void inlineMostOf(Fusion& fusion, const std::unordered_set<const TensorView*>* selected) {
  const std::vector<TensorView*> tensors = liveTensors(fusion);
  const std::unordered_set<const TensorView*> live(tensors.begin(), tensors.end());
  LoopGroups groups;
  std::unordered_map<const TensorView*, int64_t> decided;
  for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {
    TensorView* tv = *it;
    if (decided.count(tv)) continue;
    const std::vector<TensorView*> siblings = siblingsOf(tv);
    const bool change = selected == nullptr || selected->count(tv);
    int64_t position = change ? tv->nLoopDims() : tv->inlinePosition();
    std::vector<InlineContext> contexts;
    for (const TensorView* sibling : siblings) {
      contexts.push_back(contextOf(sibling, live));
      if (!change) continue;
      int64_t limit = maxPosition(sibling, contexts.back());
      // Several consumers must already share the loops the tensor is computed in. Outputs of
      // one Expr (Welford's avg, m2 and n) are computed by one statement: one consumer.
      std::vector<TensorView*> consumers;
      for (TensorView* consumer : contexts.back().consumers) {
        const bool sibling = std::any_of(consumers.begin(), consumers.end(), [&](TensorView* c) {
          return c->definition() == consumer->definition();
        });
        if (!sibling) consumers.push_back(consumer);
      }
      for (int64_t axis = 0; axis < limit && consumers.size() > 1; ++axis) {
        const auto i = static_cast<size_t>(axis);
        IterDomain* first = groups.find(consumers[0]->loop()[i]);
        const bool shared = std::all_of(consumers.begin(), consumers.end(), [&](TensorView* c) {
          return groups.find(c->loop()[i]) == first;
        });
        if (!shared) limit = axis;
      }
      position = std::min(position, limit);
    }
    for (size_t s = 0; s < siblings.size(); ++s) {
      TensorView* sibling = siblings[s];
      const int64_t own = std::min(position, sibling->nLoopDims());
      sibling->setInlinePosition(own);
      decided[sibling] = own;
      for (const TensorView* consumer : contexts[s].consumers) {
        for (int64_t axis = 0; axis < own && axis < consumer->nLoopDims(); ++axis) {
          groups.unite(sibling->loop()[static_cast<size_t>(axis)],
                       consumer->loop()[static_cast<size_t>(axis)]);
        }
      }
    }
  }
}

}  // namespace

int64_t maxInlinePosition(const TensorView* tv) {
  if (tv->fusion().isInput(tv)) return 0;
  const std::vector<TensorView*> tensors = liveTensors(tv->fusion());
  const std::unordered_set<const TensorView*> live(tensors.begin(), tensors.end());
  int64_t position = tv->nLoopDims();
  for (const TensorView* sibling : siblingsOf(tv)) {
    position = std::min(position, maxPosition(sibling, contextOf(sibling, live)));
  }
  return position;
}

void inlineAt(TensorView* tv, int64_t position) {
  const std::string call = "inlineAt(" + tv->name() + ", " + std::to_string(position) + ")";
  BRAZE_USER_CHECK(!tv->fusion().isInput(tv))
      << call << ": " << tensorLabel(tv)
      << " is a fusion input; inputs are read, not computed, so they have no inline position";
  const int64_t n = tv->nLoopDims();
  BRAZE_USER_CHECK(position >= -(n + 1) && position <= n)
      << call << ": position " << position << " is out of range; " << tv->name() << " has " << n
      << " loop axes (valid: " << -(n + 1) << " .. " << n << ")";
  const int64_t target = position < 0 ? position + n + 1 : position;
  const std::vector<TensorView*> tensors = liveTensors(tv->fusion());
  const std::unordered_set<const TensorView*> live(tensors.begin(), tensors.end());
  const std::vector<TensorView*> siblings = siblingsOf(tv);
  for (const TensorView* sibling : siblings) {
    const InlineContext context = contextOf(sibling, live);
    BRAZE_USER_CHECK(target <= sibling->nLoopDims())
        << call << ": " << sibling->name() << ", computed by the same " << tv->definition()->op()
        << ", has only " << sibling->nLoopDims() << " loop axes";
    for (int64_t axis = 0; axis < target; ++axis) {
      const std::string problem = axisProblem(sibling, axis, context.consumers, context.maps);
      BRAZE_USER_CHECK(problem.empty()) << call << ": " << problem;
    }
  }
  for (TensorView* sibling : siblings) sibling->setInlinePosition(target);
}

void inlineMost(Fusion& fusion) {
  inlineMostOf(fusion, nullptr);
}

void inlineMost(const std::vector<TensorView*>& tensors) {
  if (tensors.empty()) return;
  const std::unordered_set<const TensorView*> selected(tensors.begin(), tensors.end());
  inlineMostOf(tensors.front()->fusion(), &selected);
}

}  // namespace braze
