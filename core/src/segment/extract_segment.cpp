// extractSegment: part of a fusion as a standalone fusion (a partial clone), with where each of
// its inputs and outputs lives in the original.
//
// What the segment holds, for Exprs E of the original:
//
//   copied as they are   E (segment_set and stride_order as set), the tensors they compute
//                        (with IterDomains, extents and layouts), original
//                        fusion inputs E reads (with their layout), constants
//   new input tensors    intermediates E reads that other Exprs compute: dense in the
//                        original's allocation order (row-major unless stride_order made it),
//                        the original's user-visible dims (reductions dropped), an expanded
//                        broadcast as an Iteration dim of its expanded extent (what the
//                        producer segment writes: a contiguous tensor of the logical sizes;
//                        the tensors E compute keep their domains, so a broadcast dim there
//                        may read such an Iteration dim, whose values are equal along it)
//   scalars              an extent of an input tensor is bound from that tensor's sizes, so it
//                        becomes a symbolic leaf (even when the original computes it); other
//                        scalars are copied with the scalar Exprs that compute them, down to
//                        leaves, and a symbolic leaf no input tensor binds becomes a scalar
//                        input (the runtime evaluates it on the original)
//
//   original:  T0[i{s0}, i{s1}] -> T1 = sum(T0, {1}) [i{s0}, r{s1}] -> T2 = exp(T1) [i{s0}]
//   segment of {exp}:  fusion(T0': [i{s0'}]) -> (T1')   T1' = exp(T0')   inputs = {T1}

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "braze/segment/segmented_fusion.h"

namespace braze {

namespace {

// What a statement of the original is to the segment; one byte per statement id.
enum Role : uint8_t {
  kNone = 0,
  kChosen = 1,        // copied or substituted into the segment
  kExpr = 2,          // one of the segment's Exprs
  kComputed = 4,      // computed by one of the segment's Exprs
  kBound = 8,         // a scalar whose value an input tensor's sizes give
  kIntermediate = 16  // a tensor another segment computes: a new input
};

class SegmentExtractor {
 public:
  SegmentExtractor(const Fusion& original, std::span<const Expr* const> exprs)
      : original_(original), roles_(static_cast<size_t>(original.numStatements()), kNone) {
    for (const Expr* expr : exprs) {
      BRAZE_USER_CHECK(expr != nullptr && &expr->fusion() == &original)
          << "extractSegment: an Expr is null or belongs to another fusion";
      if (has(expr, kExpr)) continue;
      mark(expr, kExpr);
      exprs_.push_back(expr);
    }
    for (const Expr* expr : exprs_) {
      for (const Val* output : expr->outputs()) mark(output, kComputed);
    }
  }

  Segment extract(std::optional<std::span<const Val* const>> outputs) {
    collectInputs();
    for (const Expr* expr : exprs_) chooseExpr(expr);
    for (const TensorView* tv : input_tensors_) chooseInputTensor(tv);
    closeScalars();

    Segment segment;
    CloneMap map;
    segment.fusion = original_.cloneSubset(
        chosen_,
        [this](const Statement& old, Fusion& target, const CloneMap& m) {
          return substitute(old, target, m);
        },
        &map);
    addInputs(segment, map);
    if (outputs) {
      for (const Val* output : *outputs) {
        BRAZE_USER_CHECK(output != nullptr && output->isA<TensorView>() && has(output, kComputed))
            << "extractSegment: output " << (output ? output->name() : "null")
            << " is not a tensor the segment's Exprs compute";
        addOutput(segment, map, output);
      }
    } else {
      addOutputsByUse(segment, map);
    }
    segment.exprs = topologicalOrder();
    return segment;
  }

 private:
  bool has(const Statement* s, Role role) const {
    return (roles_[static_cast<size_t>(s->id())] & role) != 0;
  }
  void mark(const Statement* s, Role role) { roles_[static_cast<size_t>(s->id())] |= role; }

  void choose(const Statement* s) {
    if (has(s, kChosen)) return;
    mark(s, kChosen);
    chosen_.push_back(s);
  }

  void needScalar(const Scalar* s) {
    if (s != nullptr) pending_scalars_.push_back(s);
  }

