#pragma once

// The matmul scheduler's kernel template: a warp-specialized GEMM for Hopper, C [(batch...,) M,
// N] = A [(batch...,) M, K] · B [(batch...,) K, N] with fp32 accumulation, handed to the fusion's
// epilogue (code generation writes it from the ops after the matmul:
// braze/codegen/template_epilogue.h), which rounds C to the inputs' dtype, applies bias,
// activations, residuals and casts, and stores every output.
//
//   block (tile_m = 128) x (tile_n) of C; 384 threads = 3 warp groups
//   warp group 0 (producer, 40 registers): one thread walks K in steps of tile_k, waits for a
//     free stage of the ring (empty barrier), announces its bytes on the stage's full barrier
//     and issues the tensor copies of A's and B's tiles (128-byte swizzled boxes)
//   warp groups 1, 2 (consumers, 232 registers): each multiplies 64 rows with wgmma
//     m64n<tile_n>k16 from the stage's tiles, keeps one wgmma group in flight and hands the
//     previous stage back once its group has finished; then hands its accumulators to the
//     epilogue as pairs of columns. With tma_store the first output goes out through shared
//     memory: 64-column chunks written with stmatrix, each stored by a bulk tensor copy that
//     runs on while the consumers start the next tile (the epilogue's other outputs, and the
//     first without tma_store, are stored by the epilogue from registers)
//   blocks are persistent (at most one per SM): each walks tiles gridDim.x apart, and the
//   producer loads the next tile while the consumers run the previous tile's epilogue;
//   tiles are visited batch by batch, in groups of group_m tile rows, so a wave's B tiles
//   stay in L2
//
// Layouts: each operand is stored with K innermost ("K-major": A [M, K] row-major, linear's
// weight [N, K]) or with its M or N dim innermost ("MN-major": a column-major A, matmul's
// b [K, N] row-major). A K-major tile is one box of rows x 64 K (one 128-byte swizzled row
// each); an MN-major tile is boxes of 64 rows (128 bytes) x 64 K, one per 64 rows, which
// wgmma reads transposed. Batch dims (up to three: the copy engine's maps have five dims) are
// the maps' outer dims, numpy-broadcast between the operands: an operand with fewer batch dims
// lines up with the result's last ones, and a batch dim of size 1 is read at 0.
//
// Converted operands (GemmLayout::a_convert, b_convert: fp32 inputs cast to the operand type,
// K-major): the producer thread copies their fp32 tiles into a staging ring of two stages
// (boxes of 32 columns, 128-byte swizzled rows), and warps 1-3 of the producer group round
// each into the operand ring's stage, laid out as a copy of the 16-bit tile would be, fence
// the writes for wgmma and arrive on the stage's full barrier (which then counts the copy
// issuer and the three warps). The producer group keeps 56 registers for it, the consumers 224.
//
// K tails read zeros (the copy engine fills outside the tensor); M and N tails are predicated
// epilogue calls. An odd N takes epilogue calls of one column (epilogue_vector 1) instead of
// pairs; every stride but the innermost a multiple of 16 bytes (the copy engine's rule).
// Parameters: the map of A, the map of B, with tma_store the map of the first output (64 x 64
// boxes, 128-byte swizzle), A (for its sizes), B (for its sizes), then the epilogue's.

#include <algorithm>
#include <cstdint>
#include <string>

