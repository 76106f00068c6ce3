#pragma once

// Hand-written kernels with tensor-map parameters (KernelParameter::Kind::InputTensorMap and
// OutputTensorMap), standing in for a plugin's kernel template so that the executor's
// encoding, cluster launches and the frozen launches' re-addressing are tested on their own.

#include <string>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "runtime/hand_written_kernels.h"

namespace braze::test {

/// out = set(in) for a row-major bf16 matrix of any size, through the copy engine: each block
/// loads the 64 x 32 (cols x rows) box at (64 blockIdx.x, 32 blockIdx.y) of `in` with a
/// 128-byte swizzle and stores it to `out` at the same coordinates (the engine fills and drops
/// what lies outside). With `cluster_ctas` > 1 the grid's x is rounded up to whole clusters
/// (the extra blocks copy boxes wholly outside) and a block traps unless it runs in a cluster
/// of that many CTAs. `in` is declared contiguous, or with any strides when `strided`.
/// Parameters: the map of `in`, the map of `out`, `out` (which allocates it).
inline HandWrittenKernel tmaCopy(int64_t cluster_ctas = 1, bool strided = false) {
  HandWrittenKernel result;
  Fusion& fusion = *result.fusion;
  TensorView* in = strided ? makeInputTensor(fusion, {.dtype = DataType::BFloat16,
                                                      .sizes = {-1, -1},
                                                      .contiguity = {false, false}})
                           : makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* out = set(in);
  fusion.addOutput(out);
  GeneratedKernel& kernel = result.kernel;
  kernel.kernel_name = "tma_copy_cluster_" + std::to_string(cluster_ctas);
  const std::string body = "constexpr unsigned kClusterCtas = " + std::to_string(cluster_ctas) +
                           ";\n" + R"(
constexpr int kBoxCols = 64;
constexpr int kBoxRows = 32;
extern "C" __global__ void )" +
                           kernel.kernel_name +
                           R"((const __grid_constant__ braze::TensorMap in,
    const __grid_constant__ braze::TensorMap out, braze::Tensor<unsigned short, 2, IndexT> unused) {
  __shared__ __align__(1024) unsigned short tile[kBoxRows * kBoxCols];
  __shared__ __align__(8) unsigned long long full;
  if (kClusterCtas > 1 && braze::cluster::ctaCount() != kClusterCtas) __trap();
  const int col0 = blockIdx.x * kBoxCols;
  const int row0 = blockIdx.y * kBoxRows;
  if (threadIdx.x == 0) {
    braze::tma::prefetchTensorMap(&in);
    braze::mbarrier::init(&full, 1);
    braze::mbarrier::fenceInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    braze::mbarrier::arriveExpectTx(&full, sizeof(tile));
    braze::tma::load(tile, &in, &full, col0, row0);
  }
  braze::mbarrier::wait(&full, 0);
  if (threadIdx.x == 0) {
    braze::tma::store(&out, tile, col0, row0);
    braze::tma::commitGroup();
    braze::tma::waitGroup<0>();
  }
}
)";
  kernel.source = runtimeHeadersFor(body) + "typedef int IndexT;\n" + body;
  const TensorMapParameter map{
      .dims = {1, 0}, .box = {64, 32}, .swizzle = TensorMapParameter::Swizzle::Bytes128};
  kernel.parameters = {
      {.kind = Kind::InputTensorMap,
       .val = in,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 0,
       .tensor_map = map},
      {.kind = Kind::OutputTensorMap,
       .val = out,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 0,
       .tensor_map = map},
      {.kind = Kind::OutputTensor,
       .val = out,
       .dtype = DataType::BFloat16,
       .rank = 2,
       .fusion_position = 0},
  };
  Val* columns = ceil_div(in->axis(1)->extent(), Operand(int64_t{64} * cluster_ctas));
  kernel.launch.grid[0] = mul(columns, fusion.constantIndex(cluster_ctas));
  kernel.launch.grid[1] = ceil_div(in->axis(0)->extent(), Operand(int64_t{32}));
  kernel.launch.block[0] = fusion.constantIndex(128);
  kernel.launch.cluster = {cluster_ctas, 1, 1};
  return result;
}

}  // namespace braze::test
