#include "reduction_scheduler.h"

#include <algorithm>
#include <unordered_set>

#include "braze/error.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/outputs_problem.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/runtime_arguments.h"
#include "braze/sched/transform_propagation.h"
#include "braze/sched/unsupported_op_problem.h"
#include "reduction_extents.h"
#include "reduction_layout.h"

namespace braze::reduction {

namespace {

std::optional<std::string> refusedOp(OpKind op) {
  if (isElementwise(op)) return std::nullopt;
  switch (op) {
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Welford:
    case OpKind::Broadcast:
    case OpKind::Expand:
    case OpKind::Permute:
    case OpKind::Squeeze:
    case OpKind::Set:
      return std::nullopt;
    case OpKind::Cumsum:
    case OpKind::Cumprod:
    case OpKind::Cummax:
    case OpKind::Cummin:
      return "a scan carries a running value along its dim; use the scan scheduler";
    case OpKind::Matmul:
    case OpKind::Linear:
      return "matmul and linear need a tiled contraction; use a matmul scheduler";
    case OpKind::Reshape:
      return "reshape regroups dims, so the reduced and iteration dims cannot be followed "
             "through it";
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Cat:
    case OpKind::Select:
      return "its indices are shifted or guarded per tensor, which this scheduler does not "
             "handle yet";
    case OpKind::Gather:
    case OpKind::IndexSelect:
      return "it reads indices from a tensor, so its input is not accessed along the loop";
    case OpKind::Full:
    case OpKind::Iota:
    case OpKind::Uniform:
    case OpKind::Normal:
      return "factories are not scheduled by the reduction scheduler yet";
    default:
      return "this op is neither a reduction nor pointwise";
  }
}

// Reduction results the fusion returns are computed in registers and written by a copy, so
// that the cross-thread combine finishes before the single store.
void cacheReductionOutputs(Fusion& fusion) {
  for (Expr* expr : fusion.exprs()) {
    if (!isReductionExpr(expr)) continue;
    for (Val* output : expr->outputs()) {
      auto* tv = output->dynCast<TensorView>();
      if (tv != nullptr && fusion.isOutput(tv)) tv->cacheBefore();
    }
  }
}

// The first group's dims, then the second's, broadcast dims first within a group (their
// extent is 1, so they may go anywhere, and the fast dim ends last).
std::vector<int64_t> groupedOrder(const ReductionLayout& layout) {
  std::vector<int64_t> order;
  const std::vector<IterDomain*>& dims = layout.reference->logical();
  const auto append = [&](const std::vector<int64_t>& group) {
    for (const int64_t d : group)
      if (dims[d]->isBroadcast()) order.push_back(d);
    for (const int64_t d : group)
      if (!dims[d]->isBroadcast()) order.push_back(d);
  };
  append(layout.inner ? layout.iteration : layout.reduced);
  append(layout.inner ? layout.reduced : layout.iteration);
  return order;
}

// The reference's loop as [first group merged?, second group merged, vector?]; returns whether
// the first group is present.
bool mergeGroups(TensorView* reference, const ReductionLayout& layout, int64_t vector) {
  const std::vector<int64_t> order = groupedOrder(layout);
  std::vector<std::pair<int64_t, int64_t>> old_to_new;
  for (size_t k = 0; k < order.size(); ++k)
    old_to_new.emplace_back(order[k], static_cast<int64_t>(k));
  reference->reorder(old_to_new);
  const auto first =
      static_cast<int64_t>(layout.inner ? layout.iteration.size() : layout.reduced.size());
  const auto second =
      static_cast<int64_t>(layout.inner ? layout.reduced.size() : layout.iteration.size());
  // The vector is split off the innermost dim before merging, so that a vector never spans
  // two runs of a merged (possibly non-adjacent) group.
  if (vector > 1) reference->split(first + second - 1, vector);
  for (int64_t k = 1; k < first; ++k) reference->merge(0, 1);
  const int64_t at = first > 0 ? 1 : 0;
  for (int64_t k = 1; k < second; ++k) reference->merge(at, at + 1);
  return first > 0;
}

// Positions of the reference's loop axes by role; -1 when absent.
struct Axes {
  int64_t block_x = -1;
  int64_t rows = -1;  // inner: rows of I per block
  int64_t thread_x = -1;
  int64_t grid = -1;
  int64_t serial = -1;
  int64_t unswitch = -1;
  int64_t unroll = -1;
  int64_t thread_y = -1;  // outer: rows of R per block
  int64_t vector = -1;
};

//   [I?, R, v?] -> [BIDx I/ty, ty, BIDy g, serial, Unswitch 1, Unroll u, TIDx tx, v]
Axes splitInner(TensorView* ref, const ReductionParams& p, bool has_iteration) {
  const int64_t r = has_iteration ? 1 : 0;
  if (p.threads_x > 1) ref->split(r, p.threads_x);
  if (p.unroll > 1) ref->split(r, p.unroll);
  if (p.unswitch) ref->split(r, 1);
  if (p.grid_blocks > 1) ref->split(r, p.grid_blocks, /*inner_split=*/false);
  const bool rows = has_iteration && p.threads_y > 1;
  if (rows) ref->split(0, p.threads_y);
  Axes axes;
  int64_t at = 0;
  if (has_iteration) axes.block_x = at++;
  if (rows) axes.rows = at++;
  if (p.grid_blocks > 1) axes.grid = at++;
  axes.serial = at++;
  if (p.unswitch) axes.unswitch = at++;
  if (p.unroll > 1) axes.unroll = at++;
  if (p.threads_x > 1) axes.thread_x = at++;
  if (p.vector_width > 1) axes.vector = at++;
  return axes;
}

//   [R, I, v?] -> [BIDx I/tx, TIDx tx, BIDy g, serial, Unswitch 1, Unroll u, TIDy ty, v]
Axes splitOuter(TensorView* ref, const ReductionParams& p) {
  if (p.threads_x > 1) ref->split(1, p.threads_x);
  if (p.threads_y > 1) ref->split(0, p.threads_y);
  if (p.unroll > 1) ref->split(0, p.unroll);
  if (p.unswitch) ref->split(0, 1);
  if (p.grid_blocks > 1) ref->split(0, p.grid_blocks, /*inner_split=*/false);
  const int64_t reduced_axes = 1 + (p.threads_y > 1 ? 1 : 0) + (p.unroll > 1 ? 1 : 0) +
                               (p.unswitch ? 1 : 0) + (p.grid_blocks > 1 ? 1 : 0);
  std::vector<std::pair<int64_t, int64_t>> old_to_new = {{reduced_axes, 0}};
  if (p.threads_x > 1) old_to_new.emplace_back(reduced_axes + 1, 1);
  ref->reorder(old_to_new);
  Axes axes;
  int64_t at = 0;
  axes.block_x = at++;
  if (p.threads_x > 1) axes.thread_x = at++;
  if (p.grid_blocks > 1) axes.grid = at++;
  axes.serial = at++;
  if (p.unswitch) axes.unswitch = at++;
  if (p.unroll > 1) axes.unroll = at++;
  if (p.threads_y > 1) axes.thread_y = at++;
  if (p.vector_width > 1) axes.vector = at++;
  return axes;
}

void parallelizeAxes(TensorView* ref, const ReductionParams& p, const Axes& axes) {
  const auto bind = [&](int64_t axis, ParallelType type) {
    if (axis >= 0) ref->parallelize(axis, type);
  };
  bind(axes.block_x, ParallelType::BIDx);
  // One row per thread (no threads along R): the rows take TIDx, the coalescing dim.
  bind(axes.rows, p.threads_x > 1 ? ParallelType::TIDy : ParallelType::TIDx);
  bind(axes.thread_x, ParallelType::TIDx);
  bind(axes.grid, ParallelType::BIDy);
  bind(axes.unswitch, ParallelType::Unswitch);
  bind(axes.unroll, ParallelType::Unroll);
  bind(axes.thread_y, ParallelType::TIDy);
}

// Each thread's serial, unrolled and (inner) vector part is reduced into registers first; the
// reduction itself then combines one partial per thread across threads and blocks.
void rFactorSerialParts(const ReductionLayout& layout, const ReductionParams& p, const Axes& axes) {
  const bool across_threads = axes.grid >= 0 || (p.inner ? axes.thread_x >= 0 : axes.thread_y >= 0);
  if (!across_threads) return;
  std::vector<int64_t> serial = {axes.serial};
  if (axes.unswitch >= 0) serial.push_back(axes.unswitch);
  if (axes.unroll >= 0) serial.push_back(axes.unroll);
  if (p.inner && axes.vector >= 0) serial.push_back(axes.vector);
  for (TensorView* tv : layout.reductions) {
    // Welford's partials (avg, m2, n) cannot be rFactored yet; the lowering accumulates per
    // thread before merging across threads anyway.
    if (tv->definition()->op() == OpKind::Welford) continue;
    for (const int64_t axis : serial) {
      BRAZE_INTERNAL_CHECK(axis < tv->nLoopDims() && tv->loopAxis(axis)->isReduction())
          << "reduction schedule: loop axis " << axis << " of " << tv->name()
          << " is not the reduction axis the reference has there; please report";
    }
    tv->rFactor(serial);
  }
}

// Tensors computed before the reductions (cached inputs, casts, x * x) that several
// reductions read, directly or through other such tensors, are computed once, inside the loops
// those reductions share: sum and max of one tensor, or var and sum(x * x), accumulate in the
// same loop nest. inlineMost keeps a tensor with several consumers outside loops its consumers
// do not already share, which a softmax needs (one consumer runs after the reduction) but this
// kernel does not: here every consumer runs inside the reduction loops.
void inlineIntoSharedReductions(Fusion& fusion) {
  // Tensors some reduction is computed from, and the reductions themselves.
  std::unordered_set<const TensorView*> before_reductions;
  std::vector<const TensorView*> stack;
  for (Expr* expr : fusion.exprs()) {
    if (!isReductionExpr(expr)) continue;
    for (Val* output : expr->outputs()) before_reductions.insert(output->as<TensorView>());
    stack.push_back(expr->output(0)->as<TensorView>());
  }
  while (!stack.empty()) {
    const TensorView* tv = stack.back();
    stack.pop_back();
    for (const TensorView* producer : producersOf(tv)) {
      if (before_reductions.insert(producer).second) stack.push_back(producer);
    }
  }
  std::vector<TensorView*> shared;
  for (TensorView* tv : fusion.allTensors()) {
    if (fusion.isInput(tv) || tv->definition() == nullptr || isReductionExpr(tv->definition()) ||
        !before_reductions.count(tv))
      continue;
    const std::vector<TensorView*> consumers = consumersOf(tv);
    const bool inside = std::all_of(consumers.begin(), consumers.end(),
                                    [&](TensorView* c) { return before_reductions.count(c) > 0; });
    if (consumers.size() > 1 && inside) shared.push_back(tv);
  }
  inlineMost(fusion);
  for (TensorView* tv : shared) {
    const int64_t position = maxInlinePosition(tv);
    if (position > tv->inlinePosition()) inlineAt(tv, position);
  }
}

}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  if (std::optional<std::string> problem = outputsProblem(fusion)) return problem;
  if (std::optional<std::string> problem = unsupportedOpProblem(fusion, refusedOp)) return problem;
  const std::vector<Expr*> exprs = fusion.exprs();
  if (std::none_of(exprs.begin(), exprs.end(), isReductionExpr)) {
    return "the fusion has no reduction; the pointwise scheduler handles reduction-free "
           "fusions";
  }
  return layoutProblem(fusion);
}

