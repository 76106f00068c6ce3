#include "kernel_shapes.h"

#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"

namespace braze::inner_outer {

void mergeRows(TensorView* tv) {
  while (tv->nLoopDims() > 2) tv->merge(0, 1);
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
