#include "inner_outer_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <variant>

#include "braze/error.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/sched/broadcast_reciprocals.h"
#include "braze/sched/inlining.h"
#include "braze/sched/keep_intermediates_in_registers.h"
#include "braze/sched/logical_map.h"
#include "braze/sched/outputs_problem.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/persistent_buffer.h"
#include "braze/sched/reduction_analysis.h"
#include "braze/sched/reference_dim_map.h"
#include "braze/sched/runtime_arguments.h"
#include "braze/sched/transform_propagation.h"
#include "braze/sched/unsupported_op_problem.h"
#include "kernel_shapes.h"
#include "row_analysis.h"

namespace braze::inner_outer {

namespace {

// Vectors of a row one thread keeps: beyond 16 the unrolled code only grows.
constexpr int64_t kMaxPersistentBatch = 16;
// Bytes of persistent buffers one thread may hold (64 registers), and registers left to the
// rest of the kernel (indices, reduction values, pointers) when the block is large.
constexpr int64_t kMaxPersistentBytesPerThread = 256;
constexpr int64_t kOtherRegistersPerThread = 24;
constexpr int64_t kRegisterBytes = 4;
// Multi-wave blocks: 512 threads loading 8 vectors each per wave iteration, or 1024 threads
// loading 4 (one block per SM), within this many elements of row vectors per thread and wave
// iteration at 512 threads (layer norm's x, weight and bias at 8 bf16 vectors: 126 registers).
constexpr int64_t kMultiWaveThreads = 512;
constexpr int64_t kMultiWaveUnroll = 8;
constexpr int64_t kMultiWaveWideThreads = 1024;
constexpr int64_t kMultiWaveWideUnroll = 4;
constexpr int64_t kMultiWaveElementsPerThread = 192;
// Fraction of L2 that the rows in flight may fill (chooseMultiWave says what it buys).
constexpr double kMultiWaveL2Share = 0.75;
// Blocks of fewer threads than this stack rows along threadIdx.y.
constexpr int64_t kMinThreadsPerBlock = 128;
constexpr int64_t kPreferredThreadsX = 256;
constexpr int64_t kMaxInnerOuterThreads = 512;
// Rows without column sums: vectors per thread, threads along a row, and the threads a block of
// short rows (stacked along threadIdx.y) should have (SplitPreference::FourVectorsPerThread).
constexpr int64_t kVectorsPerThread = 4;
constexpr int64_t kMaxRowThreads = 512;
constexpr int64_t kShortRowBlockThreads = 64;
// Rows without column sums: blocks of this many threads or more, whose threads keep at most
// kBoundedRowInputBytes of a 2-byte row input, ask, through their launch bounds, for this many
// threads resident per SM (computeHeuristics says what it buys).
constexpr int64_t kMinRowBlockThreadsBounded = 256;
constexpr int64_t kRowThreadsPerSm = 1024;
constexpr int64_t kBoundedRowInputBytes = 64;
// 2-byte rows beside a kept float buffer (computeHeuristics says where it was measured).
constexpr int64_t kDearRowVectorsPerThread = 8;
constexpr int64_t kDearRowMinThreads = 128;
constexpr int64_t kDearRowMaxThreads = 256;
constexpr int64_t kDearRowBlocksPerSm = 3;
// Blocks of more threads than this always state their size as launch bounds (schedule()).
constexpr int64_t kMaxUnboundedBlockThreads = 512;
// Inner-outer blocks (chooseInnerOuterBlock): threads per SM, unrolled rows per thread at most,
// and registers of a thread beside its columns' buffers (indices, the rows' sums).
// kMaxThreadRegisters is what one thread can address.
constexpr int64_t kInnerOuterSmThreads = 1024;
constexpr int64_t kMaxRowsPerThread = 4;
constexpr int64_t kInnerOuterOtherRegisters = 32;
constexpr int64_t kMaxThreadRegisters = 255;
// Registers of a long-row inner-outer thread beside its buffers (indices, the row's sums,
// bfloat16 conversions), calibrated for sm_90: layer norm backward rows of 8192 (336 bytes of
// buffers estimated at 512 threads) compile to 128 registers without spills since their two
// row sums share one block reduction.
constexpr int64_t kLongRowOtherRegisters = 44;
// Shared memory a block reduction of up to 1024 threads may take beside the column partials
// (a float per warp per value reduced together, and the grid reduction's flags).
constexpr int64_t kReductionScratchBytes = 4 * 1024;
constexpr int64_t kMaxSharedPartialsElements = 16;
// Registers of a thread of an inner-outer kernel at 1024 threads per SM (64 on sm_90) that are
// not its buffers: indices, the row's sum, the rows' per-row inputs (wholeSmOfUnstackedRows).
constexpr int64_t kWholeSmOtherRegisters = 16;

std::optional<std::string> refusedOp(OpKind op) {
  if (isElementwise(op)) return std::nullopt;
  switch (op) {
    case OpKind::Broadcast:
    case OpKind::Set:
    case OpKind::Sum:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Prod:
      return std::nullopt;
    case OpKind::Welford:
      return "Welford's three-value accumulator is not scheduled here yet; define the variance "
             "with sums (mean(x), then mean((x - mean)^2)), which a persistent row makes cheap";
    case OpKind::Matmul:
    case OpKind::Linear:
      return "matmul and linear need a tiled contraction; use a matmul scheduler";
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::Expand:
    case OpKind::Squeeze:
      return "it regroups or reorders dims, so the row loop cannot be mapped through it";
    default:
      return "this scheduler maps rows through elementwise ops, broadcasts and reductions only";
  }
}

// ---- heuristics ----------------------------------------------------------------------------

struct RegisterChoice {
  int64_t batch = 0;
  int64_t threads_x = 0;
};

// What a register split is chosen for.
enum class SplitPreference {
  // Column sums: blockDim.x a multiple of 32 where possible, near 256 threads.
  WholeWarps,
  // Rows without column sums: four vectors per thread (64 bytes of loads in flight per thread
  // when vectors are 16 bytes) with at most kMaxRowThreads threads along the row, more vectors
  // per thread only when the row needs them. Measured on an H200 over softmax, layer norm and
  // RMS norm forward, bf16 and fp32, rows of 256 to 16384 (braze_inner_outer_sweep): four
  // vectors per thread was the fastest or within 2% of it up to 8192 elements, where the
  // previous choice (blocks of about 256 threads along the row) took up to 1.7x as long for rows
  // of 1024 and less.
  FourVectorsPerThread,
};

// The persistent batch for rows of `vectors` vectors (blockDim.x = ceil(vectors / batch)) as
// `preference` ranks them, with little padding and the buffers within the register budget of a
// block of that size.
std::optional<RegisterChoice> chooseRegisterSplit(int64_t vectors, int64_t bytes_per_vector,
                                                  const driver::DeviceProperties& device,
                                                  int64_t max_threads, SplitPreference preference) {
  std::optional<RegisterChoice> best;
  std::tuple<bool, double, int64_t> best_key;
  for (int64_t batch = 1; batch <= kMaxPersistentBatch; ++batch) {
    const int64_t tx = ceilDiv(vectors, batch);
    if (tx > std::min<int64_t>(max_threads, device.max_threads_per_block)) continue;
    if (batch > 1 && ceilDiv(vectors, batch - 1) == tx) continue;  // same threads, more padding
    const int64_t per_thread = batch * bytes_per_vector;
    const int64_t budget =
        std::min(kMaxPersistentBytesPerThread,
                 (device.registers_per_sm / std::max<int64_t>(tx, kMinThreadsPerBlock) -
                  kOtherRegistersPerThread) *
                     kRegisterBytes);
    if (per_thread > budget) continue;
    const auto key =
        preference == SplitPreference::WholeWarps
            ? std::make_tuple(tx % device.warp_size != 0,
                              std::abs(std::log2(static_cast<double>(tx) /
                                                 static_cast<double>(kPreferredThreadsX))),
                              tx * batch - vectors)
            : std::make_tuple(tx > kMaxRowThreads,
                              std::abs(std::log2(static_cast<double>(batch) /
                                                 static_cast<double>(kVectorsPerThread))),
                              tx * batch - vectors);
    if (!best || key < best_key) {
      best = RegisterChoice{batch, tx};
      best_key = key;
    }
  }
  return best;
}

// Rows longer than chooseRegisterSplit's per-thread cap: the fewest vectors per thread at up to
// `threads` threads (one block per SM), with `other_registers` of each thread's share of the
// register file left beside its `bytes_per_vector` of buffers per vector.
//  - Column sums: kMaxInnerOuterThreads threads (128 registers each) and kLongRowOtherRegisters.
//    The launch bound of 512 threads caps a thread at 128 registers, so the estimate decides
//    whether it spills: RMS norm backward rows of 8192 (272 bytes of buffers) compile to
//    108-126 registers for sm_90, layer norm's (336 bytes) to 128 without spills; rows of 16384
//    spill 400-1100 bytes at 512 threads.
//  - 2-byte rows that the kernel keeps alone (keepOnlyInputCaches recomputes the rest), held
//    packed two elements to a register (packed_registers): the widest block, with
//    kOtherRegistersPerThread.
std::optional<RegisterChoice> fewestVectorsSplit(int64_t vectors, int64_t bytes_per_vector,
                                                 int64_t threads, int64_t other_registers,
                                                 const driver::DeviceProperties& device) {
  const int64_t batch = ceilDiv(vectors, threads);
  const int64_t threads_x = ceilDiv(vectors, batch);
  const int64_t budget = (device.registers_per_sm / threads - other_registers) * kRegisterBytes;
  if (batch > kMaxPersistentBatch || batch * bytes_per_vector > budget) return std::nullopt;
  return RegisterChoice{batch, threads_x};
}

// Column sums with rows too long for fewestVectorsSplit: the column partials move to shared memory,
// each thread's own slots, and the registers hold only the rows. The block is as wide as the
// device allows (one per SM), so each thread keeps the fewest elements of a row, at most
// kMaxSharedPartialsElements; it needs the partials' bytes of shared memory, within what a block
// may opt in to less the block reductions' scratch. Backward rows of 16384 (16 elements per
// thread at 1024 threads) compile to 64 registers with 44-224 bytes spilled for sm_90; with the
// partials in registers they spilled 400-1100 bytes at 512 threads.
std::optional<RegisterChoice> sharedPartialsSplit(int64_t vectors, int64_t vector_width,
                                                  int64_t partial_bytes_per_element,
                                                  const driver::DeviceProperties& device) {
  const int64_t batch = ceilDiv(vectors, device.max_threads_per_block);
  const int64_t threads_x = ceilDiv(vectors, batch);
  const int64_t shared_bytes =
      paddedRowThreads(threads_x) * batch * vector_width * partial_bytes_per_element;
  if (batch * vector_width > kMaxSharedPartialsElements ||
      shared_bytes + kReductionScratchBytes > device.max_shared_memory_per_block_optin)
    return std::nullopt;
  return RegisterChoice{batch, threads_x};
}

struct InnerOuterBlock {
  int64_t rows_per_block = 1;   // stacked along threadIdx.y
  int64_t rows_per_thread = 1;  // unrolled in each thread
};

struct MultiWaveChoice {
  int64_t threads_x = 0;
  int64_t unroll = 0;
};

// Multi-wave blocks walk their rows two or three times, and a row read again soon enough is
// read from L2 rather than DRAM: the rows all resident blocks walk at once should fit in L2,
// while enough warps stay resident to cover the reductions' barriers. Measured on an H200
// (50 MiB L2, ncu): DRAM reads of the input were 1.0x for bf16 rows of 65536 at one block per
// SM (RMS norm, 16 MiB in flight; 84% of copy), 1.45x for float rows at one block of 1024
// threads (33 MiB; softmax 58%, 50% at two blocks of 512), 2.0x for bf16 softmax at two
// blocks of 512 (33 MiB; 57%, still faster than one block of 1024 per SM: 49%), and 3.0x,
// every pass, for rows of 262144 at any block size (softmax 46-50%, RMS norm 63%), where 512
// threads with 8 vectors in flight each were within 1-3% of the best. Over the 65536 cases,
// 512 x 8 (or 1024 x 4 at 256 KiB per row) was the best of 12 variants or within 2% of it.
// A block of 1024 threads holds 64 registers per thread, so it loads 4 vectors per wave
// iteration, not 8.
MultiWaveChoice chooseMultiWave(const VectorPlan& plan, int64_t rank, int64_t vector_width,
                                int64_t row_length, const driver::DeviceProperties& device) {
  // Bytes of [rows, row] inputs per row (weights are shared by every row: read once into L2),
  // and elements of every row input a thread holds per vector of a wave iteration.
  int64_t row_bytes = 0;
  int64_t row_inputs = 0;
  for (const TensorView* input : plan.inputs) {
    ++row_inputs;
    if (input->rank() == rank) row_bytes += row_length * sizeInBytes(input->dtype());
  }
  const auto fits_l2 = [&](int64_t blocks_per_sm) {
    return static_cast<double>(blocks_per_sm * device.sm_count * row_bytes) <=
           kMultiWaveL2Share * static_cast<double>(device.l2_cache_bytes);
  };
  MultiWaveChoice choice{kMultiWaveThreads, kMultiWaveUnroll};
  if (!fits_l2(2) && fits_l2(1) && device.max_threads_per_block >= kMultiWaveWideThreads)
    choice = {kMultiWaveWideThreads, kMultiWaveWideUnroll};
  // Fewer vectors per iteration where many row inputs would not fit the registers.
  const int64_t budget = kMultiWaveElementsPerThread * kMultiWaveThreads / choice.threads_x;
  while (choice.unroll > 1 &&
         choice.unroll * vector_width * std::max<int64_t>(row_inputs, 1) > budget)
    choice.unroll /= 2;
  return choice;
}

// Inner-outer blocks: how many rows an SM works on at once. Each row's loads wait for the
// row's two block reductions before the next can start, so an SM with one row in flight reached
// a third of copy bandwidth (layer norm backward, H200). Rows stack two ways: along threadIdx.y
// (more threads, each with its own column partials and weights) and along a thread's unrolled
// rows (the loads of all of them issued first; partials and weights shared). One block per SM
// of kInnerOuterSmThreads threads or of half that, whichever keeps more rows in flight with the
// registers each thread needs for them (innerOuterRegisters), the larger block on a tie.
// Measured on an H200 (braze_inner_outer_sweep, layer norm and RMS norm backward, bf16 and
// fp32, rows of 256 to 4096; benchmarks/RESULTS.md): within 3% of the best of 40 variants in
// most cases, and 1.2-1.6x the stacked rows without unrolled ones that this replaced.
InnerOuterBlock chooseInnerOuterBlock(const Fusion& fusion, const TensorView* reference,
                                      const InnerOuterParams& params, int64_t rows,
                                      int64_t column_sums, const driver::DeviceProperties& device) {
  // Bytes per element of a thread's columns: each row input's register copy (per row), and the
  // float copies of weights and the column partials (shared by the thread's rows).
  int64_t row_bytes = 0;
  int64_t shared_bytes = params.shared_column_partials != 0 ? 0 : kRegisterBytes * column_sums;
  for (const TensorView* input : vectorPlan(fusion, reference).inputs) {
    if (input->rank() == reference->rank()) {
      row_bytes += sizeInBytes(input->dtype());
    } else {
      shared_bytes += kRegisterBytes;
    }
  }
  const int64_t elements = params.persistent_batch * params.vector_width;
  // Calibrated against ptxas for sm_90 (registers of the sweep's kernels): the buffers, the
  // other registers, and half a register per element of each unrolled row for the values
  // computed from it that are live at once.
  const auto registers = [&](int64_t rows_per_thread) {
    return ceilDiv(elements * (rows_per_thread * row_bytes + shared_bytes), kRegisterBytes) +
           kInnerOuterOtherRegisters + ceilDiv(rows_per_thread * elements, 2);
  };
  const auto stackedFor = [&](int64_t sm_threads) {
    const int64_t threads = std::min<int64_t>(sm_threads, device.max_threads_per_block);
    return std::max<int64_t>(threads / paddedRowThreads(params.threads_x), 1);
  };
  // Where no block fits its registers (long rows), one block of half the threads, one row per
  // thread: ptxas spills what does not fit.
  InnerOuterBlock best{stackedFor(kInnerOuterSmThreads / 2), 1};
  int64_t best_rows = 0;
  for (const int64_t sm_threads : {kInnerOuterSmThreads / 2, kInnerOuterSmThreads}) {
    const int64_t stacked = stackedFor(sm_threads);
    const int64_t budget =
        std::min(device.registers_per_sm / (stacked * paddedRowThreads(params.threads_x)),
                 kMaxThreadRegisters);
    for (int64_t u = kMaxRowsPerThread; u >= 1; u /= 2) {
      if (registers(u) > budget) continue;
      if (stacked * u >= best_rows) {
        best = {stacked, u};
        best_rows = stacked * u;
      }
      break;
    }
  }
  // Few rows: no more stacked or unrolled rows than there are.
  best.rows_per_block = std::clamp<int64_t>(best.rows_per_block, 1, rows);
  best.rows_per_thread =
      std::clamp<int64_t>(best.rows_per_thread, 1, ceilDiv(rows, best.rows_per_block));
  return best;
}

// Inner-outer blocks of stacked rows: two blocks per SM, each of half the rows, rather than one
// block of all of them. The threads and registers per SM stay the same, and a block's barriers
// (two block reductions per row) hold up half as many rows. Measured on an H200
// (braze_inner_outer_sweep, one call): layer norm backward bf16 1024 280 -> 268 us, 4096
// 283 -> 273, fp32 1024 242 -> 235; RMS norm backward bf16 1024 246 -> 230, fp32 1024
// 229 -> 222.
void splitStackedRows(InnerOuterParams& params) {
  if (params.rows_per_block < 2 || params.rows_per_block % 2 != 0) return;
  params.rows_per_block /= 2;
  params.min_blocks_per_sm = 2;
}

// Inner-outer kernels of one row reduction (RMS norm backward) whose rows take 512 threads or
// more: 1024 threads per SM at 64 registers each (two blocks of 512, or one of 1024 with half
// the vectors per thread) where a thread's buffers fit 48 of them (sm_90's register file), with at
// least as many rows in flight per SM as the one block of 512 threads at 128 registers that
// chooseInnerOuterBlock sizes. The buffers: each row input's register copy (in floats) per unrolled
// row, and each column partial and per-column input (weight) once. Measured on an H200: RMS norm
// backward fp32 4096 248 -> 221 us, 8192 296 -> 235, bf16 4096 250 -> 245; they compile without
// spills. Kernels of two row reductions (layer norm backward) spilled 36-600 bytes at 64 registers
// in every such shape and were slower, but for fp32 4096 (289 -> 265 us, one row per thread, 68
// bytes spilled), which this rule does not predict.
bool wholeSmOfUnstackedRows(const Fusion& fusion, const TensorView* reference,
                            InnerOuterParams& params, int64_t vectors, int64_t row_reductions,
                            int64_t column_sums, const driver::DeviceProperties& device) {
  if (row_reductions != 1 || device.max_threads_per_block < kInnerOuterSmThreads) return false;
  const int64_t buffer_registers =
      std::min(device.registers_per_sm / kInnerOuterSmThreads, kMaxThreadRegisters) -
      kWholeSmOtherRegisters;
  int64_t row_inputs = 0;
  int64_t per_column = column_sums;
  for (const TensorView* input : vectorPlan(fusion, reference).inputs)
    ++(input->rank() == reference->rank() ? row_inputs : per_column);
  const int64_t rows_in_flight = params.rows_per_block * params.rows_per_thread;
  // The split as it is, or with half the vectors per thread (twice the threads).
  std::vector<int64_t> batches = {params.persistent_batch};
  if (params.persistent_batch % 2 == 0) batches.push_back(params.persistent_batch / 2);
  for (const int64_t batch : batches) {
    const int64_t threads_x = ceilDiv(vectors, batch);
    const int64_t padded = paddedRowThreads(threads_x);
    if (padded < kInnerOuterSmThreads / 2 || padded > kInnerOuterSmThreads) continue;
    const int64_t blocks = kInnerOuterSmThreads / padded;
    const int64_t elements = batch * params.vector_width;
    for (int64_t u = kMaxRowsPerThread; u >= 2; u /= 2) {
      if (elements * (u * row_inputs + per_column) > buffer_registers) continue;
      if (blocks * u < rows_in_flight) break;
      params.persistent_batch = batch;
      params.threads_x = threads_x;
      params.rows_per_block = 1;
      params.rows_per_thread = u;
      params.min_blocks_per_sm = blocks;
      return true;
    }
  }
  return false;
}

// A broadcast axis (extent 1) bound to a thread dim would be computed by thread 0 alone, while
// every thread reads the value (a per-row rstd seen along the row): such axes stay serial, so
// each thread computes its own copy.
void keepBroadcastsSerial(Fusion& fusion) {
  for (TensorView* tv : fusion.allTensors()) {
    if (fusion.isInput(tv)) continue;
    for (int64_t j = 0; j < tv->nLoopDims(); ++j) {
      const ParallelType type = tv->loopAxis(j)->parallelType();
      const bool thread =
          type == ParallelType::TIDx || type == ParallelType::TIDy || type == ParallelType::TIDz;
      if (thread && tv->loopAxis(j)->isBroadcast()) tv->parallelize(j, ParallelType::Serial);
    }
  }
}

// A column sum is complete only once every row is done, so nothing on the rows may read it: the
// first tensor computed from `column` that is broadcast back over the rows, if any.
const TensorView* broadcastBackOverRows(const TensorView* column) {
  std::vector<const Val*> pending = {column};
  std::set<const Val*> seen;
  while (!pending.empty()) {
    const Val* val = pending.back();
    pending.pop_back();
    if (!seen.insert(val).second) continue;
    for (const Expr* use : val->uses()) {
      for (const Val* output : use->outputs()) {
        if (use->op() == OpKind::Broadcast) return output->as<TensorView>();
        pending.push_back(output);
      }
    }
  }
  return nullptr;
}
}  // namespace

std::optional<std::string> canScheduleCompileTime(const Fusion& fusion) {
  if (std::optional<std::string> problem = outputsProblem(fusion)) return problem;
  if (std::optional<std::string> problem = unsupportedOpProblem(fusion, refusedOp)) return problem;
  if (!hasReductions(fusion))
    return "the fusion has no reduction; it is the pointwise scheduler's work";
  const auto classified = classifyReductions(fusion);
  if (const auto* reason = std::get_if<std::string>(&classified)) return *reason;
  const Reductions& reductions = std::get<Reductions>(classified);
  if (reductions.rows.empty())
    return "the fusion only sums over rows (column reductions) with no row reduction to fuse "
           "them with; use the reduction scheduler";
  const std::optional<int64_t> reference = referenceIndex(fusion);
  if (!reference)
    return "no output has the full [rows, row] shape: every output is reduced, so nothing is "
           "computed from the rows after their reduction; use the reduction scheduler";
  const auto* ref = fusion.outputs()[*reference]->as<TensorView>();
  if (ref->rank() < 2)
    return "output " + ref->name() + " has rank " + std::to_string(ref->rank()) +
           "; a normalization needs rows: a rank of 2 or more";
  if (reductions.columns.empty() && persistentBuffers(fusion).empty())
    return "a plain row reduction: nothing reads the rows again after they are reduced, so "
           "there is no buffer to keep on chip; use the reduction scheduler";
  if (!reductions.columns.empty() && ref->rank() != 2)
    return "column sums are fused with row reductions for 2D [rows, row] tensors only; " +
           ref->name() + " has rank " + std::to_string(ref->rank());
  for (const ReductionInfo& r : reductions.columns) {
    if (const TensorView* back = broadcastBackOverRows(r.tv)) {
      return "the column reduction " + r.tv->name() + " is broadcast back over the rows (" +
             back->name() +
             "), so the rows would need every row's partial first; reduce the columns in a "
             "kernel of their own (the reduction scheduler)";
    }
  }
  const ReferenceDimMap map = mapDimsToReference(fusion, ref);
  for (const ReductionInfo& r : reductions.rows) {
    const std::vector<int64_t>& dims = map.at(r.tv);
    if (r.tv->nDims() != ref->nDims() || dims.back() != ref->nDims() - 1) {
      return r.tv->name() + " reduces a dim that is not the row of the reference output " +
             ref->name();
    }
  }
  return unmappedOutputDimProblem(fusion, map, ref);
}

std::optional<std::string> canScheduleRunTime(const Fusion& fusion,
                                              const SchedulerRuntimeInfo& info) {
  if (std::optional<std::string> problem = argumentProblem(fusion, info.arguments)) return problem;
  const auto* reference = fusion.outputs()[referenceIndex(fusion).value()]->as<TensorView>();
  RowShape shape;
  try {
    ExpressionEvaluator evaluator;
    shape = rowShape(fusion, reference, info, evaluator);
  } catch (const Error& error) {
    return std::string("the arguments' sizes contradict the fusion: ") + error.what();
  }
  // Elementwise ops do not tie two symbolic extents together, so the core's validation cannot
  // see a weight of the wrong length; every row tensor must match the rows.
  for (const TensorView* tv : vectorPlan(fusion, reference).inputs) {
    const int64_t size =
        std::get<TensorArgumentInfo>(info.arguments[fusion.inputIndex(tv)]).sizes.back();
    if (size != shape.length)
      return "input " + std::to_string(fusion.inputIndex(tv)) + " (" + tv->name() + ") has " +
             std::to_string(size) + " elements along the row, but the rows of " +
             reference->name() + " have " + std::to_string(shape.length);
  }
  if (shape.rows == 0 || shape.length == 0)
    return "the reference output " + reference->name() + " is empty (" +
           std::to_string(shape.rows) + " rows of " + std::to_string(shape.length) +
           "); there is nothing to launch";
  if (shape.length > (int64_t{1} << 31) / 4)
    return "rows of " + std::to_string(shape.length) +
           " elements exceed what 32-bit wave indices of this scheduler address";
  const bool column_sums = !std::get<Reductions>(classifyReductions(fusion)).columns.empty();
  if (column_sums && computeHeuristics(fusion, info).persistence != Persistence::Registers)
    return "rows of " + std::to_string(shape.length) +
           " elements do not fit in registers next to the column partials, the partials in "
           "shared memory measured slower than two kernels for this fusion (2-byte rows with "
           "one column sum) or do not fit, and the multi-wave shape (one block per row) cannot "
           "fuse sums over the rows; schedule the column sums separately";
  return std::nullopt;
}

InnerOuterParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info) {
  InnerOuterParams params;
  params.reference_output = referenceIndex(fusion).value();
  const auto* reference = fusion.outputs()[params.reference_output]->as<TensorView>();
  ExpressionEvaluator evaluator;
  const RowShape shape = rowShape(fusion, reference, info, evaluator);
  params.row_length = shape.length;
  params.vector_width = vectorWidth(fusion, vectorPlan(fusion, reference), info, shape.length);
  const int64_t vectors = ceilDiv(shape.length, params.vector_width);

  // Bytes per row element of every buffer that outlives a reduction. Inner-outer kernels also
  // keep the float copies of per-column inputs (weights) for all their rows.
  const Reductions reductions = std::get<Reductions>(classifyReductions(fusion));
  const auto column_sums = static_cast<int64_t>(reductions.columns.size());
  // Whether every full-size row input's element size satisfies `pred` (weights do not count).
  const std::vector<TensorView*> row_inputs = vectorPlan(fusion, reference).inputs;
  // The [rows, row] inputs (weights do not count), and the element size of the last of them.
  int64_t full_row_inputs = 0;
  int64_t element_bytes = 0;
  for (const TensorView* input : row_inputs) {
    if (input->rank() != reference->rank()) continue;
    ++full_row_inputs;
    element_bytes = sizeInBytes(input->dtype());
  }
  const auto every_row_element = [&](auto pred) {
    return std::all_of(row_inputs.begin(), row_inputs.end(), [&](const TensorView* tv) {
      return tv->rank() != reference->rank() || pred(sizeInBytes(tv->dtype()));
    });
  };
  const int64_t buffer_bytes = persistentBufferBytes(fusion, evaluator).value_or(0);
  int64_t bytes_per_element = std::max<int64_t>(ceilDiv(buffer_bytes, shape.length), 4);
  for (const TensorView* input : row_inputs) {
    if (column_sums > 0 && input->rank() < reference->rank()) bytes_per_element += 4;
  }
  // Each column sum keeps a register array of partials.
  bytes_per_element += 4 * column_sums;
  // Backward kernels keep more live values than their buffers (dy, w dy, the row's sums and
  // the column partials' indices): at most 512 threads, so each may use 128 registers.
  std::optional<RegisterChoice> split =
      column_sums > 0
          ? chooseRegisterSplit(vectors, bytes_per_element * params.vector_width, info.device,
                                kMaxInnerOuterThreads, SplitPreference::WholeWarps)
          : chooseRegisterSplit(vectors, bytes_per_element * params.vector_width, info.device,
                                info.device.max_threads_per_block,
                                SplitPreference::FourVectorsPerThread);
  if (!split && column_sums > 0)
    split = fewestVectorsSplit(vectors, bytes_per_element * params.vector_width,
                               kMaxInnerOuterThreads, kLongRowOtherRegisters, info.device);
  // Rows of 2-byte elements held packed where they do not fit a register apiece, for fusions of
  // one row reduction that keep nothing but the input. Measured on an H200
  // (braze_inner_outer_sweep), rows of 65536 on 1024 threads against the multi-wave plan: RMS
  // norm bf16 144.0 against 154.1 us. Not for two reductions: layer norm bf16 235.7 against
  // 184.1 us (20 bytes spilled even with its mean opaque); log-softmax spills 56 bytes. Not
  // where a float buffer is kept (softmax's exponentials: 80 bytes spilled), nor for shorter rows
  // that fit unpacked (layer norm bf16 16384 packed: 168.9 against 143.7 us).
  if (!split && column_sums == 0 && reductions.rows.size() == 1 &&
      every_row_element([](int64_t bytes) { return bytes == 2; }) && !keepsDearBuffers(fusion)) {
    split = fewestVectorsSplit(vectors, 2 * full_row_inputs * params.vector_width,
                               info.device.max_threads_per_block, kOtherRegistersPerThread,
                               info.device);
    params.packed_registers = split ? 1 : 0;
  }
  // Rows too long for both in registers: one kernel with the partials in shared memory where
  // that beat the two kernels the segmenter makes otherwise (rows, then the column sums, which
  // read the row inputs again). It keeps one row per SM in flight, so its cost per row is
  // fixed: it pays where a row's bytes are many (4-byte elements) or where the second kernel
  // would have two sums to finish. Measured on an H200, rows of 16384 (one kernel against two):
  // layer norm backward bf16 615 against 705 us, fp32 403 against 421, RMS norm backward fp32
  // 263 against 327; RMS norm backward bf16 474 against 429 keeps two kernels.
  if (!split && column_sums > 0) {
    const bool four_byte_rows = every_row_element([](int64_t bytes) { return bytes >= 4; });
    if (four_byte_rows || column_sums >= 2) {
      split = sharedPartialsSplit(vectors, params.vector_width, 4 * column_sums, info.device);
      params.shared_column_partials = split ? 1 : 0;
    }
  }
  if (split && column_sums > 0) {
    params.persistence = Persistence::Registers;
    params.persistent_batch = split->batch;
    params.threads_x = split->threads_x;
    // Two vectors of a row per thread rather than one, where a row still has a warp of threads
    // (rows of 2-byte elements) or two (4-byte elements; rows of 256 floats keep one vector,
    // not measured). Half the threads share each row reduction, and a thread's work per row
    // (its partial sums, the row's mean and rstd) covers twice the elements. Measured on an
    // H200 (braze_inner_outer_sweep, percent of copy): layer norm backward bf16 1024
    // 49.6 -> 60.0, 4096 43.8 -> 52.9; fp32 1000 66.9 -> 75.6, 1024 68.6 -> 75.4; RMS norm
    // backward fp32 1000 79.9 -> 83.8, 1024 81.6 -> 83.6.
    const bool two_byte_rows = every_row_element([](int64_t bytes) { return bytes == 2; });
    const int64_t min_threads_x = (two_byte_rows ? 1 : 2) * info.device.warp_size;
    if (split->batch == 1 && ceilDiv(vectors, 2) >= min_threads_x) {
      params.persistent_batch = 2;
      params.threads_x = ceilDiv(vectors, 2);
    }
    const InnerOuterBlock block =
        chooseInnerOuterBlock(fusion, reference, params, shape.rows, column_sums, info.device);
    params.rows_per_block = block.rows_per_block;
    params.rows_per_thread = block.rows_per_thread;
    params.min_blocks_per_sm = 1;
    if (params.shared_column_partials == 0) {
      if (!wholeSmOfUnstackedRows(fusion, reference, params, vectors,
                                  static_cast<int64_t>(reductions.rows.size()), column_sums,
                                  info.device))
        splitStackedRows(params);
    }
    // Compiled for the row length except where that measured slower (H200, same core, plans
    // with and without it, braze_inner_outer_sweep): layer norm backward's 2-byte rows one to a
    // block (rows of 4096: 281 against 265 us; 8192: 298 against 290) and its float rows of a
    // padded warp (rows of 1000: 247 against 231). Elsewhere it gained up to 27% (RMS norm
    // backward fp32 16384; bf16 8192 15%, 4096 8%; layer norm backward fp32 1024 10%).
    // Forward rows, already at 96-99% of copy, ran the same either way (within 1%): they keep
    // the block read at run time.
    const bool two_row_sums = reductions.rows.size() >= 2;
    const bool slower_fixed =
        two_row_sums &&
        ((element_bytes == 2 && params.rows_per_block == 1) ||
         (element_bytes == 4 && paddedRowThreads(params.threads_x) != params.threads_x));
    params.fixed_row_length = slower_fixed ? 0 : 1;
    // The blocks are all resident (a cooperative launch): they meet at a grid barrier and each
    // finishes a share of the column sums.
    params.row_blocks =
        std::clamp<int64_t>(std::max(info.device.sm_count, 1) * params.min_blocks_per_sm, 1,
                            ceilDiv(shape.rows, params.rows_per_block * params.rows_per_thread));
  } else if (split) {
    params.persistence = Persistence::Registers;
    params.persistent_batch = split->batch;
    params.threads_x = split->threads_x;
    // Rows of fewer than a warp of threads: stack rows along threadIdx.y so that a block has
    // whole warps (their reductions stay warp shuffles). From a warp up, one row per block was
    // as fast or faster in the sweep (layer norm: up to 1.6x faster than eight rows).
    params.rows_per_block =
        split->threads_x >= info.device.warp_size
            ? 1
            : std::clamp<int64_t>(kShortRowBlockThreads / split->threads_x, 1, shape.rows);
    // Blocks of 256 threads or more of a fusion with one full-size row input of 2-byte
    // elements, of which each thread keeps at most kBoundedRowInputBytes, ask for 1024 threads
    // per SM (64 registers per thread): without launch bounds ptxas gave such rows of 8192 and
    // 16384 72 registers, one block of 512 threads per SM. Measured on an H200
    // (braze_inner_outer_sweep, percent of copy, against the same params without launch
    // bounds): softmax bf16 8192 82 -> 86, 16384 50 -> 74; layer norm bf16 8192 79 -> 87,
    // 16384 51 -> 79; RMS norm bf16 8192 and 16384 within 0.4. Float rows compiled to 40-48
    // registers without bounds (three blocks of 512 per SM) and were slower bounded (softmax
    // fp32 8192 98 -> 90, layer norm fp32 4096 96 -> 90, 8192 91 -> 74); fusions with more
    // row inputs (softmax backward) spill at 64 registers.
    const int64_t block_threads = params.threads_x * params.rows_per_block;
    if (block_threads >= kMinRowBlockThreadsBounded && full_row_inputs == 1 && element_bytes == 2 &&
        split->batch * params.vector_width * element_bytes <= kBoundedRowInputBytes)
      params.min_blocks_per_sm = std::max<int64_t>(kRowThreadsPerSm / block_threads, 1);
    // One row input of 2-byte elements beside a kept float buffer (softmax's exponentials), rows
    // of 8192 and 16384: eight vectors per thread in three blocks per SM. Measured on an H200
    // (braze_inner_outer_sweep, exponentials as braze::expNarrow): softmax bf16 8192 135.3 ->
    // 130.3 us, 16384 154.7 -> 132.4 us (four vectors per thread at 1024 threads per SM before);
    // 4096 gained 1%, so shorter rows keep four.
    const int64_t eight_vector_threads = ceilDiv(vectors, kDearRowVectorsPerThread);
    if (full_row_inputs == 1 && element_bytes == 2 && params.rows_per_block == 1 &&
        eight_vector_threads >= kDearRowMinThreads && eight_vector_threads <= kDearRowMaxThreads &&
        keepsDearBuffers(fusion)) {
      params.persistent_batch = kDearRowVectorsPerThread;
      params.threads_x = eight_vector_threads;
      params.min_blocks_per_sm = kDearRowBlocksPerSm;
    }
    // Every input through the read-only path: its loads may move ahead of the outputs' stores
    // (a weight's vectors were loaded one at a time between them). Measured on an H200 against
    // plain loads (braze_inner_outer_sweep, same run): layer norm bf16 4096 to 16384 2-3% faster,
    // softmax fp32 16384 5%, softmax backward bf16 16384 6%; the other forward rows of 1024 to
    // 16384 within 0.5%. Kernels with column sums keep plain loads: their loads moved ahead
    // took registers the column partials need (layer norm backward bf16 4096 8-11% slower,
    // RMS norm backward bf16 1024 up to 19%).
    params.read_only_loads = kEveryInputReadOnly;
  } else {
    params.persistence = Persistence::MultiWave;
    params.persistent_batch = 1;
    params.rows_per_block = 1;
    const MultiWaveChoice choice = chooseMultiWave(vectorPlan(fusion, reference), reference->rank(),
                                                   params.vector_width, shape.length, info.device);
    params.threads_x = std::min(choice.threads_x, vectors);
    params.wave_unroll = std::clamp<int64_t>(vectors / params.threads_x, 1, choice.unroll);
  }
  return params;
}

