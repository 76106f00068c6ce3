#pragma once

// The matmul scheduler's kernel template: a warp-specialized GEMM for Hopper, C [M, N] =
// A [M, K] · B [N, K]ᵀ with fp32 accumulation, handed to the fusion's epilogue (code
// generation writes it from the ops after the matmul: braze/codegen/template_epilogue.h), which
// rounds C to the inputs' dtype, applies bias, activations, residuals and casts, and stores
// every output.
//
//   block (tile_m = 128) x (tile_n) of C; 384 threads = 3 warp groups
//   warp group 0 (producer, 40 registers): one thread walks K in steps of tile_k, waits for a
//     free stage of the ring (empty barrier), announces its bytes on the stage's full barrier
//     and issues the two tensor copies (128-byte swizzled boxes of A and B)
//   warp groups 1, 2 (consumers, 232 registers): each multiplies 64 rows with wgmma
//     m64n<tile_n>k16 from the stage's tiles, keeps one wgmma group in flight and hands the
//     previous stage back once its group has finished; then hands its accumulators to the
//     epilogue as pairs of columns
//   blocks are persistent (at most one per SM): each walks tiles gridDim.x apart, and the
//   producer loads the next tile while the consumers run the previous tile's epilogue;
//   tiles are visited in groups of group_m tile rows, so a wave's B tiles stay in L2
//
// K tails read zeros (the copy engine fills outside the tensor); M and N tails are predicated
// epilogue calls. N must be even (outputs are stored in pairs) and K a multiple of 8 (the copy
// engine needs 16-byte row strides). Parameters: the map of A, the map of B, A (for M and K),
// B (for N), then the epilogue's.

#include <cstdint>
#include <string>

namespace braze::matmul_scheduler {

struct GemmShape {
  int64_t tile_m = 128;
  int64_t tile_n = 256;
  int64_t tile_k = 64;
  int64_t stages = 4;
  int64_t group_m = 8;
  bool fp16 = false;  ///< fp16 operands and result; bf16 otherwise
};

/// Dynamic shared memory of the kernel: the ring of A and B tiles plus 1024 bytes of slack
/// for aligning it to the swizzle pattern's 1024 bytes.
inline int64_t gemmSharedBytes(const GemmShape& shape) {
  return shape.stages * (shape.tile_m + shape.tile_n) * shape.tile_k * 2 + 1024;
}

/// The kernel's CUDA C++ for `shape`, its entry point spelled BRAZE_KERNEL_NAME.
inline std::string gemmTemplateSource(const GemmShape& shape) {
  const auto constant = [](const char* name, int64_t value) {
    return std::string("constexpr int ") + name + " = " + std::to_string(value) + ";\n";
  };
  return constant("kBlockM", shape.tile_m) + constant("kBlockN", shape.tile_n) +
         constant("kBlockK", shape.tile_k) + constant("kStages", shape.stages) +
         constant("kGroupM", shape.group_m) +
         "using Operand = braze::wgmma::" + (shape.fp16 ? "F16" : "Bf16") + ";\n" + R"(
constexpr int kConsumerThreads = 256;
constexpr unsigned kTileABytes = kBlockM * kBlockK * 2;
constexpr unsigned kTileBBytes = kBlockN * kBlockK * 2;

// The first row and column of tile `tile` of C: tiles are numbered in groups of kGroupM tile
// rows, down a group's rows first, so consecutive tiles (the blocks running at once) share
// their B tiles in L2.
__device__ __forceinline__ void tileOrigin(int tile, int tiles_m, int tiles_n, int& m0, int& n0) {
  const int group = tile / (kGroupM * tiles_n);
  const int first_m = group * kGroupM;
  const int group_rows = min(tiles_m - first_m, kGroupM);
  const int in_group = tile - group * kGroupM * tiles_n;
  m0 = (first_m + in_group % group_rows) * kBlockM;
  n0 = (in_group / group_rows) * kBlockN;
}

extern "C" __global__ void __launch_bounds__(384, 1)
BRAZE_KERNEL_NAME(const __grid_constant__ braze::TensorMap a,
                  const __grid_constant__ braze::TensorMap b,
                  braze::Tensor<unsigned short, 2, IndexT> a_sizes,
                  braze::Tensor<unsigned short, 2, IndexT> b_sizes BRAZE_EPILOGUE_PARAMETERS) {
  extern __shared__ unsigned char shared_raw[];
  unsigned char* shared = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(shared_raw) + 1023) & ~1023ull);
  unsigned char* tiles_a = shared;
  unsigned char* tiles_b = shared + kStages * kTileABytes;
  __shared__ __align__(8) unsigned long long full[kStages];
  __shared__ __align__(8) unsigned long long empty[kStages];

