#pragma once

// Hand-written kernels that compose the Hopper runtime headers (core/src/codegen/runtime:
// mbarrier.cuh, bulk_copy.cuh, wgmma.cuh, warp_matrix.cuh, warp_specialization.cuh,
// cluster.cuh), shared by the CPU tests that read their machine code and the GPU tests that
// run them. Each source names only `braze::` machinery; hopperSource() puts the headers it
// uses in front, as a plugin's kernel template would get them.

#include <string>
#include <string_view>

#include "braze/codegen/codegen.h"
#include "braze/driver/device_properties.h"
#include "braze/runtime/compiled_kernel.h"

namespace braze::test {

/// `body` with the runtime headers it uses in front.
inline std::string hopperSource(std::string_view body) {
  return runtimeHeadersFor(body) + std::string(body);
}

/// Compiles `body` (with its headers) for sm_90a, the target of wgmma and setmaxnreg.
inline CompiledKernel compileForSm90a(std::string_view body, const std::string& kernel_name) {
  return CompiledKernel::compile(hopperSource(body), kernel_name,
                                 {.arch = driver::GpuArch{9, 0, true}});
}

/// A 2-D bf16 round trip through shared memory: each block loads the 64x32 (cols x rows) box
/// at (64 blockIdx.x, 32 blockIdx.y) of `in` with a 128-byte swizzle, writes the box
/// un-swizzled to its slot of `tiles` (so a test sees what the load put in shared memory,
/// out-of-bounds fill included), and stores the box to `out` at the same coordinates (the
/// copy engine drops the part outside the tensor). 128 threads.
inline constexpr std::string_view kTmaRoundTrip = R"(
constexpr int kBoxCols = 64;
constexpr int kBoxRows = 32;
extern "C" __global__ void tma_round_trip(const __grid_constant__ braze::TensorMap in,
                                          const __grid_constant__ braze::TensorMap out,
                                          unsigned short* tiles) {
  // A 128-byte swizzle repeats every 1024 bytes; the box must start on that boundary.
  __shared__ __align__(1024) unsigned short tile[kBoxRows * kBoxCols];
  __shared__ __align__(8) unsigned long long full;
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
  // Element (r, c) of a box with 128-byte rows sits in 16-byte chunk (c / 8) ^ (r % 8) of row r.
  unsigned short* slot = tiles + (blockIdx.y * gridDim.x + blockIdx.x) * kBoxRows * kBoxCols;
  for (int i = threadIdx.x; i < kBoxRows * kBoxCols; i += blockDim.x) {
    const int r = i / kBoxCols;
    const int c = i % kBoxCols;
    slot[i] = tile[r * kBoxCols + ((c / 8) ^ (r % 8)) * 8 + c % 8];
  }
  if (threadIdx.x == 0) {
    braze::tma::store(&out, tile, col0, row0);
    braze::tma::commitGroup();
    braze::tma::waitGroup<0>();
  }
}
)";

/// A 1-D bulk round trip: each block loads 1024 floats of `in` with one bulk copy, doubles them
/// with ordinary shared-memory stores and writes them to `out` with one bulk store (so the
/// proxy fence between the two is exercised). 256 threads.
inline constexpr std::string_view kBulkRoundTrip = R"(
constexpr int kChunk = 1024;
extern "C" __global__ void bulk_round_trip(const float* in, float* out) {
  __shared__ __align__(128) float buffer[kChunk];
  __shared__ __align__(8) unsigned long long full;
  if (threadIdx.x == 0) {
    braze::mbarrier::init(&full, 1);
    braze::mbarrier::fenceInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    braze::mbarrier::arriveExpectTx(&full, sizeof(buffer));
    braze::tma::loadBytes(buffer, in + blockIdx.x * kChunk, sizeof(buffer), &full);
  }
  braze::mbarrier::wait(&full, 0);
  for (int i = threadIdx.x; i < kChunk; i += blockDim.x) buffer[i] *= 2.0f;
  // The bulk store reads through the async proxy what these threads wrote through the generic
  // one.
  braze::fenceProxyAsyncShared();
  __syncthreads();
  if (threadIdx.x == 0) {
    braze::tma::storeBytes(out + blockIdx.x * kChunk, buffer, sizeof(buffer));
    braze::tma::commitGroup();
    braze::tma::waitGroup<0>();
  }
}
)";