  // Tensors the Exprs read but do not compute, and the scalars they read.
  void collectInputs() {
    for (const Expr* expr : exprs_) {
      for (const Val* input : expr->inputs()) {
        if (has(input, kComputed)) continue;
        if (const auto* tv = input->dynCast<TensorView>()) {
          if (has(tv, kChosen)) continue;
          choose(tv);
          input_tensors_.push_back(tv);
          if (!original_.isInput(tv)) mark(tv, kIntermediate);
          // The sizes of the argument bind every extent a user sees.
          for (const IterDomain* id : tv->logicalNoReductions()) {
            if (id->isBroadcast() && !id->hasExpandedExtent()) continue;
            mark(id->logicalExtent(), kBound);
          }
        } else {
          needScalar(input->as<Scalar>());
        }
      }
    }
  }

  static void checkUnscheduled(const TensorView* tv) {
    BRAZE_USER_CHECK(!tv->hasRoot() && tv->loop() == tv->logical())
        << "extractSegment: " << tv->name()
        << " is scheduled (its loop domain differs from its logical domain); segment a fusion "
           "before scheduling it";
  }

  void chooseDomain(const TensorView* tv) {
    checkUnscheduled(tv);
    for (const IterDomain* id : tv->logical()) {
      choose(id);
      needScalar(id->extent());
      needScalar(id->expandedExtent());
    }
  }

  void chooseExpr(const Expr* expr) {
    choose(expr);
    for (const Val* output : expr->outputs()) {
      choose(output);
      if (const auto* tv = output->dynCast<TensorView>()) chooseDomain(tv);
    }
  }

  void chooseInputTensor(const TensorView* tv) {
    if (!has(tv, kIntermediate)) {
      chooseDomain(tv);
      return;
    }
    // A new input: its IterDomains are made by substitute(), from these extents.
    for (const IterDomain* id : tv->logicalNoReductions()) {
      if (id->isBroadcast() && !id->hasExpandedExtent()) continue;
      needScalar(id->logicalExtent());
    }
  }

  // Every scalar the segment needs, with what computes it: a constant or a bound scalar is a
  // leaf; a computed one brings its scalar Expr and that Expr's inputs; any other symbolic leaf
  // is a scalar input.
  void closeScalars() {
    while (!pending_scalars_.empty()) {
      const Scalar* s = pending_scalars_.back();
      pending_scalars_.pop_back();
      if (has(s, kChosen)) continue;
      choose(s);
      if (s->isConstant() || has(s, kBound) || has(s, kComputed)) continue;
      if (const Expr* def = s->definition()) {
        scalar_exprs_.push_back(def);
        choose(def);
        for (const Val* output : def->outputs()) choose(output);
        for (const Val* input : def->inputs()) needScalar(input->as<Scalar>());
        continue;
      }
      scalar_inputs_.push_back(s);
    }
  }

  Statement* substitute(const Statement& old, Fusion& target, const CloneMap& map) const {
    if (const auto* expr = old.dynCast<Expr>()) {
      // Inside a segment segment_set and stride_order are plain copies, which every scheduler
      // takes: the boundary segment_set asks for is where the segment ends, and the layout
      // stride_order asks for stays on its output tensor (lowering and the runtime follow it).
      if (expr->op() != OpKind::SegmentSet && expr->op() != OpKind::StrideOrder) return nullptr;
      return target.create<Expr>(OpKind::Set, std::vector<Val*>{map[expr->input(0)]},
                                 std::vector<Val*>{map[expr->output(0)]});
    }
    if (const auto* s = old.dynCast<Scalar>()) {
      // A computed extent bound by an input's sizes: a leaf here.
      if (has(s, kBound) && !has(s, kComputed) && s->definition() != nullptr)
        return target.create<Scalar>(s->dtype());
      return nullptr;
    }
    const auto* tv = old.dynCast<TensorView>();
    if (tv == nullptr || !has(tv, kIntermediate)) return nullptr;
    std::vector<IterDomain*> logical;
    for (const IterDomain* id : tv->logicalNoReductions()) {
      if (id->isBroadcast() && !id->hasExpandedExtent()) {
        logical.push_back(target.create<IterDomain>(target.constantIndex(1), IterType::Broadcast));
      } else {
        logical.push_back(target.create<IterDomain>(map[id->logicalExtent()], IterType::Iteration));
      }
    }
    auto* input = target.create<TensorView>(tv->dtype(), std::move(logical));
    // The producer segment writes it dense in its allocation order (stride_order's).
    std::vector<std::optional<bool>> contiguity;
    for (const IterDomain* id : input->logicalNoReductions())
      contiguity.push_back(id->isBroadcast() ? std::nullopt : std::optional<bool>(true));
    input->setLayout(tv->allocationOrder(), std::move(contiguity));
    return input;
  }