void schedule(Fusion& fusion, const InnerOuterParams& params) {
  BRAZE_USER_CHECK(params.reference_output >= 0 &&
                   params.reference_output < static_cast<int64_t>(fusion.outputs().size()))
      << "inner_outer schedule: reference_output " << params.reference_output
      << " is not an output position (the fusion has " << fusion.outputs().size()
      << " outputs); compute the params for this fusion";
  BRAZE_USER_CHECK(params.vector_width >= 1 && params.persistent_batch >= 1 &&
                   params.threads_x >= 1 && params.rows_per_block >= 1 && params.wave_unroll >= 1 &&
                   params.rows_per_thread >= 1)
      << "inner_outer schedule: " << toString(params)
      << " has a split factor below 1; compute the params with computeHeuristics";
  BRAZE_USER_CHECK(launchedThreadsX(params) * params.rows_per_block <= 1024 &&
                   params.min_blocks_per_sm >= 0)
      << "inner_outer schedule: " << toString(params) << " asks for blocks of "
      << launchedThreadsX(params) * params.rows_per_block
      << " threads (threads_x, in whole warps for inner-outer, * rows_per_block; at most 1024) or "
         "a negative min_blocks_per_sm; "
         "compute the params with computeHeuristics";
  auto* reference = fusion.outputs()[params.reference_output]->as<TensorView>();
  BRAZE_USER_CHECK(!reference->hasReduction() && reference->rank() >= 2)
      << "inner_outer schedule: reference_output " << params.reference_output << " ("
      << reference->name() << ") is not a full [rows, row] output; compute the params for "
      << "this fusion";
  // Division by a per-row value (softmax's sum) becomes one reciprocal per row and a product
  // per element: the divisions made bf16 softmax issue-bound.
  multiplyByBroadcastReciprocals(fusion);
  const VectorPlan plan = vectorPlan(fusion, reference);

  // Vectors move between global memory and registers through cached copies.
  std::vector<TensorView*> vectorized;
  const bool multi_wave = params.persistence == Persistence::MultiWave;
  for (TensorView* input : plan.inputs) {
    // An input an output is written into must see the kernel's stores: plain loads.
    const bool written = fusion.outputWrittenInto(input) != nullptr;
    const bool per_column = input->rank() != reference->rank();
    if (!written && (params.read_only_loads == kEveryInputReadOnly ||
                     (params.read_only_loads == kPerColumnInputsReadOnly && per_column)))
      fusion.setReadOnlyLoads(input);
    input->cacheAfter();
  }
  // Per-row inputs (a saved mean or rstd: no row dim) go to a register once per row; read
  // through their broadcast, every element of the row loaded them again.
  std::vector<TensorView*> per_row_caches;
  for (Val* v : fusion.inputs()) {
    auto* tv = v->dynCast<TensorView>();
    if (tv == nullptr || tv->rank() == 0 || consumersOf(tv).empty() ||
        std::find(plan.inputs.begin(), plan.inputs.end(), tv) != plan.inputs.end())
      continue;
    per_row_caches.push_back(tv->cacheAfter());
  }
  // Outputs the fusion also reads (mean, rstd) are read from registers, not back from global
  // memory: the output becomes a copy.
  for (Val* output : std::vector<Val*>(fusion.outputs().begin(), fusion.outputs().end())) {
    auto* tv = output->as<TensorView>();
    if (!consumersOf(tv).empty() && tv != reference) tv->cacheFork();
  }
  for (TensorView* output : plan.outputs) {
    output->cacheBefore();
    if (params.vector_width > 1) vectorized.push_back(output);
  }
  // Multi-wave: each wave loop computes what it reads again from the inputs, through its own
  // input caches.
  if (multi_wave) recomputePersistentBuffers(fusion);
  std::vector<TensorView*> input_caches;
  for (TensorView* input : plan.inputs) {
    for (Expr* use : input->uses()) input_caches.push_back(use->output(0)->as<TensorView>());
  }
  if (params.persistence == Persistence::Registers &&
      (params.row_blocks == 0 || params.shared_column_partials != 0))
    keepOnlyInputCaches(fusion, input_caches, /*opaque_row_values=*/params.packed_registers != 0);
  if (params.vector_width > 1)
    vectorized.insert(vectorized.end(), input_caches.begin(), input_caches.end());
  // Several rows per thread: the caches are computed outside the unrolled rows (loadRowsFirst),
  // and everything that reads them inside, one row at a time, reads a copy (free once compiled)
  // that shares the rows' loop: a column partial that read the cache itself would walk the rows
  // in a loop of its own.
  if (params.row_blocks > 0 && params.rows_per_thread > 1) {
    for (TensorView* cache : input_caches) cache->cacheAfter();
  }

  // Column sums accumulate in registers; an output that is one gets a register copy to
  // reduce into.
  std::vector<TensorView*> column_sums;
  if (params.row_blocks > 0) {
    const Reductions reductions = std::get<Reductions>(classifyReductions(fusion));
    for (const ReductionInfo& r : reductions.columns) {
      column_sums.push_back(fusion.isOutput(r.tv) ? r.tv->cacheBefore() : r.tv);
    }
  }

  switch (params.persistence) {
    case Persistence::Registers:
      if (params.row_blocks > 0) {
        scheduleInnerOuter(fusion, reference, params, column_sums);
      } else {
        scheduleRegisters(fusion, reference, params);
      }
      break;
    case Persistence::MultiWave:
      scheduleMultiWave(fusion, reference, params);
      break;
    case Persistence::Shared:
      BRAZE_USER_CHECK(false) << "inner_outer schedule: " << toString(params)
                              << " asks for shared-memory persistence, which this version "
                                 "does not produce; recompute the heuristics";
  }
  for (TensorView* tv : vectorized) tv->parallelize(-1, ParallelType::Vectorize);
  keepBroadcastsSerial(fusion);
  inlineMost(fusion);
  if (multi_wave) {
    loadWavesFirst(input_caches);
    moveRowSizedRegistersToGlobal(fusion);
    alternateWaveDirections(fusion);
  }
  if (params.row_blocks > 0) {
    inlineIntoRowLoop(fusion, params);
    std::vector<TensorView*> loaded_first = input_caches;
    loaded_first.insert(loaded_first.end(), per_row_caches.begin(), per_row_caches.end());
    loadRowsFirst(loaded_first, params);
  }
  // blockDim follows the row length in the kernel, so ptxas knows the block only from launch
  // bounds. They are stated where the params ask for blocks per SM, and for every block of
  // more than 512 threads (which would not launch at more than 64 registers). The block size
  // alone was measured slower where such kernels launched without it (H200: layer norm fp32
  // rows of 8192 91 -> 74% of copy, softmax fp32 8192 98 -> 90%, RMS norm backward bf16 1024
  // 66 -> 64%): ptxas then takes more registers (up to 128 at 512 threads) and fewer blocks
  // fit an SM.
  const int64_t block_threads = launchedThreadsX(params) * params.rows_per_block;
  if (params.min_blocks_per_sm > 0 || block_threads > kMaxUnboundedBlockThreads)
    fusion.setLaunchBounds(block_threads, params.min_blocks_per_sm);
  // Column sums: the row blocks are as many as the SMs hold at once (row_blocks), so they are
  // launched together and finish the column sums together after a grid barrier. The last
  // block to arrive used to read every block's partials alone: 4.3 MB through one SM for a
  // layer norm backward's two column sums of rows of 4096 on 132 SMs.
  if (params.row_blocks > 0) fusion.setCooperativeLaunch(true);
  fusion.setPackedHalfRegisters(params.packed_registers != 0);
  // A persistent row's threads follow its length: compiled for the row length the plan was made
  // for (its only valid one), the block is a constant of the kernel and the block reductions
  // unroll for it. Every row tensor's extent is stated: the launch sizes are computed from the
  // inputs'.
  if (!multi_wave && params.row_length > 0 && params.fixed_row_length != 0) {
    std::vector<TensorView*> rows = plan.inputs;
    rows.push_back(reference);
    for (TensorView* tv : rows) {
      Scalar* extent = tv->logical().back()->extent();
      if (!extent->constantInt()) fusion.assumeExtent(extent, params.row_length);
    }
  }
}

}  // namespace braze::inner_outer