  if (threadIdx.x == 0) {
    braze::tma::prefetchTensorMap(&a);
    braze::tma::prefetchTensorMap(&b);
    for (int s = 0; s < kStages; ++s) {
      braze::mbarrier::init(&full[s], 1);
      braze::mbarrier::init(&empty[s], kConsumerThreads);
    }
    braze::mbarrier::fenceInit();
  }
  __syncthreads();

  // Each role reads the sizes after changing its register count: values live across
  // setmaxnreg are spilled. Blocks walk tiles gridDim.x apart. The ring's stages and barrier phases run on across
  // tiles (`it` counts every K step of the block), so the producer fills the next tile's
  // stages while the consumers are in the previous tile's epilogue.
  if (braze::warpgroup::index() == 0) {
    braze::warpgroup::decreaseRegisters<40>();
    const int m = a_sizes.size[0];
    const int n = b_sizes.size[0];
    const int k_tiles = (a_sizes.size[1] + kBlockK - 1) / kBlockK;
    const int tiles_m = (m + kBlockM - 1) / kBlockM;
    const int tiles_n = (n + kBlockN - 1) / kBlockN;
    const int tiles = tiles_m * tiles_n;
    if (threadIdx.x == 0) {
      int it = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tileOrigin(tile, tiles_m, tiles_n, m0, n0);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kStages;
          if (it >= kStages) braze::mbarrier::wait(&empty[s], (it / kStages - 1) & 1);
          braze::mbarrier::arriveExpectTx(&full[s], kTileABytes + kTileBBytes);
          braze::tma::load(tiles_a + s * kTileABytes, &a, &full[s], kt * kBlockK, m0);
          braze::tma::load(tiles_b + s * kTileBBytes, &b, &full[s], kt * kBlockK, n0);
        }
      }
    }
  } else {
    braze::warpgroup::increaseRegisters<232>();
    const int k_tiles = (a_sizes.size[1] + kBlockK - 1) / kBlockK;
    const int tiles =
        ((a_sizes.size[0] + kBlockM - 1) / kBlockM) * ((b_sizes.size[0] + kBlockN - 1) / kBlockN);
    const int consumer = braze::warpgroup::index() - 1;
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      float d[kBlockN / 2];
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) d[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % kStages;
        braze::mbarrier::wait(&full[s], (it / kStages) & 1);
        const unsigned long long desc_a =
            braze::wgmma::descriptor(tiles_a + s * kTileABytes + consumer * 64 * 128, 16, 1024,
                                     braze::wgmma::Swizzle::B128);
        const unsigned long long desc_b = braze::wgmma::descriptor(
            tiles_b + s * kTileBBytes, 16, 1024, braze::wgmma::Swizzle::B128);
        braze::wgmma::fence();
#pragma unroll
        for (int step = 0; step < kBlockK / 16; ++step) {
          braze::wgmma::mmaSs<kBlockN, Operand>(d, braze::wgmma::advance(desc_a, 32 * step),
                                                braze::wgmma::advance(desc_b, 32 * step), true);
        }
        braze::wgmma::commitGroup();
        // The previous step's group has finished: its stage goes back to the producer.
        braze::wgmma::waitGroup<1>();
        if (kt > 0) braze::mbarrier::arrive(&empty[(it - 1) % kStages]);
      }
      braze::wgmma::waitGroup<0>();
      braze::mbarrier::arrive(&empty[(it - 1) % kStages]);
      braze::wgmma::fenceAccumulators(d);
      // What only the epilogue needs is computed here, not kept live through the main loop
      // (the accumulators leave no registers to spare).
      const int m = a_sizes.size[0];
      const int n = b_sizes.size[0];
      int m0, n0;
      tileOrigin(tile, (m + kBlockM - 1) / kBlockM, (n + kBlockN - 1) / kBlockN, m0, n0);
      const int t = braze::warpgroup::threadRank();
      // d[4 j + q]: row 16 w + l / 4 + 8 (q / 2), column 8 j + 2 (l % 4) + q % 2.
      const int row = m0 + consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
      const int col = n0 + 2 * (t % 4);
      // A tile inside C takes the epilogue without a branch per pair, so the compiler can issue
      // the epilogue's loads ahead of its stores; edge tiles check every pair.
      if (m0 + kBlockM <= m && n0 + kBlockN <= n) {
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const float pair[2] = {d[4 * j + 2 * half], d[4 * j + 2 * half + 1]};
            braze_epilogue(row + 8 * half, col + 8 * j, pair BRAZE_EPILOGUE_ARGUMENTS);
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int r = row + 8 * half;
            const int cc = col + 8 * j;
            const float pair[2] = {d[4 * j + 2 * half], d[4 * j + 2 * half + 1]};
            if (r < m && cc < n) braze_epilogue(r, cc, pair BRAZE_EPILOGUE_ARGUMENTS);
          }
        }
      }
    }
  }
}
)";
}

}  // namespace braze::matmul_scheduler
