#pragma once

// The warp-specialized Hopper GEMM the matmul scheduler will own as its kernel template (until
// then exercised by the codegen tests and braze_gemm_benchmark), as a
// GeneratedKernel over linear(a [M, K], b [N, K]) -> [M, N] in bf16 with fp32 accumulation:
// tensor maps for both operands (the executor encodes them per run), 128 x 256 x 64 tiles in a
// ring of 4 stages, one producer warp group issuing the copies and two consumer warp groups
// each multiplying 64 rows with wgmma m64n256k16, one wgmma group kept in flight while the
// next stage is waited for. K tails read zeros (the copy engine's out-of-bounds fill); M and N
// tails are predicated stores. N must be even (bf16 pairs are stored as 32-bit words).

#include <memory>
#include <string>

#include "braze/codegen/codegen.h"
#include "braze/codegen/generated_kernel.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"

namespace braze::test {

inline constexpr int kTiledGemmStages = 4;
inline constexpr int kTiledGemmBlockM = 128;
inline constexpr int kTiledGemmBlockN = 256;
inline constexpr int kTiledGemmBlockK = 64;
inline constexpr int kTiledGemmSharedBytes =
    kTiledGemmStages * (kTiledGemmBlockM + kTiledGemmBlockN) * kTiledGemmBlockK * 2 + 1024;

inline constexpr const char* kTiledGemmBody = R"(
constexpr int kBlockM = 128;
constexpr int kBlockN = 256;
constexpr int kBlockK = 64;
constexpr int kStages = 4;
constexpr int kConsumerThreads = 256;
constexpr int kGroupM = 8;
constexpr unsigned kTileABytes = kBlockM * kBlockK * 2;
constexpr unsigned kTileBBytes = kBlockN * kBlockK * 2;

extern "C" __global__ void __launch_bounds__(384, 1)
braze_gemm_128x256x64(const __grid_constant__ braze::TensorMap a,
                      const __grid_constant__ braze::TensorMap b,
                      braze::Tensor<unsigned short, 2, IndexT> a_sizes,
                      braze::Tensor<unsigned short, 2, IndexT> c) {
  extern __shared__ unsigned char shared_raw[];
  unsigned char* shared = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<unsigned long long>(shared_raw) + 1023) & ~1023ull);
  unsigned char* tiles_a = shared;
  unsigned char* tiles_b = shared + kStages * kTileABytes;
  __shared__ __align__(8) unsigned long long full[kStages];
  __shared__ __align__(8) unsigned long long empty[kStages];

  const int m = c.size[0];
  const int n = c.size[1];
  const int k_tiles = (a_sizes.size[1] + kBlockK - 1) / kBlockK;
  // Blocks run in about the order of their linear index: walking it down groups of kGroupM
  // tile rows (instead of along whole rows) keeps the B tiles a wave reads in L2 for kGroupM
  // rows of A tiles.
  const int tiles_n = gridDim.x;
  const int tiles_m = gridDim.y;
  const int linear = blockIdx.y * tiles_n + blockIdx.x;
  const int group = linear / (kGroupM * tiles_n);
  const int first_m = group * kGroupM;
  const int group_rows = min(tiles_m - first_m, kGroupM);
  const int in_group = linear - group * kGroupM * tiles_n;
  const int m0 = (first_m + in_group % group_rows) * kBlockM;
  const int n0 = (in_group / group_rows) * kBlockN;
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

  if (braze::warpgroup::index() == 0) {
    braze::warpgroup::decreaseRegisters<40>();
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) braze::mbarrier::wait(&empty[s], (kt / kStages - 1) & 1);
        braze::mbarrier::arriveExpectTx(&full[s], kTileABytes + kTileBBytes);
        braze::tma::load(tiles_a + s * kTileABytes, &a, &full[s], kt * kBlockK, m0);
        braze::tma::load(tiles_b + s * kTileBBytes, &b, &full[s], kt * kBlockK, n0);
      }
    }
  } else {
    braze::warpgroup::increaseRegisters<232>();
    const int consumer = braze::warpgroup::index() - 1;
    float d[kBlockN / 2];
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      braze::mbarrier::wait(&full[s], (kt / kStages) & 1);
      const unsigned long long desc_a = braze::wgmma::descriptor(
          tiles_a + s * kTileABytes + consumer * 64 * 128, 16, 1024, braze::wgmma::Swizzle::B128);
      const unsigned long long desc_b = braze::wgmma::descriptor(
          tiles_b + s * kTileBBytes, 16, 1024, braze::wgmma::Swizzle::B128);
      braze::wgmma::fence();
#pragma unroll
      for (int step = 0; step < kBlockK / 16; ++step) {
        braze::wgmma::mmaSs<kBlockN, braze::wgmma::Bf16>(d, braze::wgmma::advance(desc_a, 32 * step),
                                                         braze::wgmma::advance(desc_b, 32 * step),
                                                         true);
      }
      braze::wgmma::commitGroup();
      // The group of the previous stage has finished: its tiles go back to the producer.
      braze::wgmma::waitGroup<1>();
      if (kt > 0) braze::mbarrier::arrive(&empty[(kt - 1) % kStages]);
    }
    braze::wgmma::waitGroup<0>();
    braze::wgmma::fenceAccumulators(d);
    const int t = braze::warpgroup::threadRank();
    const int row = m0 + consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
    const int col = n0 + 2 * (t % 4);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = row + 8 * half;
        const int cc = col + 8 * j;
        if (r < m && cc < n) {
          *reinterpret_cast<unsigned*>(c.data + (long long)r * n + cc) =
              braze::packBf16(d[4 * j + 2 * half], d[4 * j + 2 * half + 1]);
        }
      }
    }
  }
}
)";

/// The fusion linear(a, b) with the kernel above.
struct TiledGemm {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  GeneratedKernel kernel;
};

inline TiledGemm tiledGemm() {
  using Kind = KernelParameter::Kind;
  TiledGemm result;
  Fusion& fusion = *result.fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* c = linear(a, b);
  fusion.addOutput(c);
  GeneratedKernel& kernel = result.kernel;
  kernel.kernel_name = "braze_gemm_128x256x64";
  kernel.source = runtimeHeadersFor(kTiledGemmBody) + "typedef int IndexT;\n" + kTiledGemmBody;
  const auto map = [](uint32_t rows) {
    return TensorMapParameter{.dims = {1, 0},
                              .box = {static_cast<uint32_t>(kTiledGemmBlockK), rows},
                              .swizzle = TensorMapParameter::Swizzle::Bytes128};
  };
  kernel.parameters = {
      {.kind = Kind::InputTensorMap,
       .val = a,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 0,
       .tensor_map = map(kTiledGemmBlockM)},
      {.kind = Kind::InputTensorMap,
       .val = b,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 1,
       .tensor_map = map(kTiledGemmBlockN)},
      {.kind = Kind::InputTensor,
       .val = a,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 0},
      {.kind = Kind::OutputTensor,
       .val = c,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 0},
  };
  kernel.launch.grid[0] = ceil_div(b->axis(0)->extent(), Operand(int64_t{kTiledGemmBlockN}));
  kernel.launch.grid[1] = ceil_div(a->axis(0)->extent(), Operand(int64_t{kTiledGemmBlockM}));
  kernel.launch.block[0] = fusion.constantIndex(384);
  kernel.launch.dynamic_shared_memory_bytes = fusion.constantIndex(kTiledGemmSharedBytes);
  return result;
}

}  // namespace braze::test
