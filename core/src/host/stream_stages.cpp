// StreamStages: which Exprs of a fusion run once and which per slice of a stream axis.

#include "braze/host/stream_stages.h"

#include <algorithm>
#include <sstream>

#include "braze/error.h"
#include "braze/ir/printer.h"
#include "host/contraction_pairs.h"
#include "lower/op_dim_map.h"
#include "sched/iter_domain_transforms.h"

namespace braze::host {
namespace {

// Ops whose output dims are not their inputs' dims one to one (op_dim_map.h leaves the moved
// dims unpaired): their data input must be sliced with the output, never read whole.
bool movesElements(OpKind op) {
  switch (op) {
    case OpKind::Reshape:
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Cat:
    case OpKind::Select:
    case OpKind::IndexSelect:
    case OpKind::Gather:
    case OpKind::Scatter:
      return true;
    default:
      return false;
  }
}

bool isTensorExpr(const Expr& expr) {
  return std::any_of(expr.outputs().begin(), expr.outputs().end(),
                     [](const Val* v) { return v->isA<TensorView>(); });
}

}  // namespace

StreamStages::StreamStages(const Fusion& fusion) {
  auto index = [&](const IterDomain* id) {
    auto [it, inserted] = id_index_.emplace(id, static_cast<int32_t>(parent_.size()));
    if (inserted) parent_.push_back(it->second);
    return it->second;
  };
  auto unite = [&](const IterDomain* a, const IterDomain* b) {
    const int32_t ra = rootOf(index(a));
    const int32_t rb = rootOf(index(b));
    if (ra != rb) parent_[static_cast<size_t>(std::max(ra, rb))] = std::min(ra, rb);
  };
  const std::vector<Expr*> exprs = fusion.exprs();
  // The index spaces: dims that the ops pair exactly iterate alike.
  for (const Expr* expr : exprs) {
    if (!isTensorExpr(*expr)) continue;
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      for (size_t o = 0; o < expr->outputs().size(); ++o) {
        for (const lower::DimPair& pair : lower::mapProducerToConsumer(*expr, i, o)) {
          if (pair.exact) unite(pair.producer, pair.consumer);
        }
        if (o == 0 && (expr->op() == OpKind::Matmul || expr->op() == OpKind::Linear)) {
          for (const auto& [producer, consumer] : host_detail::contractionPairs(*expr, i))
            unite(producer, consumer);
        }
      }
    }
    for (const Val* output : expr->outputs()) {
      if (const auto* tv = output->dynCast<TensorView>()) {
        for (const IterDomain* id : tv->logical()) index(id);
      }
    }
  }

  for (const Expr* expr : exprs) {
    if (!isTensorExpr(*expr)) continue;
    // The Expr's stream axis: every tensor output has one, on one index space, sliced alike.
    const TensorView* streamed = nullptr;
    const TensorView* whole = nullptr;
    for (const Val* output : expr->outputs()) {
      const auto* tv = output->dynCast<TensorView>();
      if (tv == nullptr) continue;
      if (!tv->streamAxis()) {
        if (whole == nullptr) whole = tv;
        continue;
      }
      if (streamed == nullptr) {
        streamed = tv;
        continue;
      }
      const StreamAxis& a = *streamed->streamAxis();
      const StreamAxis& b = *tv->streamAxis();
      BRAZE_USER_CHECK(a.sameSlicing(b) &&
                       classOf(streamed->logical()[static_cast<size_t>(a.axis)]) ==
                           classOf(tv->logical()[static_cast<size_t>(b.axis)]))
          << describe(expr) << ": its outputs " << streamed->name() << " (stream " << a.toString()
          << ") and " << tv->name() << " (stream " << b.toString()
          << ") have conflicting stream axes; one op's outputs are sliced alike";
    }
    BRAZE_USER_CHECK(streamed == nullptr || whole == nullptr)
        << describe(expr) << ": output " << streamed->name() << " has a stream axis ("
        << streamed->streamAxis()->toString() << ") but output " << whole->name()
        << " has none; give every output of one op the same stream axis, or none";
    const int32_t axis_class =
        streamed ? classOf(streamed->logical()[static_cast<size_t>(streamed->streamAxis()->axis)])
                 : -1;
    const bool joins_last =
        !stages_.empty() && stages_.back().loop == (streamed != nullptr) &&
        (streamed == nullptr || (stage_classes_.back() == axis_class &&
                                 stages_.back().slicing.sameSlicing(*streamed->streamAxis())));
    if (!joins_last) {
      StreamStage stage;
      stage.loop = streamed != nullptr;
      if (streamed) {
        stage.slicing = *streamed->streamAxis();
        stage.reference = streamed;
        has_loops_ = true;
      }
      stages_.push_back(std::move(stage));
      stage_classes_.push_back(axis_class);
    }
    stages_.back().exprs.push_back(expr);
    stage_of_[expr] = static_cast<int32_t>(stages_.size() - 1);
  }
  for (size_t s = 0; s < stages_.size(); ++s) {
    if (stages_[s].loop) check(static_cast<int32_t>(s));
  }
}

