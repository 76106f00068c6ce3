#include "row_template.h"

#include <algorithm>

#include "braze/error.h"
#include "braze/ops/elementwise.h"

namespace braze::tma_ws_normalization {

namespace {

int64_t align128(int64_t bytes) {
  return (bytes + 127) / 128 * 128;
}

// Registers of held row vectors from which a CTA gives up its producer warp: 16 warps leave a
// thread 128 registers where 17 leave 120 (one CTA per SM) or 96 (two). Rows of 65536 floats
// held 64 registers a thread at 512 threads: 136 bytes spilled with a producer warp, none
// without (the first consumer thread then issues the next row as soon as the CTA released the
// stage). Plans holding less keep the warp, as measured for layer norm and RMS norm.
constexpr int64_t kMaxHeldWithProducer = 32;

// Whether the CTA has a producer warp of its own (see rowTemplateThreads).
bool producerWarp(const RowTemplateShape& shape) {
  if (shape.column_reductions > 0) return false;
  return !shape.register_rows ||
         (shape.min_blocks_per_sm == 1 && heldRowRegisters(shape) <= kMaxHeldWithProducer);
}

// Bytes of the two grid-barrier counters in front of the column partials in the workspace.
constexpr int64_t kColumnPartialsOffset = 16;

void replaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The kernel, with @NAME@ placeholders for the shape. The layout of shared memory is spelled
// here and in rowTemplateSharedBytes: keep the two in step.
constexpr const char* kSource = R"CUDA(
namespace {

constexpr int kCluster = @CLUSTER@;
constexpr int kConsumerThreads = @THREADS@;
constexpr int kConsumerWarps = kConsumerThreads / 32;
// A producer warp of its own, or the first consumer thread issuing each stage's next copies as
// soon as the CTA has released it (@PRODUCER_WARP@ = 0): a CTA of whole warp quads then, whose
// registers the SM's four schedulers split evenly (17 warps leave 96 registers a thread where
// 16 leave 128: what a norm backward's column partials need, and rows held in registers).
constexpr bool kProducerWarp = @PRODUCER_WARP@;
constexpr int kThreads = kConsumerThreads + (kProducerWarp ? 32 : 0);
constexpr int kPieces = @PIECES@;
constexpr int kStages = @STAGES@;
// CTAs the plan puts on one SM: the register cap that lets them all be resident.
constexpr int kMinBlocks = @MIN_BLOCKS@;
constexpr int kChunk = @CHUNK@;
constexpr int kPiece = @PIECE@;
// Rows in registers: each consumer thread takes its vectors of the row out of shared memory in
// the first pass and gives the stage back at once, so the next row streams in while this one
// is reduced and written; every later pass and the outputs read registers.
constexpr bool kRegisterRows = @REGISTER_ROWS@;
using Program = braze_row_program;
constexpr int kK = Program::kReductions > 0 ? Program::kReductions : 1;
constexpr int kPasses = Program::kPasses > 0 ? Program::kPasses : 1;
constexpr int kV = Program::kVector;
constexpr unsigned kConsumerBarrier = 1;

constexpr int align128(int bytes) { return (bytes + 127) / 128 * 128; }
// Row input `input`'s chunk within a stage, and a stage's bytes.
constexpr int inputOffset(int input) {
  int total = 0;
  for (int i = 0; i < input; ++i) total += align128(kChunk * Program::rowInputBytes(i));
  return total;
}
constexpr int kStageBytes = inputOffset(Program::kRowInputs);
// Column input `input`'s chunk (weights: the same for every row, copied once).
constexpr int columnOffset(int input) {
  int total = 0;
  for (int i = 0; i < input; ++i) total += align128(kChunk * Program::columnInputBytes(i));
  return total;
}
constexpr int kColumnsOffset = kStages * kStageBytes;
// Column reductions: each consumer thread's partials of its elements of the chunk, in
// registers across rows (kColumnIterations vectors a row); at the end the grid adds them up
// through the workspace, each warp of a CTA a share of the CTAs' partials of 128 columns, summed
// across warps in shared memory (over the row buffers, done with by then).
constexpr int kC = Program::kColumnReductions;
constexpr int kCK = kC > 0 ? kC : 1;
// Vectors a consumer thread handles per row where it handles the same elements of every row
// (column reductions, rows in registers): vector `it` at chunk element
// (it * kConsumerThreads + thread) * kV.
constexpr int kIterations = (kChunk + kConsumerThreads * kV - 1) / (kConsumerThreads * kV);
constexpr int kColumnIterations = kC > 0 ? kIterations : 1;
// A thread's vectors of one part, at most. Where that is one, the loops over a part are not
// unrolled: copies a thread never runs cost the compiler a third of a norm backward's compile.
// Two stay unrolled by four (softmax backward bf16 65536 ran 218 against 204 us unrolled by
// two).
constexpr int kPieceIterations = (kPiece + kConsumerThreads * kV - 1) / (kConsumerThreads * kV);
constexpr int kPieceUnroll = kPieceIterations == 1 ? 1 : 4;
constexpr int kHeldVectors = kRegisterRows ? kIterations : 1;
constexpr int kTeams = kThreads / 32;
constexpr int kFinishBytes = kC > 0 ? kTeams * kC * 128 * 4 : 0;
constexpr int kRowsBytes = kColumnsOffset + columnOffset(Program::kColumnInputs);
constexpr int kFullOffset = kRowsBytes > kFinishBytes ? kRowsBytes : kFinishBytes;
constexpr int kEmptyOffset = kFullOffset + 8 * kStages * kPieces;
constexpr int kPartialsFullOffset = kEmptyOffset + 8 * kStages * kPieces;
constexpr int kColumnsFullOffset = kPartialsFullOffset + 8 * 2 * kPasses;
constexpr int kWarpPartialsOffset = kColumnsFullOffset + 8;
constexpr int kSlotsOffset = kWarpPartialsOffset + 4 * kConsumerWarps * kK;
constexpr int kStatsOffset = kSlotsOffset + 4 * 2 * kPasses * kCluster * kK;

// Every lane ends with the combination of all 32 in the same order, so every CTA of a cluster
// that combines the same partials holds the same statistics.
__device__ __forceinline__ float warpCombine(int k, float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    value = Program::combine(k, value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ void storeToPeer(float* local, unsigned cta, float value) {
  asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(braze::cluster::mapShared(local, cta)),
               "f"(value)
               : "memory");
}

// Row inputs kInput.. of the vector at chunk position e, into registers as raw words.
template <int kInput = 0>
__device__ __forceinline__ void holdVectors(uint4 (&held)[Program::kRowInputs],
                                           const char* const* rows, int e) {
  if constexpr (kInput < Program::kRowInputs) {
    constexpr int kBytes = Program::rowInputBytes(kInput);
    braze_row_copy<kV * kBytes>(&held[kInput], rows[kInput] + e * kBytes);
    holdVectors<kInput + 1>(held, rows, e);
  }
}

// Release at cluster scope: the peer that acquires the phase sees this thread's stores to it.
__device__ __forceinline__ void arriveAtPeer(unsigned long long* barrier, unsigned cta) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(
                   braze::cluster::mapShared(barrier, cta))
               : "memory");
}

}  // namespace

// Workspace of a program with column reductions: two grid-barrier counters, then the
// partials [column reduction][cluster][column] as floats.
__device__ __forceinline__ float* columnPartials(char* workspace) {
  return reinterpret_cast<float*>(workspace + @PARTIALS_OFFSET@);
}

// Every CTA's share of the [N] outputs, once every CTA's partials are in the workspace. The
// grid is resident at once (a cooperative launch), so it can wait at a barrier; the totals are
// added in the same order whatever the timing.
__device__ __forceinline__ void finishColumns(const braze_row_program& program,
                                              unsigned char* shared) {
  auto* counters = reinterpret_cast<unsigned long long*>(program.workspace);
  const float* partials = columnPartials(program.workspace);
  const unsigned tid = threadIdx.x;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  braze::arrive(&counters[0], tid);
  braze::waitForArrivals(&counters[0], gridDim.x, tid);
  auto* team_sums = reinterpret_cast<float*>(shared);
  const long long n = program.rowLength();
  const long long clusters = gridDim.x / kCluster;
  const long long groups = (n + 127) / 128;
  const long long share = (groups + gridDim.x - 1) / gridDim.x;
  const long long first = blockIdx.x * share;
  const long long last = first + share < groups ? first + share : groups;
  for (long long group = first; group < last; ++group) {
    const long long j = group * 128 + lane * 4;
    float sum[kCK][4];
#pragma unroll
    for (int k = 0; k < kCK; ++k) {
#pragma unroll
      for (int c = 0; c < 4; ++c) sum[k][c] = Program::columnIdentity(k);
    }
    if (j < n) {
#pragma unroll 4
      for (long long g = warp; g < clusters; g += kTeams) {
#pragma unroll
        for (int k = 0; k < kC; ++k) {
          const float4 part = __ldcg(reinterpret_cast<const float4*>(partials + (k * clusters + g) * n + j));
          sum[k][0] = Program::columnCombine(k, sum[k][0], part.x);
          sum[k][1] = Program::columnCombine(k, sum[k][1], part.y);
          sum[k][2] = Program::columnCombine(k, sum[k][2], part.z);
          sum[k][3] = Program::columnCombine(k, sum[k][3], part.w);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kC; ++k) {
#pragma unroll
      for (int c = 0; c < 4; ++c) team_sums[((warp * kC + k) * 32 + lane) * 4 + c] = sum[k][c];
    }
    __syncthreads();
    // One column of the group a thread, its teams' sums added in team order: consecutive
    // threads read and write consecutive words. (Four columns a lane of one warp was four times
    // the code, and serial.)
    for (int u = tid; u < 128; u += kThreads) {
      const long long column = group * 128 + u;
      if (column >= n) break;
      float total[kCK];
#pragma unroll
      for (int k = 0; k < kC; ++k) {
        total[k] = Program::columnIdentity(k);
#pragma unroll 4
        for (int t = 0; t < kTeams; ++t)
          total[k] = Program::columnCombine(k, total[k], team_sums[(t * kC + k) * 128 + u]);
      }
      program.storeColumn(column, total);
    }
    __syncthreads();
  }
  // Every CTA has passed the first counter: both are zero again for the next launch.
  braze::arrive(&counters[1], tid);
  if (blockIdx.x == 0) {
    braze::waitForArrivals(&counters[1], gridDim.x, tid);
    if (tid == 0) {
      counters[0] = 0;
      counters[1] = 0;
    }
  }
}

// Copies of `row` into stage round % kStages, part by part, each once the consumers released
// the stage's previous row. One thread.
__device__ __forceinline__ void issueRow(const braze_row_program& program, unsigned char* shared,
                                         unsigned long long* full, unsigned long long* empty,
                                         long long row, int round, long long begin, int length) {
  const int stage = round % kStages;
  const int use = round / kStages;
  unsigned char* stage_rows = shared + stage * kStageBytes;
  for (int q = 0; q < kPieces; ++q) {
    const int b = stage * kPieces + q;
    if (use > 0) braze::mbarrier::wait(&empty[b], (use - 1) & 1);
    const int lo = q * kPiece < length ? q * kPiece : length;
    const int hi = lo + kPiece < length ? lo + kPiece : length;
    if (lo == hi) {
      braze::mbarrier::arrive(&full[b]);
      continue;
    }
    unsigned bytes = 0;
#pragma unroll
    for (int i = 0; i < Program::kRowInputs; ++i) bytes += (hi - lo) * Program::rowInputBytes(i);
    braze::mbarrier::arriveExpectTx(&full[b], bytes);
#pragma unroll
    for (int i = 0; i < Program::kRowInputs; ++i) {
      const int size = Program::rowInputBytes(i);
      braze::tma::loadBytes(stage_rows + inputOffset(i) + lo * size,
                            program.rowInputAddress(i, row, begin + lo), (hi - lo) * size, &full[b]);
    }
  }
}

// The CTA's chunk of every column input, once.
__device__ __forceinline__ void issueColumns(const braze_row_program& program, const char* const* cols,
                                             unsigned long long* columns_full, long long begin,
                                             int length) {
  unsigned bytes = 0;
#pragma unroll
  for (int i = 0; i < Program::kColumnInputs; ++i) bytes += length * Program::columnInputBytes(i);
  if (bytes == 0) {
    braze::mbarrier::arrive(columns_full);
    return;
  }
  braze::mbarrier::arriveExpectTx(columns_full, bytes);
#pragma unroll
  for (int i = 0; i < Program::kColumnInputs; ++i)
    braze::tma::loadBytes(const_cast<char*>(cols[i]), program.columnInputAddress(i, begin),
                          length * Program::columnInputBytes(i), columns_full);
}

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    BRAZE_KERNEL_NAME(BRAZE_ROW_PARAMETERS) {
  braze_row_program program{BRAZE_ROW_ARGUMENTS};
  extern __shared__ __align__(128) unsigned char shared[];
  auto* full = reinterpret_cast<unsigned long long*>(shared + kFullOffset);
  auto* empty = reinterpret_cast<unsigned long long*>(shared + kEmptyOffset);
  auto* partials_full = reinterpret_cast<unsigned long long*>(shared + kPartialsFullOffset);
  auto* columns_full = reinterpret_cast<unsigned long long*>(shared + kColumnsFullOffset);
  const char* cols[Program::kColumnInputs > 0 ? Program::kColumnInputs : 1];
#pragma unroll
  for (int i = 0; i < Program::kColumnInputs; ++i)
    cols[i] = reinterpret_cast<const char*>(shared + kColumnsOffset + columnOffset(i));
  auto* warp_partials = reinterpret_cast<float*>(shared + kWarpPartialsOffset);
  auto* slots = reinterpret_cast<float*>(shared + kSlotsOffset);
  auto* row_stats = reinterpret_cast<float*>(shared + kStatsOffset);

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const unsigned rank = kCluster > 1 ? braze::cluster::ctaRank() : 0;
  const long long m = program.rowCount();
  const long long n = program.rowLength();
  const long long first_row = blockIdx.x / kCluster;
  const long long row_step = gridDim.x / kCluster;
  // This CTA's elements of every row: [begin, begin + length).
  const long long begin = n < (long long)rank * kChunk ? n : (long long)rank * kChunk;
  const int length = (int)((n < begin + kChunk ? n : begin + kChunk) - begin);

  if (threadIdx.x == 0) {
    for (int b = 0; b < kStages * kPieces; ++b) {
      braze::mbarrier::init(&full[b], 1);
      braze::mbarrier::init(&empty[b], kConsumerWarps);
    }
    for (int b = 0; b < 2 * kPasses; ++b) braze::mbarrier::init(&partials_full[b], kCluster);
    braze::mbarrier::init(columns_full, 1);
    braze::mbarrier::fenceInit();
  }
  if (kCluster > 1) {
    braze::cluster::sync();
  } else {
    __syncthreads();
  }

  if (kProducerWarp && warp == kConsumerWarps) {
    // The producer: part q of a stage as soon as the consumers released it, kStages rows ahead.
    if (lane == 0) {
      if (Program::kColumnInputs > 0) issueColumns(program, cols, columns_full, begin, length);
      int round = 0;
      for (long long row = first_row; row < m; row += row_step, ++round)
        issueRow(program, shared, full, empty, row, round, begin, length);
    }
  } else {
    if (!kProducerWarp && threadIdx.x == 0) {
      // The first kStages rows; each later one when its stage is released (below).
      if (Program::kColumnInputs > 0) issueColumns(program, cols, columns_full, begin, length);
      for (int r = 0; r < kStages && first_row + r * row_step < m; ++r)
        issueRow(program, shared, full, empty, first_row + r * row_step, r, begin, length);
    }
    if (Program::kColumnInputs > 0) braze::mbarrier::wait(columns_full, 0);
    float col[kColumnIterations][Program::kColumnSlots];
#pragma unroll
    for (int it = 0; it < kColumnIterations; ++it) {
#pragma unroll
      for (int s = 0; s < Program::kColumnSlots; ++s) col[it][s] = Program::columnIdentity(s / kV);
    }
    int round = 0;
    for (long long row = first_row; row < m; row += row_step, ++round) {
      const unsigned parity = round & 1;
      const int stage = round % kStages;
      const unsigned full_parity = (round / kStages) & 1;
      const char* rows[Program::kRowInputs];
#pragma unroll
      for (int i = 0; i < Program::kRowInputs; ++i)
        rows[i] = reinterpret_cast<const char*>(shared + stage * kStageBytes + inputOffset(i));
      program.prepareRow(-1, row);
      uint4 held[kHeldVectors][Program::kRowInputs];
      // The program reads held vector `it` of row input i at mine[it][i] (position 0).
      const char* mine[kHeldVectors][Program::kRowInputs];
#pragma unroll
      for (int it = 0; it < kHeldVectors; ++it) {
#pragma unroll
        for (int i = 0; i < Program::kRowInputs; ++i)
          mine[it][i] = reinterpret_cast<const char*>(&held[it][i]);
      }
      // Reduction operands the outputs read again (Program::kKept), per held vector.
      float kept[kHeldVectors][Program::kKeptSlots];
      if (kRegisterRows) {
        // This thread's vectors as their parts land, then the stage back to the producer.
        int landed = 0;
#pragma unroll
        for (int it = 0; it < kIterations; ++it) {
          const int e = (it * kConsumerThreads + threadIdx.x) * kV;
          if (e >= length) continue;
          for (; landed <= e / kPiece; ++landed)
            braze::mbarrier::wait(&full[stage * kPieces + landed], full_parity);
          holdVectors(held[it], rows, e);
        }
        // Every phase of every part is waited on by every thread, as in the passes from shared
        // memory: a part no thread reads (past a short chunk's end) still completes a phase.
        for (; landed < kPieces; ++landed)
          braze::mbarrier::wait(&full[stage * kPieces + landed], full_parity);
        __syncwarp();
        if (lane == 0) {
          for (int q = 0; q < kPieces; ++q) braze::mbarrier::arrive(&empty[stage * kPieces + q]);
        }
        // The next row streams in while this one is reduced and written from registers.
        if (!kProducerWarp && threadIdx.x == 0 && row + kStages * row_step < m)
          issueRow(program, shared, full, empty, row + kStages * row_step, round + kStages, begin,
                   length);
      }
#pragma unroll
      for (int pass = 0; pass < Program::kPasses; ++pass) {
        float acc[kK];
#pragma unroll
        for (int k = 0; k < kK; ++k) acc[k] = Program::identity(k);
        if (kRegisterRows) {
#pragma unroll
          for (int it = 0; it < kIterations; ++it) {
            const int e = (it * kConsumerThreads + threadIdx.x) * kV;
            if (e < length)
              program.accumulate(pass, row, begin + e, mine[it], 0, cols, e, acc, kept[it]);
          }
        } else {
#pragma unroll 1
          for (int q = 0; q < kPieces; ++q) {
            if (pass == 0) braze::mbarrier::wait(&full[stage * kPieces + q], full_parity);
            const int lo = q * kPiece < length ? q * kPiece : length;
            const int hi = lo + kPiece < length ? lo + kPiece : length;
#pragma unroll kPieceUnroll
            for (int e = lo + threadIdx.x * kV; e < hi; e += kConsumerThreads * kV)
              program.accumulate(pass, row, begin + e, rows, e, cols, e, acc, kept[0]);
          }
        }
        // The CTA's partial: warps, then warp 0 over the warps.
#pragma unroll
        for (int k = 0; k < kK; ++k) {
          if (Program::passOf(k) != pass) continue;
          const float value = warpCombine(k, acc[k]);
          if (lane == 0) warp_partials[warp * kK + k] = value;
        }
        braze::namedBarrierSync(kConsumerBarrier, kConsumerThreads);
        if (warp == 0) {
          float* pass_slots = slots + (parity * kPasses + pass) * kCluster * kK;
#pragma unroll
          for (int k = 0; k < kK; ++k) {
            if (Program::passOf(k) != pass) continue;
            float value = lane < kConsumerWarps ? warp_partials[lane * kK + k] : Program::identity(k);
            value = warpCombine(k, value);
            if (kCluster == 1) {
              if (lane == 0) row_stats[k] = value;
            } else if (lane < kCluster) {
              storeToPeer(pass_slots + rank * kK + k, lane, value);
            }
          }
          if (kCluster > 1) {
            // Every CTA pushed its partial into every peer's slots: combine them in rank order.
            unsigned long long* arrived = &partials_full[parity * kPasses + pass];
            if (lane < kCluster) arriveAtPeer(arrived, lane);
            braze::mbarrier::waitCluster(arrived, (round >> 1) & 1);
#pragma unroll
            for (int k = 0; k < kK; ++k) {
              if (Program::passOf(k) != pass) continue;
              float value = lane < kCluster ? pass_slots[lane * kK + k] : Program::identity(k);
              value = warpCombine(k, value);
              if (lane == 0) row_stats[k] = value;
            }
          }
        }
        braze::namedBarrierSync(kConsumerBarrier, kConsumerThreads);
#pragma unroll
        for (int k = 0; k < kK; ++k) {
          if (Program::passOf(k) == pass) program.stat[k] = row_stats[k];
        }
        program.prepareRow(pass, row);
      }
      if (kC > 0) {
        // The same elements of every row per thread, so that its column partials stay in
        // registers: the whole chunk, then every part back to the producer.
        if (Program::kPasses == 0) {
          for (int q = 0; q < kPieces; ++q) braze::mbarrier::wait(&full[stage * kPieces + q], full_parity);
        }
#pragma unroll
        for (int it = 0; it < kColumnIterations; ++it) {
          const int e = (it * kConsumerThreads + threadIdx.x) * kV;
          if (e < length) program.store(row, begin + e, rows, e, cols, e, col[it], kept[0]);
        }
        __syncwarp();
        if (lane == 0) {
          for (int q = 0; q < kPieces; ++q) braze::mbarrier::arrive(&empty[stage * kPieces + q]);
        }
      } else if (kRegisterRows) {
        float none[Program::kColumnSlots];
#pragma unroll
        for (int it = 0; it < kIterations; ++it) {
          const int e = (it * kConsumerThreads + threadIdx.x) * kV;
          if (e < length) program.store(row, begin + e, mine[it], 0, cols, e, none, kept[it]);
        }
      } else {
        // Every output from the chunk; each part goes back to the producer once written.
        float none[Program::kColumnSlots];
#pragma unroll 1
        for (int q = 0; q < kPieces; ++q) {
          if (Program::kPasses == 0) braze::mbarrier::wait(&full[stage * kPieces + q], full_parity);
          const int lo = q * kPiece < length ? q * kPiece : length;
          const int hi = lo + kPiece < length ? lo + kPiece : length;
#pragma unroll kPieceUnroll
          for (int e = lo + threadIdx.x * kV; e < hi; e += kConsumerThreads * kV)
            program.store(row, begin + e, rows, e, cols, e, none, kept[0]);
          __syncwarp();
          if (lane == 0) braze::mbarrier::arrive(&empty[stage * kPieces + q]);
        }
      }
      if (rank == 0 && threadIdx.x == 0) program.storeRow(row);
      if (!kProducerWarp && !kRegisterRows) {
        if (threadIdx.x == 0 && row + kStages * row_step < m)
          issueRow(program, shared, full, empty, row + kStages * row_step, round + kStages, begin,
                   length);
        __syncwarp();
      }
    }
    if (kC > 0) {
      float* partials = columnPartials(program.workspace);
      const long long cluster_id = blockIdx.x / kCluster;
      const long long clusters = gridDim.x / kCluster;
#pragma unroll
      for (int it = 0; it < kColumnIterations; ++it) {
        const int e = (it * kConsumerThreads + threadIdx.x) * kV;
        if (e >= length) continue;
#pragma unroll
        for (int k = 0; k < kC; ++k)
          braze_row_copy<4 * kV>(partials + (k * clusters + cluster_id) * n + begin + e, &col[it][k * kV]);
      }
    }
  }
  if (kC > 0) finishColumns(program, shared);
  // Peers may still push partials into this CTA's shared memory until every CTA is done.
  if (kCluster > 1) braze::cluster::sync();
}
)CUDA";

}  // namespace

int64_t pieceElements(const RowTemplateShape& shape) {
  const int64_t piece = (shape.chunk + shape.pieces - 1) / shape.pieces;
  return (piece + shape.unit - 1) / shape.unit * shape.unit;
}

int64_t rowTemplateThreads(const RowTemplateShape& shape) {
  return shape.consumer_threads + (producerWarp(shape) ? 32 : 0);
}

int64_t columnPartialRegisters(const RowTemplateShape& shape) {
  const int64_t per_sweep = shape.consumer_threads * shape.vector;
  return (shape.chunk + per_sweep - 1) / per_sweep * shape.column_reductions * shape.vector;
}

int64_t heldRowRegisters(const RowTemplateShape& shape) {
  if (!shape.register_rows) return 0;
  const int64_t per_sweep = shape.consumer_threads * shape.vector;
  // holdVectors keeps a 16-byte vector per row input; narrower ones leave registers unused,
  // which the compiler drops.
  int64_t registers = 0;
  for (const int64_t bytes : shape.row_input_bytes) registers += (shape.vector * bytes + 3) / 4;
  registers += shape.kept_operands * shape.vector;
  return (shape.chunk + per_sweep - 1) / per_sweep * registers;
}

Val* columnWorkspaceBytes(Fusion& fusion, const RowTemplateShape& shape, Val* clusters, Val* n) {
  // The layout columnPartials() and finishColumns() read: two 8-byte counters, then floats.
  return add(fusion.constantIndex(kColumnPartialsOffset),
             mul(mul(clusters, n), fusion.constantIndex(4 * shape.column_reductions)));
}

namespace {
int64_t finishBytes(const RowTemplateShape& shape) {
  return shape.column_reductions > 0
             ? rowTemplateThreads(shape) / 32 * shape.column_reductions * 128 * 4
             : 0;
}
}  // namespace

int64_t rowTemplateSharedBytes(const RowTemplateShape& shape) {
  const int64_t reductions = std::max<int64_t>(shape.reductions, 1);
  const int64_t passes = std::max<int64_t>(shape.passes, 1);
  int64_t bytes = 0;
  for (const int64_t size : shape.row_input_bytes) bytes += align128(shape.chunk * size);
  bytes *= shape.stages;
  for (const int64_t size : shape.column_input_bytes) bytes += align128(shape.chunk * size);
  // The column totals of each warp reuse the row buffers at the end.
  bytes = std::max(bytes, finishBytes(shape));
  bytes += 8 * 2 * shape.stages * shape.pieces + 8 * 2 * passes + 8;
  bytes += 4 * (shape.consumer_threads / 32) * reductions;
  bytes += 4 * 2 * passes * shape.cluster * reductions;
  bytes += 4 * reductions;
  return bytes;
}

std::string rowTemplateSource(const RowTemplateShape& shape) {
  BRAZE_USER_CHECK(shape.consumer_threads % 32 == 0 && shape.consumer_threads >= 32 &&
                   shape.consumer_threads <= 992)
      << "tma_ws_normalization: " << shape.consumer_threads
      << " consumer threads; a multiple of 32 from 32 to 992";
  BRAZE_USER_CHECK(shape.chunk > 0 && shape.chunk % shape.unit == 0)
      << "tma_ws_normalization: a chunk of " << shape.chunk << " elements is not a multiple of "
      << shape.unit;
  std::string source = kSource;
  replaceAll(source, "@CLUSTER@", std::to_string(shape.cluster));
  replaceAll(source, "@THREADS@", std::to_string(shape.consumer_threads));
  replaceAll(source, "@PIECES@", std::to_string(shape.pieces));
  replaceAll(source, "@STAGES@", std::to_string(shape.stages));
  replaceAll(source, "@MIN_BLOCKS@", std::to_string(shape.min_blocks_per_sm));
  replaceAll(source, "@REGISTER_ROWS@", shape.register_rows ? "true" : "false");
  replaceAll(source, "@PRODUCER_WARP@", producerWarp(shape) ? "true" : "false");
  replaceAll(source, "@PARTIALS_OFFSET@", std::to_string(kColumnPartialsOffset));
  replaceAll(source, "@CHUNK@", std::to_string(shape.chunk));
  replaceAll(source, "@PIECE@", std::to_string(pieceElements(shape)));
  return source;
}

}  // namespace braze::tma_ws_normalization