namespace braze::matmul_scheduler {

/// How the operands are stored and shaped; the scheduler reads it off the fusion.
struct GemmLayout {
  bool a_mn_major = false;  ///< A's M dim is innermost (column-major A)
  bool b_mn_major = false;  ///< B's N dim is innermost (matmul's row-major b)
  int a_rank = 2;           ///< 2 plus A's leading batch dims
  int b_rank = 2;
  int b_n_dim = 0;  ///< B's dim that is N: 0 for linear's weight [N, K]
  /// A's dims that are M and K: its last two, swapped where the contraction reads a transpose
  /// of the input ([..., K, M]).
  int a_m_dim = 0;
  int a_k_dim = 1;
  int batch_dims = 0;  ///< the result's leading batch dims, 0 to kMaxBatchDims
  /// A (B) is the fp32 input of a cast to the operand type (K-major): its tiles are copied into
  /// a staging ring of fp32 and converted into the operand ring by the producer warp group.
  bool a_convert = false;
  bool b_convert = false;
};

struct GemmShape {
  int64_t tile_m = 128;
  int64_t tile_n = 256;
  int64_t tile_k = 64;
  int64_t stages = 4;
  int64_t group_m = 8;
  bool fp16 = false;  ///< fp16 operands and result; bf16 otherwise
  GemmLayout layout = {};
  /// CTAs of a cluster that split one tile's K range and add their partial sums through
  /// distributed shared memory; 1: no split. With a split every cluster takes one tile.
  int64_t split_k = 1;
  /// CTAs of a cluster that compute vertically adjacent tiles and share their B tile: each
  /// copies half of it to both (TMA multicast), halving B's reads from L2. 1 or 2.
  int64_t cluster_m = 1;
  /// The fusion's first output (16-bit) leaves through shared memory: each consumer writes
  /// 64-column chunks with stmatrix and one thread stores each with a bulk tensor copy, which
  /// runs on while the consumers go on to the next tile. Without a split only.
  bool tma_store = false;
  /// MatmulParams::vector_inputs: fusion inputs the epilogue loads in pairs.
  uint64_t vector_inputs = 0;
  /// Columns per epilogue call: 2 (pairs, N even) or 1 (N odd; no tma_store).
  int64_t epilogue_vector = 2;
};

/// Batch dims a kernel takes: a tensor map has at most five dims, two of them K and M or N.
constexpr int kMaxBatchDims = 3;

/// Shared memory an sm_90 block may opt into.
constexpr int64_t kSharedBytesPerBlock = 227 * 1024;
/// The output chunks of GemmShape::tma_store: two buffers of 64 x 64 16-bit elements per
/// consumer warp group.
constexpr int64_t kTmaStoreBytes = 2 * 2 * 64 * 128;

/// Stages of the fp32 staging ring of converted operands (GemmLayout::a_convert, b_convert).
constexpr int64_t kConvertStages = 2;

/// The staging ring of converted operands: two stages of their fp32 tiles, 64 deep.
inline int64_t gemmStagingBytes(const GemmLayout& layout, int64_t tile_m, int64_t tile_n) {
  return kConvertStages * 64 * 4 *
         ((layout.a_convert ? tile_m : 0) + (layout.b_convert ? tile_n : 0));
}

/// Dynamic shared memory of the kernel: the ring of A and B tiles, the output chunks with
/// tma_store, the staging ring of converted operands, and 1024 bytes of slack for aligning
/// them to the swizzle pattern's 1024 bytes.
inline int64_t gemmSharedBytes(const GemmShape& shape) {
  return shape.stages * (shape.tile_m + shape.tile_n) * shape.tile_k * 2 +
         (shape.tma_store ? kTmaStoreBytes : 0) +
         gemmStagingBytes(shape.layout, shape.tile_m, shape.tile_n) + 1024;
}

/// The deepest ring (at most 8 stages) of 128 x 64 and tile_n x 64 tiles that fits a block's
/// shared memory beside the output chunks (with tma_store), the staging ring of converted
/// operands, the alignment slack and the barriers.
inline int64_t maxGemmStages(int64_t tile_n, bool tma_store = false,
                             const GemmLayout& layout = {}) {
  return std::max<int64_t>(
      0, std::min<int64_t>(8, (kSharedBytesPerBlock - 2048 - (tma_store ? kTmaStoreBytes : 0) -
                               gemmStagingBytes(layout, 128, tile_n)) /
                                  ((128 + tile_n) * 64 * 2)));
}

/// The kernel's CUDA C++ for `shape`, its entry point spelled BRAZE_KERNEL_NAME.
inline std::string gemmTemplateSource(const GemmShape& shape) {
  const auto constant = [](const char* type, const char* name, int64_t value) {
    return std::string("constexpr ") + type + " " + name + " = " + std::to_string(value) + ";\n";
  };
  const GemmLayout& layout = shape.layout;
  // The epilogue's first indices are the batch dims': parameters and arguments of the
  // functions that call it, and the arguments where the kernel calls those.
  std::string batch_parameters, batch_index, batch_arguments, batch_coordinates;
  for (int j = 0; j < layout.batch_dims; ++j) {
    const std::string b = std::to_string(j);
    batch_parameters += "int b" + b + ", ";
    batch_index += "b" + b + ", ";
    batch_arguments += "bi[" + b + "], ";
    // C's map lists its dims innermost first: the last batch dim right after M.
    batch_coordinates += ", bi[" + std::to_string(layout.batch_dims - 1 - j) + "]";
  }
  return constant("int", "kBlockM", shape.tile_m) + constant("int", "kBlockN", shape.tile_n) +
         constant("int", "kBlockK", shape.tile_k) + constant("int", "kStages", shape.stages) +
         constant("int", "kGroupM", shape.group_m) + constant("int", "kSplitK", shape.split_k) +
         constant("int", "kClusterM", shape.cluster_m) +
         constant("bool", "kTmaStore", shape.tma_store) +
         constant("int", "kEpilogueVector", shape.epilogue_vector) +
         constant("unsigned long long", "kVectorInputs",
                  static_cast<int64_t>(shape.vector_inputs)) +
         constant("bool", "kAMnMajor", layout.a_mn_major) +
         constant("bool", "kBMnMajor", layout.b_mn_major) +
         constant("int", "kARank", layout.a_rank) + constant("int", "kBRank", layout.b_rank) +
         constant("int", "kBNDim", layout.b_n_dim) + constant("int", "kAMDim", layout.a_m_dim) +
         constant("int", "kAKDim", layout.a_k_dim) +
         constant("int", "kBatchDims", layout.batch_dims) +
         constant("bool", "kAConvert", layout.a_convert) +
         constant("bool", "kBConvert", layout.b_convert) +
         "using Operand = braze::wgmma::" + (shape.fp16 ? "F16" : "Bf16") + ";\n" + R"(
constexpr int kConsumerThreads = 256;
// CTAs per cluster: a split of K or a pair sharing B (never both).
constexpr int kClusterCtas = kSplitK * kClusterM;
// Converted operands: fp32 tiles staged in two 64-deep halves of 32 columns (128-byte rows),
// converted by the producer warp group's warps 1-3, which need registers for it.
constexpr bool kConverts = kAConvert || kBConvert;
constexpr int kConvertStages = 2;
constexpr int kConverterThreads = 96;
constexpr unsigned kStagedABytes = kAConvert ? kBlockM * kBlockK * 4 : 0;
constexpr unsigned kStagedBBytes = kBConvert ? kBlockN * kBlockK * 4 : 0;
constexpr int kProducerRegisters = kConverts ? 56 : 40;
constexpr int kConsumerRegisters = kConverts ? 224 : 232;
static_assert(!kBConvert || kClusterM == 1, "pairs multicast B as it is stored");
constexpr unsigned kTileABytes = kBlockM * kBlockK * 2;
constexpr unsigned kTileBBytes = kBlockN * kBlockK * 2;
// One MN-major box: 64 rows of 128 bytes by kBlockK.
constexpr unsigned kMnBoxBytes = 64 * kBlockK * 2;
constexpr unsigned kRingBytes = kStages * (kTileABytes + kTileBBytes);
// With kTmaStore: one chunk of C, 64 rows of 64 16-bit columns (128-byte swizzled rows).
constexpr unsigned kChunkBytes = 64 * 128;
using ASizes = braze::Tensor<unsigned short, kARank, IndexT>;
using BSizes = braze::Tensor<unsigned short, kBRank, IndexT>;
// Arrays of one per batch dim (one unused slot without batch dims).
constexpr int kBatchSlots = kBatchDims > 0 ? kBatchDims : 1;

// The problem's sizes in tiles, read from the operands.
struct Problem {
  int m, n, k_tiles, tiles_m, tiles_n, batches;
  int batch_sizes[kBatchSlots];  // the result's, operands broadcast against each other
  __device__ __forceinline__ Problem(const ASizes& a, const BSizes& b) {
    m = a.size[kAMDim];
    n = b.size[kBNDim];
    k_tiles = (a.size[kAKDim] + kBlockK - 1) / kBlockK;
    tiles_m = (m + kBlockM * kClusterM - 1) / (kBlockM * kClusterM);
    tiles_n = (n + kBlockN - 1) / kBlockN;
    batches = 1;
#pragma unroll
    for (int j = 0; j < kBatchDims; ++j) {
      // Operands line up with the result's last batch dims.
      const int ja = j - (kBatchDims - (kARank - 2));
      const int jb = j - (kBatchDims - (kBRank - 2));
      batch_sizes[j] = max(ja >= 0 ? int(a.size[max(ja, 0)]) : 1,
                           jb >= 0 ? int(b.size[max(jb, 0)]) : 1);
      batches *= batch_sizes[j];
    }
  }
  // The index along each batch dim of batch `batch` (row-major over the result's batch dims).
  __device__ __forceinline__ void batchIndices(int batch, int (&bi)[kBatchSlots]) const {
    bi[0] = 0;
#pragma unroll
    for (int j = kBatchDims - 1; j >= 0; --j) {
      bi[j] = batch % batch_sizes[j];
      batch /= batch_sizes[j];
    }
  }
  __device__ __forceinline__ int tiles() const { return tiles_m * tiles_n * batches; }
  // The batch and the first row and column of tile `tile` of C: tiles are numbered batch by
  // batch, in groups of kGroupM tile rows, down a group's rows first, so consecutive tiles
  // (the blocks running at once) share their B tiles in L2. With kClusterM = 2 a tile is the
  // pair of tiles one cluster computes, kBlockM * 2 rows.
  __device__ __forceinline__ void origin(int tile, int& batch, int& m0, int& n0) const {
    batch = tile / (tiles_m * tiles_n);
    tile -= batch * tiles_m * tiles_n;
    const int group = tile / (kGroupM * tiles_n);
    const int first_m = group * kGroupM;
    const int group_rows = min(tiles_m - first_m, kGroupM);
    const int in_group = tile - group * kGroupM * tiles_n;
    m0 = (first_m + in_group % group_rows) * kBlockM * kClusterM;
    n0 = (in_group / group_rows) * kBlockN;
  }
};

// An operand's coordinates along its batch dims (dim i of kRank - 2) for the result's batch
// indices `bi`: the result's last batch dims, 0 where the operand's size is 1 (broadcast).
template <int kRank, typename Sizes>
__device__ __forceinline__ void operandBatch(const Sizes& sizes, const int (&bi)[kBatchSlots],
                                             int (&coordinates)[kBatchSlots]) {
  coordinates[0] = 0;
#pragma unroll
  for (int i = 0; i < kRank - 2; ++i)
    coordinates[i] = sizes.size[i] == 1 ? 0 : bi[kBatchDims - (kRank - 2) + i];
}

// Copies the box at (c0, c1) of batch coordinates `batch` (operandBatch) into `box`: into this
// CTA, or (kToPair) into both CTAs of a pair at the same offsets, signalling each one's `full`.
// A map lists its dims innermost first: the operand's last batch dim comes right after c1.
template <bool kToPair, int kRank>
__device__ __forceinline__ void copyBox(unsigned char* box, const braze::TensorMap* map,
                                        unsigned long long* full, int c0, int c1,
                                        const int (&batch)[kBatchSlots]) {
  constexpr unsigned short kPair = 0b11;
  static_assert(!kToPair || kRank <= 3, "pairs sharing B take one batch dim at most");
  if constexpr (kToPair && kRank == 3)
    braze::tma::loadMulticast(box, map, full, kPair, c0, c1, batch[0]);
  else if constexpr (kToPair)
    braze::tma::loadMulticast(box, map, full, kPair, c0, c1);
  else if constexpr (kRank == 5)
    braze::tma::load(box, map, full, c0, c1, batch[kBatchSlots - 1], batch[1], batch[0]);
  else if constexpr (kRank == 4)
    braze::tma::load(box, map, full, c0, c1, batch[kBatchSlots > 1 ? 1 : 0], batch[0]);
  else if constexpr (kRank == 3)
    braze::tma::load(box, map, full, c0, c1, batch[0]);
  else
    braze::tma::load(box, map, full, c0, c1);
}

// Copies part `part` of kParts of an operand's tile, rows [row0, row0 + kRows) and K
// [k, k + kBlockK) at batch coordinates `batch` (operandBatch): kParts = 1 is the whole tile into this CTA; kParts = 2 is this CTA's half of the B
// tile a pair shares, copied into both.
template <bool kMnMajor, int kRank, int kRows, int kParts>
__device__ __forceinline__ void loadTile(unsigned char* tile, const braze::TensorMap* map,
                                         unsigned long long* full, int k, int row0,
                                         const int (&batch)[kBatchSlots], int part) {
  constexpr bool kToPair = kParts > 1;
  if constexpr (!kMnMajor) {
    const int first = part * (kRows / kParts);
    copyBox<kToPair, kRank>(tile + first * kBlockK * 2, map, full, k, row0 + first, batch);
  } else {
#pragma unroll
    for (int box = 0; box < kRows / 64 / kParts; ++box) {
      const int c = part * (kRows / 64 / kParts) + box;
      copyBox<kToPair, kRank>(tile + c * kMnBoxBytes, map, full, row0 + 64 * c, k, batch);
    }
  }
}

// Copies a converted operand's fp32 tile, rows [row0, row0 + kRows) and K [k, k + kBlockK), into
// `staged` as two boxes of 32 columns (128-byte swizzled rows), one after the other.
template <int kRank, int kRows>
__device__ __forceinline__ void loadStaged(unsigned char* staged, const braze::TensorMap* map,
                                           unsigned long long* full, int k, int row0,
                                           const int (&batch)[kBatchSlots]) {
#pragma unroll
  for (int half = 0; half < kBlockK / 32; ++half)
    copyBox<false, kRank>(staged + half * kRows * 128, map, full, k + 32 * half, row0, batch);
}

// Converter thread t (of kConverterThreads) rounds its share of a staged fp32 tile (loadStaged)
// into `tile`, laid out as the copy engine lays out a K-major tile: row r's 16-byte unit u (8
// elements) at unit u ^ (r % 8), the same swizzle the staged rows of 32 fp32 have.
template <int kRows>
__device__ __forceinline__ void convertTile(unsigned char* tile, const unsigned char* staged,
                                            int t) {
  // Units go in batches of kBatch per thread, every load of a batch issued before its first
  // conversion: three warps have too few threads to hide shared-memory latency one unit at a
  // time.
  constexpr int kUnits = kRows * 8;
  constexpr int kBatch = 2;
  constexpr int kPerThread = (kUnits + kConverterThreads - 1) / kConverterThreads;
#pragma unroll 1
  for (int first = 0; first < kPerThread; first += kBatch) {
    float4 lo[kBatch], hi[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = t + (first + j) * kConverterThreads;
      if (i >= kUnits) continue;
      const int r = i / 8, u = i % 8, swizzle = r % 8;
      // Unit u holds columns 8u .. 8u + 7: units 2 (u % 4) and 2 (u % 4) + 1 of half u / 4.
      const unsigned char* row = staged + (u / 4) * kRows * 128 + r * 128;
      const int v = 2 * (u % 4);
      lo[j] = *reinterpret_cast<const float4*>(row + 16 * (v ^ swizzle));
      hi[j] = *reinterpret_cast<const float4*>(row + 16 * ((v + 1) ^ swizzle));
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = t + (first + j) * kConverterThreads;
      if (i >= kUnits) continue;
      const int r = i / 8, u = i % 8;
      uint4 packed;
      packed.x = braze::wgmma::pack(Operand{}, lo[j].x, lo[j].y);
      packed.y = braze::wgmma::pack(Operand{}, lo[j].z, lo[j].w);
      packed.z = braze::wgmma::pack(Operand{}, hi[j].x, hi[j].y);
      packed.w = braze::wgmma::pack(Operand{}, hi[j].z, hi[j].w);
      *reinterpret_cast<uint4*>(tile + r * 128 + 16 * (u ^ (r % 8))) = packed;
    }
  }
}

// Hands a stage back to the producer; with a pair, to both producers (each copies half of B
// into this CTA's stage). One arrival per consumer warp: the warp's wgmma.wait_group has
// returned in all its lanes together.
__device__ __forceinline__ void releaseStage(unsigned long long* empty) {
  if (threadIdx.x % 32 == 0) {
    braze::mbarrier::arrive(empty);
    if constexpr (kClusterM > 1)
      braze::mbarrier::arriveCluster(empty, braze::cluster::ctaRank() ^ 1);
  }
}

// The descriptor of a tile as loadTile lays it out. K-major: 8-row groups 1024 bytes apart
// (the leading offset is fixed by the swizzle). MN-major: 8-K groups 1024 bytes apart, boxes
// of 64 rows kMnBoxBytes apart.
template <bool kMnMajor>
__device__ __forceinline__ unsigned long long tileDescriptor(const unsigned char* tile) {
  return braze::wgmma::descriptor(tile, kMnMajor ? kMnBoxBytes : 16, 1024,
                                  braze::wgmma::Swizzle::B128);
}
// Split-K: the CTAs of a cluster hold partial sums of one tile. Each stores its accumulators in
// its ring (idle once every CTA has finished its K range: one tile per cluster); after a
// cluster barrier, CTA `split` adds up column groups j = split, split + kSplitK, ... from every
// CTA's partials into `sums` (sums[4 jj + q] is d[4 (jj kSplitK + split) + q] of the whole
// tile), which it alone hands to the epilogue. A last barrier keeps every CTA's partials in
// place until its peers have read them.
template <int kCount>
__device__ __forceinline__ void gatherSplits(const float (&d)[kCount],
                                             float (&sums)[kCount / kSplitK],
                                             unsigned char* shared, int consumer, int split) {
  braze::cluster::sync();
  float4* partials = reinterpret_cast<float4*>(shared) + consumer * (kCount / 4) * 128;
  const int t = braze::warpgroup::threadRank();
#pragma unroll
  for (int j = 0; j < kCount / 4; ++j) {
    float4 v;
    v.x = d[4 * j];
    v.y = d[4 * j + 1];
    v.z = d[4 * j + 2];
    v.w = d[4 * j + 3];
    partials[j * 128 + t] = v;
  }
  braze::cluster::sync();
#pragma unroll
  for (int jj = 0; jj < kCount / 4 / kSplitK; ++jj) {
    const float4* mine = &partials[(jj * kSplitK + split) * 128 + t];
    float4 sum = *mine;
#pragma unroll
    for (int r = 1; r < kSplitK; ++r) {
      const float4 v = braze::cluster::loadShared4(
          braze::cluster::mapShared(mine, static_cast<unsigned>((split + r) % kSplitK)));
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    sums[4 * jj] = sum.x;
    sums[4 * jj + 1] = sum.y;
    sums[4 * jj + 2] = sum.z;
    sums[4 * jj + 3] = sum.w;
  }
  braze::cluster::sync();
}

// Hands columns cc and cc + 1 of row r to the epilogue, which stores them from registers: as a
// pair (kVector 2, N even), or one at a time (kVector 1, N odd). Elements outside C are computed
// at the nearest element inside (so every load is in bounds and none waits on a branch) and not
// stored.
template <int kVector>
__device__ __forceinline__ void storePair(const Problem& p, )" +
         batch_parameters + R"(int r, int cc, float x0,
                                          float x1 BRAZE_EPILOGUE_PARAMETERS) {
  if constexpr (kVector == 2) {
    const float pair[kVector] = {x0, x1};  // sized by kVector: checked only where used
    braze_epilogue_if<kVectorInputs>(r < p.m && cc + 1 < p.n, )" +
         batch_index + R"(min(r, p.m - 1), min(cc, p.n - 2),
                                     pair BRAZE_EPILOGUE_ARGUMENTS);
  } else {
    const float first[kVector] = {x0};
    const float second[kVector] = {x1};
    braze_epilogue_if<kVectorInputs>(r < p.m && cc < p.n, )" +
         batch_index + R"(min(r, p.m - 1), min(cc, p.n - 1),
                                     first BRAZE_EPILOGUE_ARGUMENTS);
    braze_epilogue_if<kVectorInputs>(r < p.m && cc + 1 < p.n, )" +
         batch_index + R"(min(r, p.m - 1),
                                     min(cc + 1, p.n - 1), second BRAZE_EPILOGUE_ARGUMENTS);
  }
}