int32_t StreamStages::classOf(const IterDomain* id) const {
  auto found = id_index_.find(id);
  return found == id_index_.end() ? -1 : rootOf(found->second);
}

int32_t StreamStages::rootOf(int32_t root) const {
  while (parent_[static_cast<size_t>(root)] != root) {
    parent_[static_cast<size_t>(root)] =
        parent_[static_cast<size_t>(parent_[static_cast<size_t>(root)])];
    root = parent_[static_cast<size_t>(root)];
  }
  return root;
}

int32_t StreamStages::stageOf(const Expr& expr) const {
  auto found = stage_of_.find(&expr);
  return found == stage_of_.end() ? -1 : found->second;
}

std::optional<int64_t> StreamStages::slicedAxisInClass(const TensorView& tv,
                                                       int32_t axis_class) const {
  const std::vector<IterDomain*> visible = tv.logicalNoReductions();
  std::optional<int64_t> position;
  for (size_t d = 0; d < visible.size(); ++d) {
    if (visible[d]->isBroadcast() || classOf(visible[d]) != axis_class) continue;
    BRAZE_USER_CHECK(!position.has_value())
        << sched_detail::tensorLabel(&tv) << ": dims " << *position << " and " << d
        << " are both mapped to the "
        << "stream axis of the loop that reads it, so it has no one axis to slice along; "
           "stream over another axis, or copy "
        << tv.name() << " into a tensor with one such dim first";
    position = static_cast<int64_t>(d);
  }
  return position;
}

std::optional<int64_t> StreamStages::slicedAxis(const TensorView& tv, int32_t stage) const {
  if (stage < 0 || static_cast<size_t>(stage) >= stages_.size() ||
      !stages_[static_cast<size_t>(stage)].loop)
    return std::nullopt;
  return slicedAxisInClass(tv, stage_classes_[static_cast<size_t>(stage)]);
}

const Scalar* StreamStages::extentOf(int32_t stage) const {
  const StreamStage& s = stages_.at(static_cast<size_t>(stage));
  BRAZE_INTERNAL_CHECK(s.loop) << "StreamStages::extentOf: stage " << stage << " is no loop";
  return s.reference->logical()[static_cast<size_t>(s.slicing.axis)]->logicalExtent();
}

