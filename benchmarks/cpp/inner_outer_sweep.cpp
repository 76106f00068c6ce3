// A sweep of the inner-outer scheduler's kernel shapes around its heuristics (variant_sweep.h
// has the harness and the options): persistent batch, rows per block, blocks per SM of the
// launch bounds, no launch bounds, fast math; for rows too long for registers, threads and
// vectors per wave iteration. It is how the heuristics' constants were chosen.
//
//   braze_inner_outer_sweep [--filter=REGEX] [--variants=REGEX] [--set=FIELD=V,...]
//                           [--input_mib=MIB] [--jobs=N] [--compile_only] [--print_source]
//
// The --filter REGEX matches "<op>/<dtype>/<N>" (default: the forward ops, rows up to 16384).

#include "inner_outer_scheduler.h"
#include "variant_sweep.h"

namespace braze::bench {
namespace {

using IoVariant = SweepVariant<inner_outer::InnerOuterParams>;

// Every variant of `list` also with each blocks-per-SM launch bound (min_blocks_per_sm) that
// leaves a thread at least 32 registers (2048 threads per SM), to see what a block overlapping
// another's memory phase is worth against the registers it gives up.
std::vector<IoVariant> withBlocksPerSm(std::vector<IoVariant> list, std::vector<int64_t> blocks) {
  const size_t n = list.size();
  for (size_t i = 0; i < n; ++i) {
    if (list[i].fast_math) continue;
    for (int64_t b : blocks) {
      const int64_t threads = list[i].params.threads_x * list[i].params.rows_per_block;
      if (b == list[i].params.min_blocks_per_sm || threads * b > 2048) continue;
      IoVariant bounded = list[i];
      bounded.heuristic = false;
      bounded.params.min_blocks_per_sm = b;
      list.push_back(bounded);
    }
  }
  return list;
}

// Every variant of `list` without blocks per SM whose block still states its size (more than
// 512 threads) also compiled without launch bounds: kernels that ptxas may give more registers
// than such a block can launch with.
std::vector<IoVariant> withUnbounded(std::vector<IoVariant> list) {
  const size_t n = list.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t threads = list[i].params.threads_x * list[i].params.rows_per_block;
    if (list[i].fast_math || list[i].params.min_blocks_per_sm != 0 || threads <= 512) continue;
    IoVariant unbounded = list[i];
    unbounded.heuristic = false;
    unbounded.unbounded = true;
    list.push_back(unbounded);
  }
  return list;
}

// The heuristics' params and, for the register shape, every persistent batch and rows per
// block that keeps a block within 1024 threads and the row within one block, each with the
// launch bounds' blocks per SM.
std::vector<IoVariant> variantsOf(const inner_outer::InnerOuterParams& chosen) {
  std::vector<IoVariant> variants{{chosen, false, true}, {chosen, true, false}};
  if (chosen.persistence == inner_outer::Persistence::Registers && chosen.row_blocks > 0) {
    // Column sums: rows stacked along threadIdx.y, and one or two blocks per SM (132 SMs).
    for (int64_t rows : {1, 2, 4, 8, 16, 32}) {
      if (chosen.threads_x * rows > 1024) continue;
      for (int64_t blocks : {132, 264}) {
        inner_outer::InnerOuterParams p = chosen;
        p.rows_per_block = rows;
        p.row_blocks = blocks;
        p.min_blocks_per_sm = 0;
        if (p != chosen) variants.push_back({p, false, false});
      }
    }
    variants = withUnbounded(withBlocksPerSm(std::move(variants), {0, 1, 2}));
    // Several rows per thread (their loads issued together, the column partials shared), with
    // 512 or 1024 threads per SM in one, two or four blocks held to their share of the
    // registers, for one, two or four vectors of a row per thread.
    const int64_t vectors = (chosen.row_length + chosen.vector_width - 1) / chosen.vector_width;
    for (int64_t batch : {1, 2, 4}) {
      const int64_t tx = (vectors + batch - 1) / batch;
      if (tx < 32 && batch > 1) continue;
      for (int64_t sm_threads : {512, 1024}) {
        for (int64_t per_sm : {1, 2, 4}) {
          const int64_t rows = sm_threads / per_sm / tx;
          if (rows < 1 || tx * rows > 1024) continue;
          for (int64_t per_thread : {1, 2, 4}) {
            inner_outer::InnerOuterParams p = chosen;
            p.persistent_batch = batch;
            p.threads_x = tx;
            p.rows_per_thread = per_thread;
            p.rows_per_block = rows;
            p.row_blocks = 132 * per_sm;
            p.min_blocks_per_sm = per_sm;
            if (p != chosen) variants.push_back({p, false, false});
          }
        }
      }
    }
    return variants;
  }
  if (chosen.persistence == inner_outer::Persistence::MultiWave) {
    // Multi-wave: threads along a row and vectors each loads per wave iteration. A block of
    // 1024 threads holds 64 registers per thread, which 8 vectors each would spill.
    for (int64_t threads : {256, 512, 1024}) {
      for (int64_t unroll : {1, 2, 4, 8}) {
        if (threads * unroll > 4096) continue;
        inner_outer::InnerOuterParams p = chosen;
        p.threads_x = threads;
        p.wave_unroll = unroll;
        if (p != chosen) variants.push_back({p, false, false});
      }
    }
    return variants;
  }
  if (chosen.persistence != inner_outer::Persistence::Registers) return variants;
  const int64_t vectors = (chosen.row_length + chosen.vector_width - 1) / chosen.vector_width;
  for (int64_t batch : {1, 2, 4, 8, 16}) {
    const int64_t tx = (vectors + batch - 1) / batch;
    if (tx > 1024 || (batch > 1 && (vectors + batch - 2) / (batch - 1) == tx)) continue;
    for (int64_t rows : {1, 2, 4, 8, 16}) {
      // Rows of a warp or more of threads were fastest one per block: stacked only below that.
      if (tx * rows > 1024 || tx * rows < 32 || (rows > 1 && tx >= 128)) continue;
      inner_outer::InnerOuterParams p = chosen;
      p.persistent_batch = batch;
      p.threads_x = tx;
      p.rows_per_block = rows;
      p.min_blocks_per_sm = 0;
      if (p == chosen) continue;
      variants.push_back({p, false, false});
    }
  }
  return withUnbounded(withBlocksPerSm(std::move(variants), {0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace braze::bench

int main(int argc, char** argv) {
  using braze::inner_outer::InnerOuterParams;
  const braze::bench::SweptScheduler<InnerOuterParams> scheduler{
      .tool = "braze_inner_outer_sweep",
      .default_filter =
          "(softmax_fwd|layer_norm_fwd|rms_norm_fwd)/(bf16|fp32)/"
          "(256|1000|1024|4096|8192|16384)$",
      .takes =
          [](const braze::bench::OpInfo& op) {
            return std::string(op.scheduler) == "braze::inner_outer";
          },
      .refusal = braze::inner_outer::canScheduleRunTime,
      .heuristics = braze::inner_outer::computeHeuristics,
      .variants =
          [](const InnerOuterParams& chosen) {
            auto variants = braze::bench::variantsOf(chosen);
            variants.erase(variants.begin());  // the heuristics' own, which the harness adds
            return variants;
          },
      .schedule =
          [](braze::Fusion& fusion, const InnerOuterParams& params) {
            braze::inner_outer::schedule(fusion, params);
          },
      .print = [](const InnerOuterParams& params) { return braze::inner_outer::toString(params); },
  };
  return braze::bench::runSweep(argc, argv, scheduler);
}
