// build-loop-nests: one statement per tensor Expr, placed in the loops of its output's loop
// domain. Consecutive statements share the loops their outputs share through inlining (the
// loop groups of the IdGraph), so a producer inlined at position k is computed inside the
// first k loops of its consumer:
//
//   T1 = exp(T0) inlined at 1 into T2 = add(T1, T0):
//     for i2 in 0..T0.size[0]:            (the shared loop, promoted from T2)
//       for i3 in 0..T0.size[1]: T1[i3] = exp(T0[...])
//       for i4 in 0..T0.size[1]: T2[...] = T1[i4] + T0[...]
//
// Thread and block dims and loops of extent 1 open no loop. A reduction's accumulator is
// initialized right before the first of its reduction loops opens (which may happen while a
// producer inlined into it is placed), with loops of its own over any iteration axes after it.
// A scan's running value is a register its serial loop carries (declared and set to the
// identity before the loop): the step combines it with the input and stores it each iteration.

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "braze/ops/elementwise.h"
#include "lower/passes.h"

namespace braze::lower {

namespace {

struct Planned {
  int64_t group = -1;
  kir::NestPosition position;
  bool is_loop = false;
  kir::Value extent;
  ParallelType type = ParallelType::Serial;
};

struct Open {
  int64_t group = -1;
  kir::NestPosition position;
  kir::ForLoop* loop = nullptr;
};

struct InitAnchor {
  const Expr* expr = nullptr;
  std::vector<int64_t> prefix;  // loop groups of the positions before the first reduction axis
  int64_t group = -1;           // loop group of the first reduction axis
  bool done = false;
};

bool isReductionExpr(const Expr& expr) {
  const OpFamily family = familyOf(expr.op());
  return family == OpFamily::Reduction || family == OpFamily::Welford;
}

class NestBuilder {
 public:
  NestBuilder(const LowerContext& ctx, kir::Kernel& kernel)
      : ctx_(ctx), kernel_(kernel), live_(ctx.exprs().begin(), ctx.exprs().end()) {}

  void run() {
    for (const Expr* expr : ctx_.exprs()) {
      if (isReductionExpr(*expr)) registerInit(expr);
    }
    for (const Expr* expr : placementOrder()) place(expr);
  }

 private:
  // Producers before consumers, arranged so that the loops a consumer shares with its
  // producers stay open from the first of them to the consumer. Relative to a consumer C, each
  // Expr X of C's (not yet placed) producer closure has a depth: the fewest loops any path
  // from X to C shares (the smallest inline position along it). Everything of depth d is placed
  // before anything deeper, and within a depth the same rule applies recursively from the
  // Exprs that feed something deeper:
  //
  //   T2 = mul(T4) inlined at 3 into T6 = add(T2, T5); T4, T5 inlined at 2: T4, T5, T2, T6
  //   (T5 first, or placing it would close the loop T2 and T6 share).
  std::vector<const Expr*> placementOrder() const {
    std::vector<const Expr*> order;
    std::set<const Expr*> placed;
    for (const Val* output : ctx_.fusion().outputs()) {
      if (output->definition() != nullptr) emitWithProducers(output->definition(), placed, order);
    }
    for (const Expr* expr : ctx_.exprs()) emitWithProducers(expr, placed, order);
    return order;
  }

  std::vector<const Expr*> producerExprs(const Expr* expr) const {
    std::vector<const Expr*> producers;
    for (const Val* v : expr->inputs()) {
      const auto* tv = v->dynCast<TensorView>();
      if (tv == nullptr || tv->definition() == nullptr) continue;
      if (std::find(producers.begin(), producers.end(), tv->definition()) == producers.end())
        producers.push_back(tv->definition());
    }
    return producers;
  }

