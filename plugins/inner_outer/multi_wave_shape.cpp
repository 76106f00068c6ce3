#include "kernel_shapes.h"

#include "braze/ir/iter_domain.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/persistent_buffer.h"
#include "braze/sched/transform_propagation.h"

namespace braze::inner_outer {

void scheduleMultiWave(Fusion& fusion, TensorView* reference, const InnerOuterParams& params) {
  // [rows, row] -> [ceil(V/t), rows, t, v]. The wave loop goes first so that tensors without
  // the rows dim (the float copy of a weight) share it with their consumers and are computed
  // one vector at a time inside it, rather than kept whole.
  mergeRows(reference);
  reference->split(1, params.vector_width);
  reference->split(1, params.threads_x);
  reference->reorder({{1, 0}, {0, 1}});
  propagateTransforms(reference);
  reference->parallelize(1, ParallelType::BIDx);
  reference->parallelize(2, ParallelType::TIDx);
  if (params.vector_width > 1) reference->parallelize(3, ParallelType::Unroll);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
  // What outlives a reduction is written to global memory and read back in the next wave loop.
  for (const PersistentBuffer& buffer : persistentBuffers(fusion)) {
    if (!fusion.isInput(buffer.tv) && !fusion.isOutput(buffer.tv))
      buffer.tv->setMemoryType(MemoryType::Global);
  }
}

// Multi-wave: a register tensor that its consumers cannot inline along the wave loop (the float
// copy of a weight, whose consumer has the extra row dim in front) would be a row-sized
// register array. It becomes a global intermediate: every block writes the same values, and
// each thread reads back only what it wrote itself.
void moveRowSizedRegistersToGlobal(Fusion& fusion) {
  for (TensorView* tv : fusion.allTensors()) {
    if (tv->memoryType() != MemoryType::Local || fusion.isInput(tv) || fusion.isOutput(tv))
      continue;
    for (int64_t j = tv->inlinePosition(); j < tv->nLoopDims(); ++j) {
      const IterDomain* id = tv->loopAxis(j);
      if (id->isReduction() || isThreadDim(id->parallelType()) || isBlockDim(id->parallelType()))
        continue;
      if (!id->extent()->constantInt()) {
        tv->setMemoryType(MemoryType::Global);
        break;
      }
    }
  }
}

}  // namespace braze::inner_outer
