#include "kernel_shapes.h"

#include "braze/ir/tensor_view.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/transform_propagation.h"

namespace braze::inner_outer {

namespace {
constexpr int64_t kWarpSize = 32;
}  // namespace

int64_t paddedRowThreads(int64_t threads_x) {
  return threads_x > kWarpSize ? (threads_x + kWarpSize - 1) / kWarpSize * kWarpSize : threads_x;
}

int64_t launchedThreadsX(const InnerOuterParams& params) {
  return params.row_blocks > 0 ? paddedRowThreads(params.threads_x) : params.threads_x;
}

// Inner-outer: [rows, row] -> [BIDx G, ceil(rows/(G u r)), Unroll u, TIDy r, Unroll batch, TIDx,
// v] (without the u dim when u is 1, without the TIDy dim when r is 1). Each iteration of the
// row loop works on u r rows at once: u per thread (their loads all issued before the first
// row's reductions: loadRowsFirst), one per threadIdx.y, so that u r rows' loads are in flight
// per block between the barriers of the row reductions. Each column sum is split (rFactor) into
// a per-thread serial sum over the thread's rows, kept in registers next to the rows' buffers
// and shared by the u rows, then a block reduction over threadIdx.y and a grid reduction across
// the G blocks.
void scheduleInnerOuter(Fusion& fusion, TensorView* reference, const InnerOuterParams& params,
                        const std::vector<TensorView*>& column_sums) {
  const bool stacked = params.rows_per_block > 1;
  const bool unrolled = params.rows_per_thread > 1;
  reference->split(1, params.vector_width);
  reference->split(1, params.persistent_batch, /*inner_split=*/false);
  // A row of threads that is not whole warps (rows of 1000: 125 or 250 threads) is padded to
  // them, the extra threads predicated off: the block reductions over threadIdx.x then take
  // warp shuffles and one round through shared memory instead of a tree of barriers.
  if (paddedRowThreads(params.threads_x) != params.threads_x) {
    reference->split(2, kWarpSize);
    reference->merge(2, 3);
  }
  if (stacked) reference->split(0, params.rows_per_block);
  if (unrolled) reference->split(0, params.rows_per_thread);
  reference->split(0, params.row_blocks, /*inner_split=*/false);
  propagateTransforms(reference);
  int64_t next = 2;  // the first dim inside the row loop
  reference->parallelize(0, ParallelType::BIDx);
  if (unrolled) reference->parallelize(next++, ParallelType::Unroll);
  if (stacked) reference->parallelize(next++, ParallelType::TIDy);
  reference->parallelize(next, ParallelType::Unroll);
  reference->parallelize(next + 1, ParallelType::TIDx);
  if (params.vector_width > 1) reference->parallelize(next + 2, ParallelType::Unroll);
  propagateParallelTypes(reference);
  keepIntermediatesInRegisters(fusion);
  for (TensorView* column_sum : column_sums) {
    std::vector<int64_t> per_thread = {1};
    if (unrolled) per_thread.push_back(2);
    column_sum->rFactor(per_thread)
        ->setMemoryType(params.shared_column_partials != 0 ? MemoryType::Shared
                                                           : MemoryType::Local);
    // [r BIDx, (r TIDy,) batch, TIDx, v] -> [batch, TIDx, v, (r TIDy,) r BIDx]: a grid
    // reduction per register element (the lowering groups them into one round of the blocks),
    // and the column sum's reader (the output) in the same iteration, where the finishing
    // block holds the result.
    const int64_t last = column_sum->nLoopDims() - 1;
    if (stacked) {
      column_sum->reorder({{0, last}, {1, last - 1}});
    } else {
      column_sum->reorder({{0, last}});
    }
  }
}

// inlineMost keeps a tensor read both by the row's ops and by a column sum's partial outside
// the row loop (its consumers do not share that loop yet); computing it inside the row loop
// [BIDx, row(, TIDy)] puts both consumers, and the partial's accumulation, in that one loop
// (the stacked rows' TIDy dim and a thread's unrolled rows belong to it: the rows of one
// iteration).
void inlineIntoRowLoop(Fusion& fusion, const InnerOuterParams& params) {
  const int64_t row_loop =
      2 + (params.rows_per_thread > 1 ? 1 : 0) + (params.rows_per_block > 1 ? 1 : 0);
  for (TensorView* tv : fusion.allTensors()) {
    if (fusion.isInput(tv) || tv->memoryType() == MemoryType::Global) continue;
    if (tv->inlinePosition() < row_loop && maxInlinePosition(tv) >= row_loop && !tv->hasReduction())
      inlineAt(tv, row_loop);
  }
}

void loadRowsFirst(const std::vector<TensorView*>& caches, const InnerOuterParams& params) {
  if (params.rows_per_thread <= 1) return;
  for (TensorView* cache : caches) {
    if (cache->inlinePosition() > 2) inlineAt(cache, 2);
  }
}

}  // namespace braze::inner_outer
