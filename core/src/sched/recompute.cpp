#include "braze/sched/recompute.h"

#include <algorithm>
#include <unordered_map>

#include "braze/error.h"
#include "braze/ir/tensor_view.h"
#include "sched/iter_domain_transforms.h"

namespace braze {

namespace {

using sched_detail::tensorLabel;

// A tensor of `like`'s logical shape (a per-element op's output has no Reduction dims) and
// dtype, with fresh IterDomains.
TensorView* freshCopyOf(const TensorView* like) {
  std::vector<IterDomain*> domain;
  for (IterDomain* id : like->logical()) {
    domain.push_back(
        like->fusion().create<IterDomain>(id->extent(), id->iterType(), id->expandedExtent()));
  }
  auto* copy = like->fusion().create<TensorView>(like->dtype(), std::move(domain));
  copy->setMemoryType(MemoryType::Local);
  return copy;
}

// Copies the definition of `tv` (recomputable) and, first, of each recomputable tensor it
// reads that is not in `stop_at`; `copies` maps each copied tensor to its copy, so a tensor read
// twice is copied once.
TensorView* copyChain(TensorView* tv, std::unordered_map<const TensorView*, TensorView*>& copies,
                      const std::vector<const TensorView*>& stop_at) {
  if (auto it = copies.find(tv); it != copies.end()) return it->second;
  Expr* definition = tv->definition();
  std::vector<Val*> inputs;
  for (Val* input : definition->inputs()) {
    auto* producer = input->dynCast<TensorView>();
    const bool copied = producer != nullptr && isRecomputable(producer) &&
                        std::find(stop_at.begin(), stop_at.end(), producer) == stop_at.end();
    inputs.push_back(copied ? copyChain(producer, copies, stop_at) : input);
  }
  TensorView* copy = freshCopyOf(tv);
  tv->fusion().create<Expr>(definition->op(), std::move(inputs), std::vector<Val*>{copy},
                            definition->attributes());
  copies.emplace(tv, copy);
  return copy;
}

}  // namespace

bool isPerElementOp(OpKind op) {
  return isElementwise(op) || op == OpKind::Broadcast || op == OpKind::Set;
}

bool isRecomputable(const TensorView* tv) {
  const Expr* definition = tv->definition();
  return definition != nullptr && !tv->fusion().isInput(tv) && isPerElementOp(definition->op()) &&
         definition->outputs().size() == 1;
}

TensorView* recomputeFor(TensorView* tv, const std::vector<Expr*>& uses,
                         const std::vector<const TensorView*>& stop_at) {
  const std::string call = "recomputeFor() on " + tensorLabel(tv);
  BRAZE_USER_CHECK(isRecomputable(tv))
      << call << ": "
      << (tv->definition() == nullptr
              ? tv->name() + " has no definition (a fusion input is read, not recomputed)"
              : tv->name() + " is computed by " + std::string(toString(tv->definition()->op())) +
                    ", which is not an elementwise op, cast, broadcast or set")
      << "; recompute a tensor computed by one of those";
  BRAZE_USER_CHECK(std::find(stop_at.begin(), stop_at.end(), tv) == stop_at.end())
      << call << ": " << tv->name() << " is one of the tensors to stop at; recompute a tensor "
      << "computed from them";
  BRAZE_USER_CHECK(!uses.empty()) << call << ": no uses given; name the Exprs that should read "
                                  << "the copy";
  for (const Expr* use : uses) {
    BRAZE_USER_CHECK(std::find(tv->uses().begin(), tv->uses().end(), use) != tv->uses().end())
        << call << ": the " << toString(use->op()) << " given as a use does not read " << tv->name()
        << "; pass Exprs from " << tv->name() << "->uses()";
  }
  std::unordered_map<const TensorView*, TensorView*> copies;
  TensorView* copy = copyChain(tv, copies, stop_at);
  // A use listed twice is rewired once.
  std::vector<Expr*> rewired;
  for (Expr* use : uses) {
    if (std::find(rewired.begin(), rewired.end(), use) != rewired.end()) continue;
    use->replaceInput(tv, copy);
    rewired.push_back(use);
  }
  return copy;
}

void recomputeRereadBuffers(Fusion& fusion,
                            const std::function<bool(const PersistentBuffer&)>& accept,
                            const std::vector<const TensorView*>& stop_at) {
  const auto recomputed = [&](const PersistentBuffer& buffer) {
    return isRecomputable(buffer.tv) && !buffer.rereads.empty() &&
           std::find(stop_at.begin(), stop_at.end(), buffer.tv) == stop_at.end() && accept(buffer);
  };
  // Each round moves the rereads of one buffer onto a copy of its chain, which may leave a
  // buffer later in a chain of reductions to recompute; a normalization has a few, so this
  // bound is only a guard.
  const size_t max_rounds = 4 * fusion.exprs().size() + 4;
  for (size_t round = 0;; ++round) {
    const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
    auto it = std::find_if(buffers.begin(), buffers.end(), recomputed);
    if (it == buffers.end()) return;
    BRAZE_INTERNAL_CHECK(round < max_rounds)
        << "recomputeRereadBuffers: persistent buffers still recomputable after " << round
        << " rounds (" << it->tv->name() << "); please report";
    recomputeFor(it->tv, it->rereads, stop_at);
  }
}

}  // namespace braze