// Every tensor loop stage `stage` slices is sliced along its outermost dim in memory, and ops
// that move elements read their data sliced.
void StreamStages::check(int32_t stage) const {
  const StreamStage& s = stages_[static_cast<size_t>(stage)];
  const int32_t axis_class = stage_classes_[static_cast<size_t>(stage)];
  auto checkOutermost = [&](const TensorView& tv, int64_t position) {
    const std::vector<IterDomain*> visible = tv.logicalNoReductions();
    for (int64_t d : tv.allocationOrder()) {
      if (d == position) return;
      const IterDomain* id = visible[static_cast<size_t>(d)];
      BRAZE_USER_CHECK(id->isBroadcast() || id->logicalExtent()->isConstantEqualTo(1))
          << sched_detail::tensorLabel(&tv) << " is sliced along dim " << position
          << " by the stream loop over " << s.reference->name() << " axis " << s.slicing.axis
          << ", but dim " << d
          << " is outside it in memory, so a slice is not one stride step; stream over "
          << tv.name() << "'s outermost dim, or lay " << tv.name() << " out with dim " << position
          << " outermost";
    }
  };
  for (const Expr* expr : s.exprs) {
    for (const Val* output : expr->outputs()) {
      const auto* tv = output->dynCast<TensorView>();
      if (tv == nullptr) continue;
      const std::optional<int64_t> position = slicedAxisInClass(*tv, axis_class);
      BRAZE_INTERNAL_CHECK(position.has_value())
          << tv->name() << " has a stream axis outside its own index space";
      checkOutermost(*tv, *position);
    }
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      const auto* tv = expr->input(i)->dynCast<TensorView>();
      if (tv == nullptr) continue;
      const std::optional<int64_t> position = slicedAxisInClass(*tv, axis_class);
      if (position) {
        checkOutermost(*tv, *position);
        continue;
      }
      const bool data_input = i == 0 || expr->op() == OpKind::Cat;
      BRAZE_USER_CHECK(!(movesElements(expr->op()) && data_input))
          << describe(expr) << " runs in the stream loop over " << s.reference->name() << " axis "
          << s.slicing.axis << ", but " << sched_detail::tensorLabel(tv)
          << " has no dim that the op maps to that axis, so each slice would read all of it; "
             "stream over an axis that "
          << expr->op() << " keeps in place, or compute it outside the loop";
    }
  }
}

std::string StreamStages::toString() const {
  std::ostringstream os;
  for (size_t s = 0; s < stages_.size(); ++s) {
    const StreamStage& stage = stages_[s];
    os << "stage " << s << ": ";
    if (stage.loop) {
      os << "loop over " << stage.reference->name() << " " << stage.slicing.toString();
    } else {
      os << "once";
    }
    os << ":";
    for (const Expr* expr : stage.exprs) {
      for (const Val* output : expr->outputs()) os << " " << output->name();
    }
    os << "\n";
  }
  return os.str();
}

void streamRewrittenProducers(Fusion& fusion, int64_t first_new_statement) {
  const std::vector<Expr*> exprs = fusion.exprs();
  // Consumers first, so that a producer given an axis passes it on to its own producers.
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* expr = *it;
    if (expr->outputs().empty()) continue;
    const auto* streamed = expr->output(0)->dynCast<TensorView>();
    if (streamed == nullptr || !streamed->streamAxis()) continue;
    const StreamAxis& axis = *streamed->streamAxis();
    const IterDomain* stream_id = streamed->logical()[static_cast<size_t>(axis.axis)];
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      auto* producer = expr->input(i)->dynCast<TensorView>();
      if (producer == nullptr || producer->streamAxis() || producer->definition() == nullptr ||
          producer->id() < first_new_statement)
        continue;
      // Exact pairs, with a matmul's or linear's operands paired to its output (M, N, batch).
      for (const auto& [producer_id, consumer_id] : host_detail::exactPairs(*expr, i, 0)) {
        if (consumer_id != stream_id || !producer_id->isIteration()) continue;
        const std::vector<IterDomain*>& logical = producer->logical();
        const auto at = std::find(logical.begin(), logical.end(), producer_id);
        if (at == logical.end()) continue;
        StreamAxis inherited = axis;
        inherited.axis = at - logical.begin();
        producer->setStreamAxis(inherited);
      }
    }
  }
}

}  // namespace braze::host
