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

// Whether every op between `tv` and the tensors `ends` says its chain stops at is cheap to
// recompute (fusion inputs always end it).
template <typename Ends>
bool cheapChain(const TensorView* tv, const Ends& ends) {
  const Expr* definition = tv->definition();
  if (definition == nullptr || ends(tv)) return true;
  if (!cheapToRecompute(definition->op())) return false;
  return std::all_of(definition->inputs().begin(), definition->inputs().end(), [&](const Val* v) {
    const auto* producer = v->dynCast<TensorView>();
    return producer == nullptr || cheapChain(producer, ends);
  });
}

}  // namespace

void keepOnlyInputCaches(Fusion& fusion, const std::vector<TensorView*>& caches,
                         bool opaque_row_values) {
  const std::vector<const TensorView*> stop(caches.begin(), caches.end());
  // What recomputeFor copies: back to the caches, through everything recomputable.
  const auto ends = [&](const TensorView* tv) {
    return std::find(stop.begin(), stop.end(), tv) != stop.end() || !isRecomputable(tv);
  };
  const size_t tensors_before = fusion.allTensors().size();
  recomputeRereadBuffers(
      fusion, [&](const PersistentBuffer& buffer) { return cheapChain(buffer.tv, ends); }, stop);
  if (!opaque_row_values) return;
  // The copies are the tensors created since (allTensors is in creation order); their per-row
  // values (fewer dims that are not broadcasts than the rows) become opaque to the compiler.
  const auto varying_dims = [](const TensorView* tv) {
    return std::count_if(tv->logical().begin(), tv->logical().end(),
                         [](const IterDomain* id) { return !id->isBroadcast(); });
  };
  const std::vector<TensorView*> tensors = fusion.allTensors();
  int64_t row_dims = 0;
  for (const TensorView* tv : tensors) row_dims = std::max<int64_t>(row_dims, varying_dims(tv));
  for (size_t i = tensors_before; i < tensors.size(); ++i) {
    if (varying_dims(tensors[i]) < row_dims) fusion.setOpaqueToCompiler(tensors[i]);
  }
}

bool keepsDearBuffers(const Fusion& fusion) {
  const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
  return std::any_of(buffers.begin(), buffers.end(), [](const PersistentBuffer& buffer) {
    // The per-element work only: per-row values (a mean, through its broadcast) end the chain,
    // however they were computed (schedule() turns a mean's division into a product later).
    const int64_t rank = buffer.tv->rank();
    return !cheapChain(buffer.tv, [rank](const TensorView* tv) { return tv->rank() < rank; });
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
