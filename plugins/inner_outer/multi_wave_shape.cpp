#include "kernel_shapes.h"

#include <algorithm>
#include <unordered_map>

#include "braze/ir/iter_domain.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/persistent_buffer.h"
#include "braze/sched/recompute.h"
#include "braze/sched/transform_propagation.h"

namespace braze::inner_outer {

// A row does not fit on chip, so a value read on both sides of a reduction is either written
// to global memory and read back, or computed again from the inputs. Computing it again reads
// the inputs once more (a recently read row mostly hits L2) and writes nothing, where a float
// intermediate of a bf16 row wrote and read back four times the input's bytes. Each round
// gives the rereading uses of one buffer their own copy of its computation, from the fusion
// inputs and the finished reductions (registers):
//
//   T1 = cast(T10); max(T1); T4 = T1 - max      ->  T1 = cast(T10); max(T1);
//                                                   T4 = cast(T10') - max, T10' = set(T0)
//
// so the copy's input cache is read in its own wave loop. A buffer that is not computed by
// elementwise ops, casts and broadcasts (none is today) would stay one.
void recomputePersistentBuffers(Fusion& fusion) {
  recomputeRereadBuffers(fusion, [](const PersistentBuffer&) { return true; });
}

void scheduleMultiWave(Fusion& fusion, TensorView* reference, const InnerOuterParams& params) {
  // [rows, row] -> [ceil(V/(u t)), rows, u, t, v] (no u axis when u is 1). The wave loop goes
  // first so that tensors without the rows dim (the float copy of a weight) share it with
  // their consumers and are computed one vector at a time inside it, rather than kept whole.
  const bool unrolled = params.wave_unroll > 1;
  mergeRows(reference);
  reference->split(1, params.vector_width);
  reference->split(1, params.threads_x);
  if (unrolled) reference->split(1, params.wave_unroll);
  reference->reorder({{1, 0}, {0, 1}});
  propagateTransforms(reference);
  reference->parallelize(1, ParallelType::BIDx);
  const int64_t tidx = unrolled ? 3 : 2;
  // The u vectors of a wave iteration are indexed with constants: their loads can all be
  // issued before the first is used (loadWavesFirst).
  if (unrolled) reference->parallelize(2, ParallelType::Unroll);
  reference->parallelize(tidx, ParallelType::TIDx);
  if (params.vector_width > 1) reference->parallelize(tidx + 1, ParallelType::Unroll);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
  // What outlives a reduction and could not be recomputed is written to global memory and
  // read back in the next wave loop, by the thread that wrote it.
  for (const PersistentBuffer& buffer : persistentBuffers(fusion)) {
    if (!fusion.isInput(buffer.tv) && !fusion.isOutput(buffer.tv))
      buffer.tv->setMemoryType(MemoryType::Global);
  }
}

// inlineMost puts an input's cache inside the unrolled loop, next to its reader: one load,
// then its use, u times. Computed just outside that loop instead, the cache holds the u
// vectors of a wave iteration and all u loads are in flight before the first is used; a
// store in between (the output's) would otherwise keep the compiler from moving the later
// loads up, as it cannot tell the output from the input.
void loadWavesFirst(const std::vector<TensorView*>& caches) {
  for (TensorView* cache : caches) {
    for (int64_t j = 0; j < cache->nLoopDims(); ++j) {
      if (cache->loopAxis(j)->parallelType() != ParallelType::Unroll) continue;
      if (j < cache->inlinePosition()) inlineAt(cache, j);
      break;
    }
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

// Each wave loop reads the row again; the wave loops after a reduction run in the other
// direction from the one before, so that a loop starts on the vectors the previous one read
// last, which are the likeliest still in L2 (softmax fp32, rows of 65536: 59 -> 64% of copy on
// an H200; rows of 262144: 51 -> 53%). A tensor's wave loop is the number of reductions its
// value depends on, or its reader's, where it is inlined into that reader (an input cache
// recomputed for a later loop).
void alternateWaveDirections(Fusion& fusion) {
  std::unordered_map<const TensorView*, int64_t> rounds;
  const std::vector<Expr*> exprs = fusion.exprs();
  for (const Expr* expr : exprs) {
    int64_t round = 0;
    for (const Val* input : expr->inputs()) {
      const auto* producer = input->dynCast<TensorView>();
      if (producer == nullptr) continue;
      const auto found = rounds.find(producer);
      const int64_t before = found == rounds.end() ? 0 : found->second;
      round = std::max(round, before + (producer->hasReduction() ? 1 : 0));
    }
    for (const Val* output : expr->outputs()) {
      if (const auto* tv = output->dynCast<TensorView>()) rounds[tv] = round;
    }
  }
  std::unordered_map<const TensorView*, int64_t> loop_of;
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* expr = *it;
    for (Val* output : expr->outputs()) {
      auto* tv = output->dynCast<TensorView>();
      if (tv == nullptr) continue;
      int64_t loop = rounds[tv];
      if (tv->inlinePosition() >= 1) {
        for (const Expr* use : tv->uses()) {
          const auto* reader = use->output(0)->dynCast<TensorView>();
          if (reader != nullptr && loop_of.count(reader) != 0) {
            loop = loop_of[reader];
            break;
          }
        }
      }
      loop_of[tv] = loop;
      IterDomain* wave = tv->nLoopDims() > 0 ? tv->loopAxis(0) : nullptr;
      if (wave != nullptr && wave->parallelType() == ParallelType::Serial && !wave->isBroadcast())
        wave->setReversed(loop % 2 == 1);
    }
  }
}

}  // namespace braze::inner_outer
