// TensorView::rFactor: splits one reduction into a producer of partial results and a consumer
// that finishes the reduction.
//
//   T1[i0, r1] = sum(T0[i0, i1]);  T1 loop [i0, r1/128, 128] with axis 2 on TIDx
//   T1->rFactor({1}):
//     P[i0, r1/128 (reduced), 128]   = sum(T0)   root [i0, r1], logical derived by the split
//     T1[i0, r128']                  = sum(P)    reduces what P kept: the 128 partial results
//
// The producer keeps the consumer's whole schedule (same transforms, loop order and parallel
// types); its root is a copy of the consumer's logical domain, so it reads the op's input as
// the consumer did, and its logical domain holds the reduction axes split off, the rFactor axes
// still Reduction and the others turned into Iteration axes of partial results.

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "braze/sched/transform_history.h"
#include "sched/iter_domain_transforms.h"

namespace braze {

TensorView* TensorView::rFactor(const std::vector<int64_t>& axes) {
  std::ostringstream call_text;
  call_text << "rFactor({";
  for (size_t i = 0; i < axes.size(); ++i) call_text << (i > 0 ? ", " : "") << axes[i];
  call_text << "}) on " << sched_detail::tensorLabel(this);
  const std::string call = call_text.str();

  Expr* def = definition();
  BRAZE_USER_CHECK(def != nullptr && familyOf(def->op()) == OpFamily::Reduction)
      << call << ": " << name() << " is "
      << (def == nullptr ? std::string("a fusion input")
                         : "computed by " + std::string(toString(def->op())))
      << "; rFactor splits a sum, prod, max or min"
      << (def != nullptr && def->op() == OpKind::Welford
              ? " (welford is not supported yet: its partial results need a three-input merge)"
              : "");
  BRAZE_USER_CHECK(!hasRoot()) << call << ": " << name()
                               << " is already the partial result of rFactor; rFactor its "
                                  "consumer instead";
  BRAZE_USER_CHECK(!axes.empty()) << call << ": name at least one reduction axis";

  std::unordered_set<IterDomain*> rfactored;
  for (int64_t axis : axes) {
    const int64_t position = sched_detail::normalizeLoopAxis(this, axis, call);
    IterDomain* id = loop_[static_cast<size_t>(position)];
    BRAZE_USER_CHECK(id->isReduction())
        << call << ": loop axis " << position << " (" << id->name() << ") is not a Reduction axis";
    BRAZE_USER_CHECK(rfactored.insert(id).second)
        << call << ": loop axis " << position << " is named twice";
  }
  const bool keeps_a_reduction = std::any_of(loop_.begin(), loop_.end(), [&](IterDomain* id) {
    return id->isReduction() && !rfactored.count(id);
  });
  BRAZE_USER_CHECK(keeps_a_reduction)
      << call << ": every reduction axis is named, so nothing would be left for " << name()
      << " to reduce; leave at least one reduction axis out";
  for (size_t i = 0; i < loop_.size(); ++i) {
    if (!loop_[i]->isReduction()) continue;
    const std::vector<IterDomain*> sources = sourcesIn(loop_[i], logical_);
    BRAZE_USER_CHECK(
        std::all_of(sources.begin(), sources.end(), [](IterDomain* s) { return s->isReduction(); }))
        << call << ": loop axis " << i << " (" << loop_[i]->name()
        << ") merges a reduction dim with a broadcast dim; rFactor needs reduction axes made of "
           "reduction dims only";
  }

  Fusion& f = fusion();
  const std::unordered_set<IterDomain*> loop_ids(loop_.begin(), loop_.end());
  // A loop axis of this tensor becomes, in the producer, a Reduction when it is rFactored and
  // an Iteration axis of partial results otherwise.
  const auto producerType = [&](const Val* id) -> std::optional<IterType> {
    auto* iter_domain = const_cast<IterDomain*>(id->as<IterDomain>());
    if (!loop_ids.count(iter_domain) || !iter_domain->isReduction()) return std::nullopt;
    return rfactored.count(iter_domain) ? IterType::Reduction : IterType::Iteration;
  };

  // The producer: a copy of this tensor's logical domain as root, and this tensor's transforms
  // replayed on it.
  std::unordered_map<const Val*, IterDomain*> twin;
  std::vector<IterDomain*> root;
  for (IterDomain* id : logical_) {
    auto* copy = f.create<IterDomain>(id->extent(), producerType(id).value_or(id->iterType()),
                                      id->expandedExtent());
    twin[id] = copy;
    root.push_back(copy);
  }
  for (const Expr* expr : loopTransforms(this)) {
    if (expr->op() == OpKind::Split) {
      const sched_detail::SplitIds ids = sched_detail::splitIterDomain(
          twin.at(expr->input(0)), expr->input(1)->as<Scalar>(),
          expr->attribute<bool>("inner_split"), producerType(expr->output(0)),
          producerType(expr->output(1)));
      twin[expr->output(0)] = ids.outer;
      twin[expr->output(1)] = ids.inner;
    } else {
      twin[expr->output(0)] = sched_detail::mergeIterDomains(
          twin.at(expr->input(0)), twin.at(expr->input(1)), producerType(expr->output(0)));
    }
  }
  // Its logical domain: the non-reduction dims, and in place of each reduction dim the loop
  // axes split off it (those made of several reduction dims go after the last of them).
  std::vector<IterDomain*> producer_logical;
  for (IterDomain* id : logical_) {
    if (!id->isReduction()) {
      producer_logical.push_back(twin.at(id));
      continue;
    }
    for (IterDomain* axis : loop_) {
      if (!axis->isReduction()) continue;
      const std::vector<IterDomain*> sources = sourcesIn(axis, logical_);
      if (!sources.empty() && sources.back() == id) producer_logical.push_back(twin.at(axis));
    }
  }
  std::vector<IterDomain*> producer_loop;
  for (IterDomain* id : loop_) {
    IterDomain* copy = twin.at(id);
    copy->parallelize(id->parallelType());
    producer_loop.push_back(copy);
  }
  auto* producer = f.create<TensorView>(dtype(), producer_logical);
  producer->setDomains(root, producer_logical);
  producer->setLoop(std::move(producer_loop));
  producer->setMemoryType(MemoryType::Local);
  def->replaceOutput(this, producer);

  // This tensor now reduces the producer's partial results: one fresh Reduction dim per
  // partial-result axis, in the producer's order; its iteration axes and their transforms stay.
  std::unordered_map<const IterDomain*, IterDomain*> finishing;
  std::unordered_map<const IterDomain*, IterDomain*> original_of;
  for (const auto& [original, copy] : twin)
    original_of[copy] = const_cast<IterDomain*>(original->as<IterDomain>());
  std::vector<IterDomain*> new_logical;
  std::vector<int64_t> reduced_positions;
  const std::vector<IterDomain*> partial_dims = producer->logicalNoReductions();
  for (size_t k = 0; k < partial_dims.size(); ++k) {
    IterDomain* original = original_of.at(partial_dims[k]);
    if (!original->isReduction()) {
      new_logical.push_back(original);
      continue;
    }
    auto* reduced = f.create<IterDomain>(original->extent(), IterType::Reduction);
    reduced->parallelize(original->parallelType());
    finishing[original] = reduced;
    new_logical.push_back(reduced);
    reduced_positions.push_back(static_cast<int64_t>(k));
  }
  std::vector<IterDomain*> new_loop;
  for (IterDomain* id : loop_) {
    if (rfactored.count(id)) continue;
    new_loop.push_back(id->isReduction() ? finishing.at(id) : id);
  }
  setDomains({}, std::move(new_logical));
  setLoop(std::move(new_loop));
  setInlinePosition(0);
  f.create<Expr>(def->op(), std::vector<Val*>{producer}, std::vector<Val*>{this},
                 std::vector<Attribute>{{"axes", reduced_positions}});
  return producer;
}

}  // namespace braze