  // Original fusion inputs (in their order), then intermediates and other scalars (by id).
  void addInputs(Segment& segment, const CloneMap& map) const {
    std::vector<const Val*> originals;
    std::vector<const Val*> others;
    for (const TensorView* tv : input_tensors_)
      (has(tv, kIntermediate) ? others : originals).push_back(tv);
    for (const Scalar* s : scalar_inputs_) (original_.isInput(s) ? originals : others).push_back(s);
    std::sort(originals.begin(), originals.end(), [this](const Val* a, const Val* b) {
      return original_.inputIndex(a) < original_.inputIndex(b);
    });
    // Tensors before scalars, each by id.
    std::sort(others.begin(), others.end(), [](const Val* a, const Val* b) {
      const bool a_tensor = a->isA<TensorView>();
      const bool b_tensor = b->isA<TensorView>();
      if (a_tensor != b_tensor) return a_tensor;
      return a->id() < b->id();
    });
    for (const auto* list : {&originals, &others}) {
      for (const Val* val : *list) {
        segment.fusion->addInput(map[val]);
        segment.inputs.push_back(val);
      }
    }
  }

  void addOutput(Segment& segment, const CloneMap& map, const Val* output) const {
    if (std::find(segment.outputs.begin(), segment.outputs.end(), output) != segment.outputs.end())
      return;
    segment.fusion->addOutput(map[output]);
    segment.outputs.push_back(output);
  }

  // The computed tensors an original output or an Expr outside the segment reads: original
  // outputs first (in their order), then the others by id.
  void addOutputsByUse(Segment& segment, const CloneMap& map) const {
    for (const Val* output : original_.outputs()) {
      if (output->isA<TensorView>() && has(output, kComputed)) addOutput(segment, map, output);
    }
    std::vector<const Val*> others;
    for (const Expr* expr : exprs_) {
      for (const Val* output : expr->outputs()) {
        if (!output->isA<TensorView>()) continue;
        const bool read_outside = std::any_of(output->uses().begin(), output->uses().end(),
                                              [this](const Expr* use) { return !has(use, kExpr); });
        if (read_outside) others.push_back(output);
      }
    }
    std::sort(others.begin(), others.end(),
              [](const Val* a, const Val* b) { return a->id() < b->id(); });
    for (const Val* output : others) addOutput(segment, map, output);
  }

  // The segment's Exprs and the scalar Exprs copied for it, producers first (Kahn's algorithm,
  // ties by id, so the order is deterministic).
  std::vector<const Expr*> topologicalOrder() const {
    std::vector<const Expr*> all = exprs_;
    all.insert(all.end(), scalar_exprs_.begin(), scalar_exprs_.end());
    std::unordered_map<const Expr*, int64_t> waiting;
    std::unordered_map<const Expr*, std::vector<const Expr*>> consumers;
    for (const Expr* expr : all) waiting[expr] = 0;
    for (const Expr* expr : all) {
      for (const Val* input : expr->inputs()) {
        const Expr* def = input->definition();
        if (def == nullptr || !waiting.count(def)) continue;
        ++waiting[expr];
        consumers[def].push_back(expr);
      }
    }
    const auto later = [](const Expr* a, const Expr* b) { return a->id() > b->id(); };
    std::priority_queue<const Expr*, std::vector<const Expr*>, decltype(later)> ready(later);
    for (const Expr* expr : all) {
      if (waiting[expr] == 0) ready.push(expr);
    }
    std::vector<const Expr*> order;
    while (!ready.empty()) {
      const Expr* expr = ready.top();
      ready.pop();
      order.push_back(expr);
      for (const Expr* consumer : consumers[expr]) {
        if (--waiting[consumer] == 0) ready.push(consumer);
      }
    }
    BRAZE_INTERNAL_CHECK(order.size() == all.size())
        << "extractSegment: the Exprs form a cycle; please report";
    return order;
  }

  const Fusion& original_;
  std::vector<uint8_t> roles_;
  std::vector<const Expr*> exprs_;
  std::vector<const Expr*> scalar_exprs_;
  std::vector<const Statement*> chosen_;
  std::vector<const TensorView*> input_tensors_;
  std::vector<const Scalar*> scalar_inputs_;
  std::vector<const Scalar*> pending_scalars_;
};

}  // namespace

Segment extractSegment(const Fusion& original, std::span<const Expr* const> exprs) {
  return SegmentExtractor(original, exprs).extract(std::nullopt);
}

Segment extractSegment(const Fusion& original, std::span<const Expr* const> exprs,
                       std::span<const Val* const> outputs) {
  return SegmentExtractor(original, exprs).extract(outputs);
}

}  // namespace braze
