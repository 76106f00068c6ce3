// cacheBefore, cacheAfter and cacheFork: insert a copy (Set) next to a tensor so that the copy
// can live in another memory (registers, shared memory) or be scheduled on its own.
//
//   cacheAfter(T0):   T1 = exp(T0)          ->  C = set(T0); T1 = exp(C)
//   cacheBefore(T1):  T1 = exp(T0)          ->  C = exp(T0); T1 = set(C)
//   cacheFork(T1):    T1 = exp(T0) (output), T2 = neg(T1)
//                                           ->  C = set(T1) (output in T1's place); T2 = neg(T1)
//
// The copy gets fresh logical IterDomains with the same extents and a loop domain equal to its
// logical domain.

#include <algorithm>

#include "braze/sched/transform_history.h"
#include "sched/iter_domain_transforms.h"

namespace braze {

namespace {

using sched_detail::tensorLabel;

IterDomain* freshLike(const IterDomain* like, bool keep_reduction) {
  const IterType type =
      like->isReduction() && !keep_reduction ? IterType::Iteration : like->iterType();
  return like->fusion().create<IterDomain>(like->extent(), type, like->expandedExtent());
}

// A tensor of `like`'s user-visible shape and dtype.
TensorView* copyOfShape(const TensorView* like) {
  std::vector<IterDomain*> domain;
  for (IterDomain* id : like->logicalNoReductions()) domain.push_back(freshLike(id, false));
  return like->fusion().create<TensorView>(like->dtype(), std::move(domain));
}

void makeSet(TensorView* in, TensorView* out) {
  in->fusion().create<Expr>(OpKind::Set, std::vector<Val*>{in}, std::vector<Val*>{out});
}

}  // namespace

TensorView* TensorView::cacheAfter() {
  const std::string call = "cacheAfter() on " + tensorLabel(this);
  BRAZE_USER_CHECK(!uses().empty())
      << call << ": " << name() << " has no consumers, so nothing would read the copy"
      << (fusion().isOutput(this) ? "; to write an output through a copy use cacheBefore()" : "");
  TensorView* cache = copyOfShape(this);
  cache->setMemoryType(MemoryType::Local);
  const std::vector<Expr*> consumers = uses();
  for (Expr* use : consumers) use->replaceInput(this, cache);
  makeSet(this, cache);
  // The consumers this tensor was inlined into now read the copy instead.
  setInlinePosition(0);
  return cache;
}

TensorView* TensorView::cacheBefore() {
  const std::string call = "cacheBefore() on " + tensorLabel(this);
  Expr* def = definition();
  BRAZE_USER_CHECK(def != nullptr)
      << call << ": " << name() << " is a fusion input, which no op computes; use cacheAfter() to "
      << "copy an input";
  BRAZE_USER_CHECK(!hasRoot()) << call << ": " << name()
                               << " is the partial result of rFactor; cache its consumer instead";
  // The copy takes over the computation, reductions included.
  std::vector<IterDomain*> domain;
  for (IterDomain* id : logical()) domain.push_back(freshLike(id, true));
  auto* cache = fusion().create<TensorView>(dtype(), std::move(domain));
  cache->setMemoryType(MemoryType::Local);
  def->replaceOutput(this, cache);

  if (hasReduction()) {
    // A copy has no reduction: drop the reduced dims and the loop axes derived from them.
    const std::vector<IterDomain*> old_logical = logical();
    std::vector<IterDomain*> kept_loop;
    for (IterDomain* id : loop()) {
      const std::vector<IterDomain*> sources = sourcesIn(id, old_logical);
      const bool reduced = std::any_of(sources.begin(), sources.end(),
                                       [](IterDomain* s) { return s->isReduction(); });
      if (!reduced) kept_loop.push_back(id);
    }
    setDomains({}, logicalNoReductions());
    setLoop(std::move(kept_loop));
    setInlinePosition(0);
  }
  makeSet(cache, this);
  return cache;
}

TensorView* TensorView::cacheFork() {
  const std::string call = "cacheFork() on " + tensorLabel(this);
  BRAZE_USER_CHECK(fusion().isOutput(this))
      << call << ": " << name() << " is not a fusion output; cacheFork copies an output that is "
      << "also read inside the fusion (use cacheAfter() or cacheBefore() otherwise)";
  BRAZE_USER_CHECK(!uses().empty())
      << call << ": " << name() << " is an output that no op reads; use cacheBefore() to write it "
      << "through a copy";
  TensorView* copy = copyOfShape(this);
  makeSet(this, copy);
  fusion().replaceOutput(this, copy);
  return copy;
}

}  // namespace braze