  void emitWithProducers(const Expr* consumer, std::set<const Expr*>& placed,
                         std::vector<const Expr*>& order) const {
    if (placed.count(consumer)) return;
    // The unplaced closure, in kernel (topological) order.
    std::set<const Expr*> closure;
    std::vector<const Expr*> stack = producerExprs(consumer);
    while (!stack.empty()) {
      const Expr* e = stack.back();
      stack.pop_back();
      if (placed.count(e) || !closure.insert(e).second) continue;
      for (const Expr* p : producerExprs(e)) stack.push_back(p);
    }
    std::vector<const Expr*> members;
    for (const Expr* e : ctx_.exprs()) {
      if (closure.count(e)) members.push_back(e);
    }
    // Depth relative to `consumer`, consumers before producers.
    constexpr int64_t kUnbounded = 1 << 30;
    std::map<const Expr*, int64_t> depth;
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
      const Expr* e = *it;
      const int64_t own = ctx_.graph().inlinePositionOf(outputOf(e));
      int64_t d = kUnbounded;
      for (const Val* out : e->outputs()) {
        for (const Expr* use : out->uses()) {
          if (use == consumer) d = std::min(d, own);
          auto found = depth.find(use);
          if (found != depth.end()) d = std::min(d, std::min(own, found->second));
        }
      }
      depth[e] = d;
    }
    std::set<int64_t> levels;
    for (const auto& [e, d] : depth) levels.insert(d);
    for (int64_t level : levels) {
      for (const Expr* e : members) {
        if (depth[e] != level || placed.count(e)) continue;
        // A root of the level feeds the consumer or something deeper.
        bool root = false;
        for (const Val* out : e->outputs()) {
          for (const Expr* use : out->uses()) {
            if (use == consumer || (depth.count(use) && depth[use] != level)) root = true;
          }
        }
        if (root) emitWithProducers(e, placed, order);
      }
    }
    // A producer's placeOtherReaders may have placed `consumer` already.
    if (!placed.insert(consumer).second) return;
    order.push_back(consumer);
    placeOtherReaders(consumer, placed, order);
  }

