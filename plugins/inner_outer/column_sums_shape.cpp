#include "kernel_shapes.h"

#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"

namespace braze::inner_outer {

// Inner-outer: [rows, row] -> [BIDx G, ceil(rows/G), Unroll batch, TIDx, v]. Each column sum
// is split (rFactor) into a per-thread serial sum over the block's rows, kept in registers
// next to the row's buffers, and a grid reduction of those partials across the G blocks.
void scheduleInnerOuter(Fusion& fusion, TensorView* reference, const InnerOuterParams& params,
                        const std::vector<TensorView*>& column_sums) {
  reference->split(1, params.vector_width);
  reference->split(1, params.persistent_batch, /*inner_split=*/false);
  reference->split(0, params.row_blocks, /*inner_split=*/false);
  propagateTransforms(reference);
  reference->parallelize(0, ParallelType::BIDx);
  reference->parallelize(2, ParallelType::Unroll);
  reference->parallelize(3, ParallelType::TIDx);
  if (params.vector_width > 1) reference->parallelize(4, ParallelType::Unroll);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
  for (TensorView* column_sum : column_sums) {
    column_sum->rFactor({1})->setMemoryType(MemoryType::Local);
    // [r BIDx, batch, TIDx, v] -> [batch, TIDx, v, r BIDx]: the grid reduction runs once per
    // register element, and the column sum's reader (the output) in the same iteration, where
    // the finishing block holds the result.
    column_sum->reorder({{0, column_sum->nLoopDims() - 1}});
  }
}

// inlineMost keeps a tensor read both by the row's ops and by a column sum's partial outside
// the row loop (its consumers do not share that loop yet); computing it inside the row loop
// [BIDx, row] puts both consumers, and the partial's accumulation, in that one loop.
void inlineIntoRowLoop(Fusion& fusion) {
  for (TensorView* tv : fusion.allTensors()) {
    if (fusion.isInput(tv) || tv->memoryType() == MemoryType::Global) continue;
    if (tv->inlinePosition() < 2 && maxInlinePosition(tv) >= 2 && !tv->hasReduction())
      inlineAt(tv, 2);
  }
}

}  // namespace braze::inner_outer