std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) {
  if (std::optional<std::string> problem = argumentProblem(fusion, info.arguments)) return problem;
  const ReductionLayout layout = reductionLayout(fusion);
  std::vector<std::optional<int64_t>> extents;
  try {
    extents = referenceExtents(fusion, layout, info);
  } catch (const Error& error) {
    return std::string("the arguments' sizes contradict the fusion: ") + error.what();
  }
  for (size_t d = 0; d < extents.size(); ++d) {
    if (!extents[d]) {
      return "dim " + std::to_string(d) + " of the reduction " + layout.reference->name() +
             " depends on a scalar input whose value was not given";
    }
    if (*extents[d] == 0) {
      return "dim " + std::to_string(d) + " of the reduction " + layout.reference->name() +
             " has size 0: there is nothing to launch; handle empty tensors before scheduling";
    }
  }
  return std::nullopt;
}

void schedule(Fusion& fusion, const ReductionParams& params) {
  cacheReductionOutputs(fusion);
  const ReductionLayout layout = reductionLayout(fusion);
  BRAZE_USER_CHECK(params.inner == layout.inner)
      << "reduction schedule: the params are for an " << (params.inner ? "inner" : "outer")
      << " reduction, but " << layout.reference->name() << " reduces "
      << (layout.inner ? "the innermost dim in memory (inner)" : "outer dims (outer)")
      << "; compute the params for this fusion";
  BRAZE_USER_CHECK(params.threads_x * params.threads_y <= 1024)
      << "reduction schedule: threads_x " << params.threads_x << " x threads_y " << params.threads_y
      << " exceeds 1024 threads per block; compute the params again";

  // Vectors move from global memory to registers through cached copies.
  std::vector<TensorView*> vector_caches;
  if (params.vector_width > 1) {
    for (TensorView* input : vectorizableInputs(fusion, layout))
      vector_caches.push_back(input->cacheAfter());
  }

  TensorView* reference = layout.reference;
  const bool has_iteration = mergeGroups(reference, layout, params.vector_width);
  BRAZE_USER_CHECK(params.inner || has_iteration)
      << "reduction schedule: an outer reduction needs an iteration dim; please report";
  const Axes axes =
      params.inner ? splitInner(reference, params, has_iteration) : splitOuter(reference, params);
  propagateTransforms(reference);
  parallelizeAxes(reference, params, axes);
  propagateParallelTypes(reference);
  rFactorSerialParts(layout, params, axes);
  keepIntermediatesInRegisters(fusion);
  for (TensorView* cache : vector_caches) cache->parallelize(-1, ParallelType::Vectorize);
  inlineIntoSharedReductions(fusion);
}

}  // namespace braze::reduction