  // A tensor inlined into several consumers (sum and max of one cached input) is computed once
  // inside the loops they share, so every reader must run in those loops while they are open:
  // the readers of `consumer`'s inputs whose other inputs are all placed go right after it.
  // When `consumer` is itself inlined deeper than such an input into a reader of its own
  // (T8 = mul(T7, T5) inlined into sum(T8), T5 also read by T15), that reader comes first, or
  // placing T15 between them would close the loops T8 shares with its sum.
  void placeOtherReaders(const Expr* consumer, std::set<const Expr*>& placed,
                         std::vector<const Expr*>& order) const {
    for (const Val* input : consumer->inputs()) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr || tv->definition() == nullptr || ctx_.graph().inlinePositionOf(tv) == 0)
        continue;
      if (ctx_.graph().inlinePositionOf(outputOf(consumer)) > ctx_.graph().inlinePositionOf(tv)) {
        for (const Val* out : consumer->outputs()) {
          for (const Expr* use : out->uses()) {
            if (!placed.count(use) && live_.count(use) &&
                !waitsForALaterReader(use, outputOf(consumer), placed))
              emitWithProducers(use, placed, order);
          }
        }
      }
      for (const Expr* use : tv->uses()) {
        if (placed.count(use) || !live_.count(use) || waitsForALaterReader(use, tv, placed))
          continue;
        const std::vector<const Expr*> producers = producerExprs(use);
        const bool ready = std::all_of(producers.begin(), producers.end(),
                                       [&](const Expr* p) { return placed.count(p) > 0; });
        if (ready) emitWithProducers(use, placed, order);
      }
    }
  }

  static const TensorView* outputOf(const Expr* expr) { return expr->output(0)->as<TensorView>(); }

  // Whether `use`, a reader of `tv` inlined deeper than `tv`, feeds (through readers inlined
  // deeper than `tv` too) a reader that other unplaced statements feed: placed early, `use`'s
  // loops would close before that reader runs (nvFuser's layer norm backward subtracts the mean
  // again for dx, after the row sums); placed with that reader instead, it still runs inside
  // `tv`'s loops, which enclose the whole chain.
  bool waitsForALaterReader(const Expr* use, const TensorView* tv,
                            const std::set<const Expr*>& placed) const {
    const int64_t position = ctx_.graph().inlinePositionOf(tv);
    if (ctx_.graph().inlinePositionOf(outputOf(use)) <= position) return false;
    std::vector<const Expr*> chain = {use};
    while (!chain.empty()) {
      const Expr* link = chain.back();
      chain.pop_back();
      for (const Expr* reader : outputOf(link)->uses()) {
        if (!live_.count(reader)) continue;
        for (const Expr* producer : producerExprs(reader)) {
          if (producer != link && !placed.count(producer)) return true;
        }
        if (ctx_.graph().inlinePositionOf(outputOf(reader)) > position) chain.push_back(reader);
      }
    }
    return false;
  }

  std::vector<Planned> plan(const TensorView* out) const {
    std::vector<Planned> planned;
    for (int64_t j = 0; j < out->nLoopDims(); ++j) planned.push_back(planAxis(out, j));
    return planned;
  }

  Planned planAxis(const TensorView* out, int64_t j) const {
    const IterDomain* id = out->loopAxis(j);
    const IterDomain* promoted = ctx_.graph().promoted(id);
    Planned p;
    p.group = ctx_.graph().loopGroup(id);
    p.position.id = promoted;
    p.type = promoted->parallelType();
    if (isThreadDim(p.type) || isBlockDim(p.type)) {
      p.position.index = ctx_.parallelIndex(p.type);
      return p;
    }
    p.extent = ctx_.extentOf(promoted);
    // An unswitched axis keeps its loop even of extent 1: the unswitch pass needs the node.
    if (p.extent.constantValue() == 1 && p.type != ParallelType::Unswitch) {
      p.position.index = kir::constant(0);
      return p;
    }
    p.is_loop = true;
    return p;
  }

  int64_t sharedPrefix(const std::vector<Planned>& planned) const {
    size_t c = 0;
    while (c < planned.size() && c < stack_.size() && stack_[c].group == planned[c].group) ++c;
    return static_cast<int64_t>(c);
  }

  kir::Scope& currentScope() {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->loop != nullptr) return it->loop->body;
    }
    return kernel_.body;
  }

  kir::ForLoop* newLoop(Planned& p, kir::Scope& scope) {
    auto loop = std::make_unique<kir::ForLoop>();
    const int64_t n = kernel_.next_name++;
    loop->index =
        kir::symbol("i" + std::to_string(n),
                    {.role = kir::SymbolRole::LoopIndex, .bound = p.extent, .order = 100 + n});
    // An unswitched axis of extent 1 is a loop only as a marker for the unswitch pass.
    if (p.extent.constantValue() == 1) loop->index = kir::constant(0);
    loop->extent = p.extent;
    loop->parallel_type = p.type;
    loop->id = p.position.id;
    loop->unroll = p.type == ParallelType::Unroll || p.type == ParallelType::Vectorize;
    // Only serial loops run backwards: an unrolled loop's order is the compiler's.
    loop->reversed = p.type == ParallelType::Serial && p.position.id->isReversed();
    p.position.index = loop->index;
    kir::ForLoop* raw = loop.get();
    scope.push_back(std::move(loop));
    return raw;
  }

  void open(Planned p, const std::vector<Planned>& planned, size_t j) {
    emitAnchoredInits(planned, j);
    Open entry{p.group, p.position, nullptr};
    if (p.is_loop) {
      entry.loop = newLoop(p, currentScope());
      entry.position = p.position;
    }
    stack_.push_back(entry);
  }

  void place(const Expr* expr) {
    const TensorView* out = outputOf(expr);
    std::vector<Planned> planned = plan(out);
    const auto shared = static_cast<size_t>(sharedPrefix(planned));
    stack_.resize(shared);
    for (size_t j = shared; j < planned.size(); ++j) open(planned[j], planned, j);
    std::vector<kir::NestPosition> nest;
    for (const Open& o : stack_) nest.push_back(o.position);
    if (isReductionExpr(*expr)) {
      emitReduction(expr, nest);
    } else {
      emitTensorOp(expr, nest);
      if (familyOf(expr->op()) == OpFamily::Scan) carryScan(expr);
    }
  }

  // ---- scans ----

  // The scan's loop carries its running value; the step just placed in it (the last statement
  // of the current scope) reads and updates that value. One register per thread holds it, so
  // the scan axis must be one serial loop with no serial loop inside it.
  void carryScan(const Expr* expr) {
    const TensorView* out = outputOf(expr);
    const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
    const IterDomain* scanned = out->logical()[dim];
    int64_t axis = -1;
    for (int64_t j = 0; j < out->nLoopDims(); ++j) {
      if (out->loopAxis(j) == scanned) axis = j;
    }
    BRAZE_USER_CHECK(axis >= 0)
        << "lowering: " << expr->op() << " computing " << out->name() << " scans dim " << dim
        << ", which the schedule split or merged; a scan runs along one serial loop, so leave "
           "that dim of "
        << out->name() << " untransformed (transform the others)";
    const Open& scan_loop = stack_[static_cast<size_t>(axis)];
    const ParallelType type = scan_loop.position.id->parallelType();
    BRAZE_USER_CHECK(type == ParallelType::Serial || type == ParallelType::Unroll)
        << "lowering: " << describeAxis(out, axis) << " is the scan axis of " << expr->op()
        << " and is parallelized with " << type
        << "; each prefix needs the one before it, so the scan axis must stay a serial loop";
    BRAZE_USER_CHECK(!scan_loop.position.id->isReversed())
        << "lowering: " << describeAxis(out, axis) << " is the scan axis of " << expr->op()
        << " and runs reversed; each prefix needs the one before it, so the scan axis must run "
           "forwards (setReversed(false))";
    for (size_t k = static_cast<size_t>(axis) + 1; k < stack_.size(); ++k) {
      BRAZE_USER_CHECK(stack_[k].loop == nullptr)
          << "lowering: " << describeAxis(out, static_cast<int64_t>(k))
          << " is a serial loop inside the scan axis " << axis << " of " << out->name() << " ("
          << expr->op() << "); the running value is one register per thread, so the axes after "
          << "the scan axis must be thread- or block-parallel or of extent 1; reorder the scan "
             "axis innermost";
    }
    if (scan_loop.loop == nullptr) return;  // extent 1: the step stores its input
    const std::string name = "scan" + std::to_string(kernel_.next_name++);
    scan_loop.loop->carried.push_back({name, expr});
    currentScope().back()->as<kir::TensorOp>()->accumulator = name;
  }

  // ---- reductions ----

  static int64_t firstReductionAxis(const TensorView* out) {
    for (int64_t j = 0; j < out->nLoopDims(); ++j) {
      if (out->loopAxis(j)->isReduction()) return j;
    }
    return -1;
  }

  void registerInit(const Expr* expr) {
    const TensorView* out = outputOf(expr);
    const int64_t p = firstReductionAxis(out);
    if (p < 0) return;  // nothing is reduced (e.g. a 0-d input): a plain copy
    BRAZE_USER_CHECK(ctx_.graph().inlinePositionOf(out) <= p)
        << "lowering: " << out->name() << " is inlined at position "
        << ctx_.graph().inlinePositionOf(out) << ", past its reduction axis " << p << " ("
        << describeAxis(out, p)
        << "); a reduction can only be inlined up to its first reduction axis";
    InitAnchor anchor;
    anchor.expr = expr;
    for (int64_t j = 0; j < p; ++j)
      anchor.prefix.push_back(ctx_.graph().loopGroup(out->loopAxis(j)));
    anchor.group = ctx_.graph().loopGroup(out->loopAxis(p));
    anchors_.push_back(anchor);
  }

  void emitAnchoredInits(const std::vector<Planned>& planned, size_t j) {
    for (InitAnchor& anchor : anchors_) {
      if (anchor.done || anchor.prefix.size() != j || anchor.group != planned[j].group) continue;
      bool match = true;
      for (size_t k = 0; k < j; ++k) match = match && anchor.prefix[k] == stack_[k].group;
      if (!match) continue;
      anchor.done = true;
      emitInit(anchor.expr);
    }
  }

  void emitInit(const Expr* expr) {
    const TensorView* out = outputOf(expr);
    const auto p = static_cast<size_t>(firstReductionAxis(out));
    std::vector<kir::NestPosition> nest;
    for (size_t k = 0; k < p && k < stack_.size(); ++k) nest.push_back(stack_[k].position);
    kir::Scope* scope = &currentScope();
    for (int64_t j = static_cast<int64_t>(p); j < out->nLoopDims(); ++j) {
      if (out->loopAxis(j)->isReduction()) continue;
      Planned axis = planAxis(out, j);
      if (axis.is_loop) {
        kir::ForLoop* loop = newLoop(axis, *scope);
        scope = &loop->body;
      }
      nest.push_back(axis.position);
    }
    for (size_t o = 0; o < expr->outputs().size(); ++o) {
      auto init = std::make_unique<kir::InitOp>();
      init->expr = expr;
      init->output_index = static_cast<int64_t>(o);
      init->output.tv = expr->output(o)->as<TensorView>();
      init->nest = nest;
      scope->push_back(std::move(init));
    }
  }

  void emitReduction(const Expr* expr, const std::vector<kir::NestPosition>& nest) {
    const TensorView* out = outputOf(expr);
    for (const InitAnchor& anchor : anchors_) {
      BRAZE_INTERNAL_CHECK(anchor.expr != expr || anchor.done)
          << "lowering: the accumulator of " << out->name() << " was never initialized";
    }
    auto op = std::make_unique<kir::ReductionOp>();
    op->expr = expr;
    for (const Val* v : expr->outputs()) op->outputs.push_back({v->as<TensorView>(), {}});
    op->input.kind = kir::Operand::Kind::Tensor;
    op->input.access.tv = expr->input(0)->as<TensorView>();
    op->nest = nest;
    for (int64_t j = 0; j < out->nLoopDims(); ++j) {
      const IterDomain* id = out->loopAxis(j);
      if (!id->isReduction()) continue;
      switch (id->parallelType()) {
        case ParallelType::TIDx:
          op->block.x = true;
          break;
        case ParallelType::TIDy:
          op->block.y = true;
          break;
        case ParallelType::TIDz:
          op->block.z = true;
          break;
        case ParallelType::BIDx:
          op->grid.x = true;
          break;
        case ParallelType::BIDy:
          op->grid.y = true;
          break;
        case ParallelType::BIDz:
          op->grid.z = true;
          break;
        case ParallelType::Vectorize:
          BRAZE_USER_CHECK(false) << "lowering: " << describeAxis(out, j)
                                  << " is a reduction axis and cannot be vectorized; rFactor "
                                     "it into a serial partial reduction first";
          break;
        default:
          break;
      }
    }
    if (op->block.any() || op->grid.any()) {
      const int64_t bytes = expr->op() == OpKind::Welford ? 24 : sizeInBytes(out->dtype());
      kernel_.reduction_smem_bytes_per_thread =
          std::max(kernel_.reduction_smem_bytes_per_thread, std::max<int64_t>(bytes, 8));
    }
    if (op->grid.any()) {
      addWorkspace(*op);
    }
    currentScope().push_back(std::move(op));
  }

  // A grid reduction needs one partial result per block and thread, plus a semaphore per
  // group of blocks that reduce together; sized generously from the launch dims.
  void addWorkspace(kir::ReductionOp& op) {
    Fusion& fusion = ctx_.mutableFusion();
    const int64_t entry_bytes = op.expr->op() == OpKind::Welford ? 24 : 8;
    Val* slots = fusion.constantIndex(1);
    for (const kir::LaunchDim& dim : ctx_.launch()) {
      if (dim.used) slots = mul(Operand(slots), Operand(const_cast<Val*>(dim.size)));
    }
    Val* bytes = add(Operand(mul(Operand(slots), entry_bytes + 8)), 16);
    const auto index = static_cast<int64_t>(kernel_.parameters.size());
    kir::Parameter p;
    p.kind = kir::Parameter::Kind::Workspace;
    p.workspace_bytes = bytes;
    p.name = "workspace" + std::to_string(index);
    kernel_.parameters.push_back(p);
    op.workspace = index;
    op.grid_flag = "finished" + std::to_string(kernel_.next_name++);
  }

  void emitTensorOp(const Expr* expr, const std::vector<kir::NestPosition>& nest) {
    BRAZE_USER_CHECK(familyOf(expr->op()) != OpFamily::Contraction)
        << "lowering: " << expr->op() << " (computing " << outputOf(expr)->name()
        << ") has no generated-kernel implementation; contractions need a matmul scheduler";
    auto op = std::make_unique<kir::TensorOp>();
    op->expr = expr;
    op->output.tv = outputOf(expr);
    for (const Val* v : expr->inputs()) {
      kir::Operand operand;
      if (const auto* tv = v->dynCast<TensorView>()) {
        operand.kind = kir::Operand::Kind::Tensor;
        operand.access.tv = tv;
      } else {
        operand.kind = kir::Operand::Kind::Scalar;
        operand.scalar = v;
      }
      op->inputs.push_back(operand);
    }
    // Iota and the random factories compute from the element's position (its row-major
    // linear index in the output's logical domain), which indexing fills in.
    if (expr->op() == OpKind::Iota || expr->op() == OpKind::Uniform ||
        expr->op() == OpKind::Normal) {
      kir::Operand position;
      position.kind = kir::Operand::Kind::Index;
      op->inputs.push_back(position);
    }
    op->nest = nest;
    currentScope().push_back(std::move(op));
  }

  const LowerContext& ctx_;
  kir::Kernel& kernel_;
  std::set<const Expr*> live_;  // the Exprs the kernel computes
  std::vector<Open> stack_;
  std::vector<InitAnchor> anchors_;
};

}  // namespace

kir::Kernel buildLoopNests(kir::Kernel kernel, const LowerContext& ctx) {
  NestBuilder(ctx, kernel).run();
  return kernel;
}

}  // namespace braze::lower