/// Clusters of 2 CTAs along x exchange values through distributed shared memory: each CTA
/// publishes 100 + blockIdx.x and writes 1000 + blockIdx.x into its peer's inbox; block b then
/// writes {peer's value, cluster size, its inbox, 100 rank + 10 x-index + x-dim in the cluster}
/// to out[4b .. 4b + 3]. 32 threads.
inline constexpr std::string_view kClusterExchange = R"(
extern "C" __global__ void cluster_exchange(unsigned* out) {
  __shared__ unsigned published;
  __shared__ unsigned inbox;
  const unsigned rank = braze::cluster::ctaRank();
  const unsigned peer = rank ^ 1u;
  if (threadIdx.x == 0) published = 100 + blockIdx.x;
  // Both CTAs run before either touches the other's shared memory.
  braze::cluster::sync();
  if (threadIdx.x == 0) braze::cluster::storeShared(braze::cluster::mapShared(&inbox, peer), 1000 + blockIdx.x);
  braze::cluster::sync();
  if (threadIdx.x == 0) {
    out[4 * blockIdx.x + 0] = braze::cluster::loadShared(braze::cluster::mapShared(&published, peer));
    out[4 * blockIdx.x + 1] = braze::cluster::ctaCount();
    out[4 * blockIdx.x + 2] = inbox;
    out[4 * blockIdx.x + 3] = 100 * rank + 10 * braze::cluster::ctaIndex().x + braze::cluster::dims().x;
  }
  // A CTA's shared memory goes when it exits: wait until the peer is done reading it.
  braze::cluster::sync();
}
)";

/// Multicast within clusters of 2 CTAs along x: CTA r of cluster c loads the 64 x 8 box
/// (cols x rows, no swizzle) at rows 8 (2c + r) of `in` and multicasts it to slot r of both
/// CTAs' tiles, so each CTA ends with its cluster's 16 rows, which it writes to its 16 x 64 slot
/// of `out`. 64 threads.
inline constexpr std::string_view kClusterMulticast = R"(
constexpr int kBoxCols = 64;
constexpr int kBoxRows = 8;
constexpr unsigned kBoxBytes = kBoxCols * kBoxRows * 2;
extern "C" __global__ void cluster_multicast(const __grid_constant__ braze::TensorMap in,
                                             unsigned short* out) {
  __shared__ __align__(128) unsigned short tile[2 * kBoxRows * kBoxCols];
  __shared__ __align__(8) unsigned long long full;
  const unsigned rank = braze::cluster::ctaRank();
  const int cluster_index = blockIdx.x / 2;
  if (threadIdx.x == 0) {
    braze::mbarrier::init(&full, 1);
    braze::mbarrier::fenceInit();
  }
  // The peer's copy signals our barrier: it must be initialized cluster-wide first.
  braze::cluster::sync();
  if (threadIdx.x == 0) {
    // Both boxes of the cluster land here: ours and the peer's.
    braze::mbarrier::arriveExpectTx(&full, 2 * kBoxBytes);
    braze::tma::loadMulticast(tile + rank * kBoxRows * kBoxCols, &in, &full, 0b11, 0,
                              (2 * cluster_index + rank) * kBoxRows);
  }
  braze::mbarrier::wait(&full, 0);
  for (int i = threadIdx.x; i < 2 * kBoxRows * kBoxCols; i += blockDim.x)
    out[blockIdx.x * 2 * kBoxRows * kBoxCols + i] = tile[i];
  // No CTA exits while a multicast may still write into it.
  braze::cluster::sync();
}
)";

/// stmatrix and ldmatrix on one warp: lane l gives fragment[i] = the 16-bit values
/// (256 i + 2 l, 256 i + 2 l + 1), stores the 4 matrices plainly to out[0 .. 255] and
/// transposed to out[256 .. 511] (through shared memory), loads the plain ones back with
/// ldmatrix and writes 1 to ok[l] when they equal what it stored. 32 threads.
inline constexpr std::string_view kMatrixRoundTrip = R"(
extern "C" __global__ void matrix_round_trip(unsigned short* out, unsigned* ok) {
  __shared__ __align__(128) unsigned short plain[4 * 64];
  __shared__ __align__(128) unsigned short transposed[4 * 64];
  const unsigned lane = threadIdx.x;
  unsigned fragment[4];
  for (int i = 0; i < 4; ++i) fragment[i] = (256 * i + 2 * lane) | ((256 * i + 2 * lane + 1) << 16);
  // Lanes 8i .. 8i + 7 address the rows of matrix i: 8 values (16 bytes) each.
  const int row_offset = (lane / 8) * 64 + (lane % 8) * 8;
  braze::storeMatrix<4>(plain + row_offset, fragment);
  braze::storeMatrix<4, true>(transposed + row_offset, fragment);
  __syncwarp();
  for (int i = lane; i < 256; i += 32) {
    out[i] = plain[i];
    out[256 + i] = transposed[i];
  }
  unsigned loaded[4];
  braze::loadMatrix<4>(loaded, plain + row_offset);
  ok[lane] = loaded[0] == fragment[0] && loaded[1] == fragment[1] && loaded[2] == fragment[2] &&
             loaded[3] == fragment[3];
}
)";

}  // namespace braze::test
