#include "kernel_shapes.h"

#include <algorithm>

#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/persistent_buffer.h"
#include "braze/sched/recompute.h"
#include "braze/sched/transform_propagation.h"

namespace braze::inner_outer {

void mergeRows(TensorView* tv) {
  while (tv->nLoopDims() > 2) tv->merge(0, 1);
}

namespace {

// Ops a thread computes again for about the cost of reading a register: casts, moves and the
// arithmetic of centering and scaling. Anything dearer (exp, division) stays a buffer: computed
// twice, softmax's exp made a bf16 softmax issue-bound (75% of copy instead of 97% on an H200).
bool cheapToRecompute(OpKind op) {
  switch (op) {
    case OpKind::Set:
    case OpKind::Cast:
    case OpKind::Broadcast:
    case OpKind::Neg:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
      return true;
    default:
      return false;
  }
}

// Whether every op between `tv` and the tensors it is computed from (those in `stop`, fusion
// inputs, reduction results) is cheap to recompute.
bool cheapChain(const TensorView* tv, const std::vector<const TensorView*>& stop) {
  if (std::find(stop.begin(), stop.end(), tv) != stop.end() || !isRecomputable(tv)) return true;
  const Expr* definition = tv->definition();
  if (!cheapToRecompute(definition->op())) return false;
  return std::all_of(definition->inputs().begin(), definition->inputs().end(), [&](const Val* v) {
    const auto* producer = v->dynCast<TensorView>();
    return producer == nullptr || cheapChain(producer, stop);
  });
}

}  // namespace

void keepOnlyInputCaches(Fusion& fusion, const std::vector<TensorView*>& caches) {
  const std::vector<const TensorView*> stop(caches.begin(), caches.end());
  recomputeRereadBuffers(
      fusion, [&](const PersistentBuffer& buffer) { return cheapChain(buffer.tv, stop); }, stop);
}

namespace {

// Whether every op computing `tv` from tensors of lower rank (per-row values such as a mean,
// through their broadcast) and fusion inputs is cheap to recompute.
bool cheapFromRowValues(const TensorView* tv, int64_t rank) {
  const Expr* definition = tv->definition();
  if (definition == nullptr || tv->rank() < rank) return true;
  if (!cheapToRecompute(definition->op())) return false;
  return std::all_of(definition->inputs().begin(), definition->inputs().end(), [&](const Val* v) {
    const auto* producer = v->dynCast<TensorView>();
    return producer == nullptr || cheapFromRowValues(producer, rank);
  });
}

}  // namespace

bool keepsDearBuffers(const Fusion& fusion) {
  const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
  return std::any_of(buffers.begin(), buffers.end(), [](const PersistentBuffer& buffer) {
    return !cheapFromRowValues(buffer.tv, buffer.tv->rank());
  });
}

void scheduleRegisters(Fusion& fusion, TensorView* reference, const InnerOuterParams& params) {
  // [rows, row] -> [batch, rows/r, r, ceil(V/batch), v]. The batch loop goes first so that
  // tensors without the rows dim (a weight's float copy) share it with their consumers: they
  // are loaded one vector at a time where they are used, after the reductions, instead of
  // being kept whole in registers from the start of the kernel.
  mergeRows(reference);
  reference->split(1, params.vector_width);
  reference->split(1, params.persistent_batch, /*inner_split=*/false);
  reference->split(0, params.rows_per_block);
  reference->reorder({{2, 0}});
  propagateTransforms(reference);
  reference->parallelize(1, ParallelType::BIDx);
  if (params.rows_per_block > 1) reference->parallelize(2, ParallelType::TIDy);
  // Unrolled loops index the register arrays with constants, so they stay in registers.
  reference->parallelize(0, ParallelType::Unroll);
  reference->parallelize(3, ParallelType::TIDx);
  if (params.vector_width > 1) reference->parallelize(4, ParallelType::Unroll);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
}

}  // namespace braze::inner_outer