// The first output's values at columns cc and cc + 1 of row r, packed for stmatrix (kTmaStore,
// which takes pairs only); the epilogue stores the other outputs. A template, so that a kernel
// of single columns never compiles the call.
template <int kVector>
__device__ __forceinline__ unsigned stagePair(const Problem& p, )" +
         batch_parameters + R"(int r, int cc, float x0,
                                              float x1 BRAZE_EPILOGUE_PARAMETERS) {
  const float pair[kVector] = {x0, x1};
  braze_staged_output staged;
  braze_epilogue_staged<kVectorInputs>(r < p.m && cc < p.n, )" +
         batch_index + R"(min(r, p.m - 1), min(cc, p.n - 2), pair,
                                       staged BRAZE_EPILOGUE_ARGUMENTS);
  return *reinterpret_cast<const unsigned*>(&staged);
}

// How far one k16 step moves a descriptor: 16 elements along a swizzled row (K-major), or 16
// rows of 128 bytes (MN-major).
template <bool kMnMajor>
constexpr unsigned kStepBytes = kMnMajor ? 16 * 128 : 32;

extern "C" __global__ void __launch_bounds__(384, 1)
BRAZE_KERNEL_NAME(const __grid_constant__ braze::TensorMap a,
                  const __grid_constant__ braze::TensorMap b, )" +
         (shape.tma_store ? "const __grid_constant__ braze::TensorMap c, " : "") + R"(
                  ASizes a_sizes, BSizes b_sizes BRAZE_EPILOGUE_PARAMETERS) {
  // The map of the first output, which kTmaStore stores through shared memory.
  const braze::TensorMap* c_map = )" +
         (shape.tma_store ? "&c" : "nullptr") + R"(;
  extern __shared__ unsigned char shared_raw[];
  unsigned char* shared = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(shared_raw) + 1023) & ~1023ull);
  unsigned char* tiles_a = shared;
  unsigned char* tiles_b = shared + kStages * kTileABytes;
  // Converted operands' fp32 tiles, after the ring and the output chunks.
  unsigned char* staged_a = shared + kRingBytes + (kTmaStore ? 4 * kChunkBytes : 0);
  unsigned char* staged_b = staged_a + kConvertStages * kStagedABytes;
  __shared__ __align__(8) unsigned long long full[kStages];
  __shared__ __align__(8) unsigned long long empty[kStages];
  __shared__ __align__(8) unsigned long long staged_full[kConvertStages];
  __shared__ __align__(8) unsigned long long staged_empty[kConvertStages];

  if (threadIdx.x == 0) {
    braze::tma::prefetchTensorMap(&a);
    braze::tma::prefetchTensorMap(&b);
    for (int s = 0; s < kStages; ++s) {
      // The copy issuer, and each converter warp when an operand is converted.
      braze::mbarrier::init(&full[s], 1 + (kConverts ? kConverterThreads / 32 : 0));
      // A pair's stage is free once the consumers of both CTAs have released it.
      braze::mbarrier::init(&empty[s], kConsumerThreads / 32 * kClusterM);
    }
    for (int s = 0; s < kConvertStages; ++s) {
      braze::mbarrier::init(&staged_full[s], 1);
      braze::mbarrier::init(&staged_empty[s], kConverterThreads / 32);
    }
    braze::mbarrier::fenceInit();
  }
  // A peer may copy into this CTA or arrive on its barriers only once they are initialized.
  if constexpr (kClusterM > 1) braze::cluster::sync();
  else __syncthreads();

  // Each role reads the sizes after changing its register count: values live across
  // setmaxnreg are spilled. Blocks walk tiles gridDim.x apart. The ring's stages and barrier
  // phases run on across tiles (`it` counts every K step of the block), so the producer fills
  // the next tile's stages while the consumers are in the previous tile's epilogue.
  if (braze::warpgroup::index() == 0) {
    braze::warpgroup::decreaseRegisters<kProducerRegisters>();
    const Problem p(a_sizes, b_sizes);
    const int split = kSplitK > 1 ? int(braze::cluster::ctaRank()) : 0;
    if (kConverts && threadIdx.x >= 32) {
      // Converter warps: for every K step, the staged fp32 tiles into the ring's stage.
      const int t = threadIdx.x - 32;
      int it = 0;
      for (int tile = blockIdx.x / kClusterCtas; tile < p.tiles();
           tile += gridDim.x / kClusterCtas) {
        const int kt_count = p.k_tiles * (split + 1) / kSplitK - p.k_tiles * split / kSplitK;
        for (int kt = 0; kt < kt_count; ++kt, ++it) {
          const int sc = it % kConvertStages;
          const int s = it % kStages;
          braze::mbarrier::wait(&staged_full[sc], (it / kConvertStages) & 1);
          if (it >= kStages) braze::mbarrier::wait(&empty[s], (it / kStages - 1) & 1);
          if constexpr (kAConvert)
            convertTile<kBlockM>(tiles_a + s * kTileABytes, staged_a + sc * kStagedABytes, t);
          if constexpr (kBConvert)
            convertTile<kBlockN>(tiles_b + s * kTileBBytes, staged_b + sc * kStagedBBytes, t);
          // The writes reach wgmma (the async proxy) before the stage is announced full.
          braze::fenceProxyAsyncShared();
          __syncwarp();
          if (threadIdx.x % 32 == 0) {
            braze::mbarrier::arrive(&full[s]);
            braze::mbarrier::arrive(&staged_empty[sc]);
          }
        }
      }
    } else if (threadIdx.x == 0) {
      int it = 0;
      const int pair_rank = kClusterM > 1 ? int(braze::cluster::ctaRank()) : 0;
      for (int tile = blockIdx.x / kClusterCtas; tile < p.tiles();
           tile += gridDim.x / kClusterCtas) {
        int batch, m0, n0;
        p.origin(tile, batch, m0, n0);
        m0 += pair_rank * kBlockM;
        int bi[kBatchSlots], a_batch[kBatchSlots], b_batch[kBatchSlots];
        p.batchIndices(batch, bi);
        operandBatch<kARank>(a_sizes, bi, a_batch);
        operandBatch<kBRank>(b_sizes, bi, b_batch);
        const int kt_end = p.k_tiles * (split + 1) / kSplitK;
        for (int kt = p.k_tiles * split / kSplitK; kt < kt_end; ++kt, ++it) {
          if constexpr (kConverts) {
            // Converted operands go to the staging ring, up to kConvertStages steps ahead of
            // the converters.
            const int sc = it % kConvertStages;
            if (it >= kConvertStages)
              braze::mbarrier::wait(&staged_empty[sc], (it / kConvertStages - 1) & 1);
            braze::mbarrier::arriveExpectTx(&staged_full[sc], kStagedABytes + kStagedBBytes);
            if constexpr (kAConvert)
              loadStaged<kARank, kBlockM>(staged_a + sc * kStagedABytes, &a, &staged_full[sc],
                                          kt * kBlockK, m0, a_batch);
            if constexpr (kBConvert)
              loadStaged<kBRank, kBlockN>(staged_b + sc * kStagedBBytes, &b, &staged_full[sc],
                                          kt * kBlockK, n0, b_batch);
          }
          const int s = it % kStages;
          if (it >= kStages) {
            if constexpr (kClusterM > 1)
              braze::mbarrier::waitCluster(&empty[s], (it / kStages - 1) & 1);
            else
              braze::mbarrier::wait(&empty[s], (it / kStages - 1) & 1);
          }
          braze::mbarrier::arriveExpectTx(&full[s], (kAConvert ? 0 : kTileABytes) +
                                                        (kBConvert ? 0 : kTileBBytes));
          if constexpr (!kAConvert)
            loadTile<kAMnMajor, kARank, kBlockM, 1>(tiles_a + s * kTileABytes, &a, &full[s],
                                                    kt * kBlockK, m0, a_batch, 0);
          if constexpr (!kBConvert)
            loadTile<kBMnMajor, kBRank, kBlockN, kClusterM>(tiles_b + s * kTileBBytes, &b,
                                                            &full[s], kt * kBlockK, n0,
                                                            b_batch, pair_rank);
        }
      }
    }
    if constexpr (kSplitK > 1) {
      // The consumers' three cluster barriers (gatherSplits) count every thread.
      braze::cluster::sync();
      braze::cluster::sync();
      braze::cluster::sync();
    }
    // Neither CTA of a pair exits while its peer may still copy into it or arrive on it.
    if constexpr (kClusterM > 1) braze::cluster::sync();
  } else {
    braze::warpgroup::increaseRegisters<kConsumerRegisters>();
    const Problem p(a_sizes, b_sizes);
    const int consumer = braze::warpgroup::index() - 1;
    int it = 0;
    int chunk = 0;  // kTmaStore: output chunks this consumer has stored
    for (int tile = blockIdx.x / kClusterCtas; tile < p.tiles();
         tile += gridDim.x / kClusterCtas) {
      float d[kBlockN / 2];
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) d[i] = 0.0f;
      // This CTA's share of K (the cluster rank is read where it is needed, not kept live
      // through the main loop).
      const int kt_begin = kSplitK > 1 ? p.k_tiles * int(braze::cluster::ctaRank()) / kSplitK : 0;
      const int kt_end =
          kSplitK > 1 ? p.k_tiles * (int(braze::cluster::ctaRank()) + 1) / kSplitK : p.k_tiles;
      for (int kt = kt_begin; kt < kt_end; ++kt, ++it) {
        const int s = it % kStages;
        braze::mbarrier::wait(&full[s], (it / kStages) & 1);
        // A consumer's 64 rows: 64 K-major rows of 128 bytes, or the c-th MN-major box; both
        // 8192 bytes in.
        const unsigned long long desc_a =
            tileDescriptor<kAMnMajor>(tiles_a + s * kTileABytes + consumer * kMnBoxBytes);
        const unsigned long long desc_b = tileDescriptor<kBMnMajor>(tiles_b + s * kTileBBytes);
        braze::wgmma::fence();
#pragma unroll
        for (int step = 0; step < kBlockK / 16; ++step) {
          braze::wgmma::mmaSs<kBlockN, Operand, kAMnMajor, kBMnMajor>(
              d, braze::wgmma::advance(desc_a, kStepBytes<kAMnMajor> * step),
              braze::wgmma::advance(desc_b, kStepBytes<kBMnMajor> * step), true);
        }
        braze::wgmma::commitGroup();
        // The previous step's group has finished: its stage goes back to the producer.
        braze::wgmma::waitGroup<1>();
        if (kt > kt_begin) releaseStage(&empty[(it - 1) % kStages]);
      }
      if (kt_end > kt_begin) {
        braze::wgmma::waitGroup<0>();
        releaseStage(&empty[(it - 1) % kStages]);
      }
      braze::wgmma::fenceAccumulators(d);
      // What only the epilogue needs is computed here, not kept live through the main loop
      // (the accumulators leave no registers to spare).
      int batch, m0, n0;
      p.origin(tile, batch, m0, n0);
      if constexpr (kClusterM > 1) m0 += int(braze::cluster::ctaRank()) * kBlockM;
      int bi[kBatchSlots];
      p.batchIndices(batch, bi);
      const int t = braze::warpgroup::threadRank();
      // d[4 j + q]: row 16 w + l / 4 + 8 (q / 2), column 8 j + 2 (l % 4) + q % 2.
      const int row = m0 + consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
      const int col = n0 + 2 * (t % 4);
      // One copy of the epilogue for whole and edge tiles (storePair and the chunks below
      // compute elements outside C at the nearest element inside and do not store them).
      if constexpr (kSplitK > 1) {
        // This CTA's column groups of the whole tile's sums.
        const int split = int(braze::cluster::ctaRank());
        float sums[kBlockN / 2 / kSplitK];
        gatherSplits(d, sums, shared, consumer, split);
#pragma unroll
        for (int jj = 0; jj < kBlockN / 8 / kSplitK; ++jj) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int r = row + 8 * half;
            const int cc = col + 8 * (jj * kSplitK + split);
            storePair<kEpilogueVector>(p, )" +
         batch_arguments + R"(r, cc, sums[4 * jj + 2 * half],
                                       sums[4 * jj + 2 * half + 1] BRAZE_EPILOGUE_ARGUMENTS);
          }
        }
      } else if constexpr (kTmaStore) {
        // 64-column chunks of this consumer's 64 rows leave through two buffers: each is
        // written with stmatrix, then one thread stores it with a bulk tensor copy (clipped to
        // C by the copy engine) while the next is written. stmatrix takes matrix q (rows + 8
        // for odd q, the next 8 columns from q = 2) at the rows lanes 8q .. 8q + 7 address.
        unsigned char* buffers = shared + kRingBytes + consumer * 2 * kChunkBytes;
        const int lane = t % 32;
        const int chunk_row = 16 * (t / 32) + 8 * ((lane / 8) % 2) + lane % 8;
        // The loop over chunks is not unrolled, so the epilogue is inlined 16 times, not 64
        // (ptxas time grows with the copies); each chunk's 32 accumulators are first picked
        // into `v` by constant indices, which keeps `d` in registers.
#pragma unroll 1
        for (int c = 0; c < kBlockN / 64; ++c, ++chunk) {
          float v[32];
#pragma unroll
          for (int k = 0; k < kBlockN / 64; ++k) {
            if (k == c) {
#pragma unroll
              for (int i = 0; i < 32; ++i) v[i] = d[32 * k + i];
            }
          }
          unsigned char* buffer = buffers + (chunk % 2) * kChunkBytes;
          // The copy issued from this buffer two chunks ago has read it.
          if (t == 0) braze::tma::waitGroupRead<1>();
          braze::namedBarrierSync(1 + consumer, 128);
          // Nor is the loop over its four 16-column parts: the epilogue is inlined 4 times.
#pragma unroll 1
          for (int jj = 0; jj < 8; jj += 2) {
            float w[8];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              if (2 * k == jj) {
#pragma unroll
                for (int i = 0; i < 8; ++i) w[i] = v[8 * k + i];
              }
            }
            unsigned fragment[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const int j = jj + q / 2;  // the column group within the chunk
              const int r = row + 8 * (q % 2);
              const int cc = col + 64 * c + 8 * j;
              fragment[q] = stagePair<kEpilogueVector>(p, )" +
         batch_arguments + R"(r, cc, w[4 * (q / 2) + 2 * (q % 2)],
                                                       w[4 * (q / 2) + 2 * (q % 2) + 1]
                                                           BRAZE_EPILOGUE_ARGUMENTS);
            }
            // 128-byte swizzle: the 16-byte unit u of row r sits at unit u ^ (r % 8).
            const int unit = (jj + lane / 16) ^ (chunk_row % 8);
            braze::storeMatrix<4>(buffer + chunk_row * 128 + unit * 16, fragment);
          }
          braze::fenceProxyAsyncShared();
          braze::namedBarrierSync(1 + consumer, 128);
          if (t == 0) {
            braze::tma::store(c_map, buffer, n0 + 64 * c, m0 + 64 * consumer)" +
         batch_coordinates + R"();
            braze::tma::commitGroup();
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int r = row + 8 * half;
            const int cc = col + 8 * j;
            storePair<kEpilogueVector>(p, )" +
         batch_arguments + R"(r, cc, d[4 * j + 2 * half],
                                       d[4 * j + 2 * half + 1] BRAZE_EPILOGUE_ARGUMENTS);
          }
        }
      }
    }
    // The last chunks' copies finish before the block's shared memory goes.
    if constexpr (kTmaStore) {
      if (braze::warpgroup::threadRank() == 0) braze::tma::waitGroup<0>();
    }
    if constexpr (kClusterM > 1) braze::cluster::sync();
  }
}
)";
}

}  // namespace braze::matmul_scheduler
