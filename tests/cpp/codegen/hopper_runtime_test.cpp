// The Hopper runtime headers (core/src/codegen/runtime: mbarrier, bulk copies, wgmma, warp
// matrix moves, warp specialization, clusters) compile with NVRTC for sm_90a into the machine
// instructions they stand for, without local memory, and only kernels that name them carry
// them. NVRTC and nvdisasm need no GPU: these run on every machine (the SASS checks skip when
// nvdisasm is missing; tools/install-deps.sh installs it).

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "braze/codegen/codegen.h"
#include "codegen/hopper_kernels.h"
#include "support/error_matchers.h"
#include "support/sass_listing.h"

namespace braze {
namespace {

using test::compileForSm90a;
using test::countInstructions;

// The SASS of `kernel`, or an empty string after GTEST_SKIP when nvdisasm is missing (call
// through BRAZE_SASS_OR_SKIP so the test returns).
std::string sassOf(const CompiledKernel& kernel, std::string* skip_reason) {
  const std::optional<std::string> nvdisasm = test::findNvdisasm(skip_reason);
  if (!nvdisasm) return {};
  return test::disassemble(*nvdisasm, kernel.cubin());
}

#define BRAZE_SASS_OR_SKIP(sass, kernel)                 \
  std::string skip_reason;                               \
  const std::string sass = sassOf(kernel, &skip_reason); \
  if (sass.empty()) GTEST_SKIP() << "SASS checks: " << skip_reason

// No local memory: nothing spilled and no register array indexed at run time.
void expectNoLocalMemory(const CompiledKernel& kernel, const std::string& sass) {
  EXPECT_EQ(kernel.resources().spill_store_bytes, 0) << kernel.compileLog();
  EXPECT_EQ(kernel.resources().stack_frame_bytes, 0) << kernel.compileLog();
  EXPECT_EQ(countInstructions(sass, "STL"), 0) << sass;
  EXPECT_EQ(countInstructions(sass, "LDL"), 0) << sass;
}

std::vector<std::string> headerNames(const std::string& prelude) {
  std::vector<std::string> names;
  const std::string marker = "// ---- ";
  for (size_t at = prelude.find(marker); at != std::string::npos;
       at = prelude.find(marker, at + 1)) {
    const size_t begin = at + marker.size();
    names.push_back(prelude.substr(begin, prelude.find(' ', begin) - begin));
  }
  return names;
}

TEST(HopperRuntimeTest, OnlyKernelsThatNameTheMachineryCarryIt) {
  EXPECT_EQ(headerNames(runtimeHeadersFor("braze::Tensor<float, 1, int> t;")),
            (std::vector<std::string>{"tensor.cuh"}));
  EXPECT_EQ(headerNames(runtimeHeadersFor("braze::tma::load(...)")),
            (std::vector<std::string>{"mbarrier.cuh", "bulk_copy.cuh"}));
  EXPECT_EQ(headerNames(runtimeHeadersFor("braze::wgmma::fence(); braze::warpgroup::index(); "
                                          "braze::cluster::sync(); braze::storeMatrix")),
            (std::vector<std::string>{"mbarrier.cuh", "wgmma.cuh", "warp_matrix.cuh",
                                      "warp_specialization.cuh", "cluster.cuh"}));
  EXPECT_TRUE(test::throwsError([] { runtimeHeadersFor("braze::noSuchThing()"); },
                                {"names braze::noSuchThing, which no runtime header defines"}));
}

TEST(HopperRuntimeTest, MbarrierBecomesSyncsInstructions) {
  const CompiledKernel kernel = compileForSm90a(R"(
extern "C" __global__ void barriers(int* out) {
  __shared__ __align__(8) unsigned long long bar[2];
  if (threadIdx.x == 0) {
    braze::mbarrier::init(&bar[0], blockDim.x);
    braze::mbarrier::init(&bar[1], 1);
    braze::mbarrier::fenceInit();
  }
  __syncthreads();
  braze::mbarrier::arrive(&bar[0]);
  braze::mbarrier::wait(&bar[0], 0);
  if (threadIdx.x == 0) {
    braze::mbarrier::arriveExpectTx(&bar[1], 0);
    braze::mbarrier::expectTx(&bar[1], 0);
  }
  out[threadIdx.x] = braze::mbarrier::tryWait(&bar[1], 0) ? 1 : 0;
  braze::namedBarrierSync(1, 64);
  braze::namedBarrierArrive(2, 64);
  braze::fenceProxyAsyncShared();
  braze::fenceProxyAsyncGlobal();
  braze::fenceProxyAsync();
  __syncthreads();
  if (threadIdx.x == 0) braze::mbarrier::invalidate(&bar[0]);
  // Across a cluster: arrive on the peer's barrier, wait with cluster-scope acquire.
  braze::cluster::arriveRelaxed();
  braze::cluster::wait();
  if (threadIdx.x == 0) braze::mbarrier::arriveCluster(&bar[1], braze::cluster::ctaRank() ^ 1);
  braze::mbarrier::waitCluster(&bar[1], 1);
}
)",
                                                "barriers");
  BRAZE_SASS_OR_SKIP(sass, kernel);
  EXPECT_GE(countInstructions(sass, "SYNCS"), 4) << sass;
  expectNoLocalMemory(kernel, sass);
}

TEST(HopperRuntimeTest, TensorCopiesBecomeUtmaldgAndUtmastg) {
  const CompiledKernel kernel = compileForSm90a(R"(
extern "C" __global__ void tensor_copies(const __grid_constant__ braze::TensorMap map, int c) {
  __shared__ __align__(1024) unsigned char tile[8192];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    braze::tma::prefetchTensorMap(&map);
    braze::mbarrier::init(&bar, 1);
    braze::mbarrier::fenceInit();
    braze::mbarrier::arriveExpectTx(&bar, 5 * 1024);
    braze::tma::load(tile, &map, &bar, c);
    braze::tma::load(tile + 1024, &map, &bar, c, c);
    braze::tma::load(tile + 2048, &map, &bar, c, c, c);
    braze::tma::load(tile + 3072, &map, &bar, c, c, c, c);
    braze::tma::load(tile + 4096, &map, &bar, c, c, c, c, c);
    braze::tma::loadMulticast(tile + 5120, &map, &bar, 3, c, c);
    braze::tma::loadMulticast(tile + 6144, &map, &bar, 3, c, c, c);
    braze::mbarrier::wait(&bar, 0);
    braze::tma::store(&map, tile, c);
    braze::tma::store(&map, tile, c, c);
    braze::tma::store(&map, tile, c, c, c);
    braze::tma::store(&map, tile, c, c, c, c);
    braze::tma::store(&map, tile, c, c, c, c, c);
    braze::tma::commitGroup();
    braze::tma::waitGroupRead<0>();
    braze::tma::waitGroup<0>();
  }
}
)",
                                                "tensor_copies");
  BRAZE_SASS_OR_SKIP(sass, kernel);
  EXPECT_EQ(countInstructions(sass, "UTMALDG"), 7) << sass;
  EXPECT_EQ(countInstructions(sass, "UTMASTG"), 5) << sass;
  EXPECT_NE(sass.find("UTMALDG.2D.MULTICAST"), std::string::npos) << sass;
  EXPECT_NE(sass.find("UTMALDG.5D"), std::string::npos) << sass;
  EXPECT_NE(sass.find("UTMACCTL.PF"), std::string::npos) << sass;  // the tensor map prefetch
  expectNoLocalMemory(kernel, sass);
}

TEST(HopperRuntimeTest, WgmmaBecomesHgmmaForEveryShapeAndType) {
  // N from 8 to 256 (each its own table entry), both types, A from shared memory with both
  // transposes and from registers.
  const CompiledKernel kernel = compileForSm90a(R"(
template <int kN, typename T, int kTransA, int kTransB>
__device__ float multiply(unsigned long long a, unsigned long long b) {
  float d[kN / 2];
  braze::wgmma::fence();
  braze::wgmma::mmaSs<kN, T, kTransA, kTransB>(d, a, b, false);
  braze::wgmma::mmaSs<kN, T, kTransA, kTransB>(d, braze::wgmma::advance(a, 32),
                                               braze::wgmma::advance(b, 32), true);
  braze::wgmma::commitGroup();
  braze::wgmma::waitGroup<0>();
  braze::wgmma::fenceAccumulators(d);
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) sum += d[i];
  return sum;
}

template <int kN>
__device__ float multiplyRegisters(const unsigned (&a)[4], unsigned long long b) {
  float d[kN / 2];
  braze::wgmma::fence();
  braze::wgmma::mmaRs<kN, braze::wgmma::Bf16, 1>(d, a, b, false);
  braze::wgmma::commitGroup();
  braze::wgmma::waitGroup<0>();
  braze::wgmma::fenceAccumulators(d);
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) sum += d[i];
  return sum;
}

// One kernel per shape: a 256-wide accumulator takes half the registers a thread can have.
#define MULTIPLY_KERNEL(name, expression)                                                     \
  extern "C" __global__ void __launch_bounds__(128, 1) name(float* out) {                    \
    __shared__ __align__(1024) unsigned short a_tile[64 * 64];                               \
    __shared__ __align__(1024) unsigned short b_tile[256 * 64];                              \
    using braze::wgmma::Bf16;                                                                \
    using braze::wgmma::F16;                                                                 \
    using braze::wgmma::Swizzle;                                                             \
    const unsigned long long a = braze::wgmma::descriptor(a_tile, 16, 1024, Swizzle::B128);  \
    const unsigned long long b = braze::wgmma::descriptor(b_tile, 16, 1024, Swizzle::B128);  \
    const unsigned long long a64 = braze::wgmma::descriptor(a_tile, 16, 512, Swizzle::B64);  \
    const unsigned long long b32 = braze::wgmma::descriptor(b_tile, 16, 256, Swizzle::B32);  \
    const unsigned long long plain = braze::wgmma::descriptor(b_tile, 128, 256, Swizzle::None); \
    const unsigned fragment[4] = {threadIdx.x, threadIdx.x + 1, threadIdx.x + 2, threadIdx.x + 3}; \
    out[threadIdx.x] = expression;                                                           \
  }

MULTIPLY_KERNEL(multiplies, (multiply<8, Bf16, 0, 0>(a, b)))
MULTIPLY_KERNEL(multiply16, (multiply<16, Bf16, 0, 0>(a, b)))
MULTIPLY_KERNEL(multiply24, (multiply<24, Bf16, 0, 1>(a, b32)))
MULTIPLY_KERNEL(multiply64, (multiply<64, F16, 1, 0>(a64, b)))
MULTIPLY_KERNEL(multiply128, (multiply<128, Bf16, 0, 0>(a, plain)))
MULTIPLY_KERNEL(multiply192, (multiply<192, F16, 1, 1>(a, b)))
MULTIPLY_KERNEL(multiply256, (multiply<256, Bf16, 0, 0>(a, b)))
MULTIPLY_KERNEL(multiply256f16, (multiply<256, F16, 0, 0>(a, b)))
MULTIPLY_KERNEL(multiply_registers, (multiplyRegisters<64>(fragment, b)))
)",
                                                "multiplies");
  BRAZE_SASS_OR_SKIP(sass, kernel);
  EXPECT_EQ(countInstructions(sass, "HGMMA"), 17) << sass;
  for (const char* shape :
       {"HGMMA.64x8x16.F32.BF16", "HGMMA.64x16x16.F32.BF16", "HGMMA.64x24x16.F32.BF16",
        "HGMMA.64x64x16.F32 ", "HGMMA.64x128x16.F32.BF16", "HGMMA.64x192x16.F32 ",
        "HGMMA.64x256x16.F32.BF16", "HGMMA.64x256x16.F32 "}) {
    EXPECT_NE(sass.find(shape), std::string::npos) << shape << "\n" << sass;
  }
  expectNoLocalMemory(kernel, sass);
}

TEST(HopperRuntimeTest, SerializedWgmmaIsAnError) {
  // Writing an accumulator between two wgmma of one group makes ptxas serialize them.
  EXPECT_TRUE(test::throwsError(
      [] {
        compileForSm90a(R"(
extern "C" __global__ void serialized(float* out, int n) {
  __shared__ __align__(1024) unsigned short tile[64 * 64];
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  const unsigned long long desc =
      braze::wgmma::descriptor(tile, 16, 1024, braze::wgmma::Swizzle::B128);
  braze::wgmma::fence();
  for (int k = 0; k < n; ++k) {
    braze::wgmma::mmaSs<64, braze::wgmma::Bf16>(d, desc, desc, true);
    d[0] += 1.0f;
  }
  braze::wgmma::commitGroup();
  braze::wgmma::waitGroup<0>();
  float sum = 0.0f;
  for (int i = 0; i < 32; ++i) sum += d[i];
  out[threadIdx.x] = sum;
}
)",
                        "serialized");
      },
      {"kernel serialized: ptxas serialized its wgmma instructions", "wgmma.mma_async",
       "fenceAccumulators"}));
}

TEST(HopperRuntimeTest, SetmaxnregBecomesUsetmaxreg) {
  const CompiledKernel kernel = compileForSm90a(R"(
extern "C" __global__ void __launch_bounds__(256, 1) roles(int* out) {
  if (braze::warpgroup::index() == 0) {
    braze::warpgroup::decreaseRegisters<40>();
    if (braze::electOne()) out[braze::warpgroup::warpRank()] = 1;
  } else {
    braze::warpgroup::increaseRegisters<232>();
    out[4 + braze::warpgroup::threadRank()] = 2;
  }
}
)",
                                                "roles");
  BRAZE_SASS_OR_SKIP(sass, kernel);
  EXPECT_NE(sass.find("USETMAXREG.DEALLOC"), std::string::npos) << sass;
  EXPECT_NE(sass.find("USETMAXREG.TRY_ALLOC"), std::string::npos) << sass;
  EXPECT_GE(countInstructions(sass, "ELECT"), 1) << sass;
  expectNoLocalMemory(kernel, sass);
}

TEST(HopperRuntimeTest, IgnoredSetmaxnregIsAnError) {
  // Without a register cap at entry (__launch_bounds__(threads, 1)) ptxas drops setmaxnreg.
  EXPECT_TRUE(test::throwsError(
      [] {
        compileForSm90a(R"(
extern "C" __global__ void uncapped(int* out) {
  if (braze::warpgroup::index() == 0) {
    braze::warpgroup::decreaseRegisters<40>();
    out[0] = 1;
  } else {
    braze::warpgroup::increaseRegisters<232>();
    out[1] = 2;
  }
}
)",
                        "uncapped");
      },
      {"kernel uncapped: ptxas ignored setmaxnreg", "__launch_bounds__(threads, 1)"}));
}

TEST(HopperRuntimeTest, MatrixMovesBecomeStsmAndLdsm) {
  const CompiledKernel kernel = compileForSm90a(R"(
extern "C" __global__ void matrix_moves(unsigned* out, float x) {
  __shared__ __align__(128) unsigned short tile[4 * 64];
  unsigned short* row = tile + (threadIdx.x % 32) * 8;
  const unsigned one[1] = {braze::packBf16(x, x + 1.0f)};
  const unsigned two[2] = {one[0], braze::packF16(x, x)};
  const unsigned four[4] = {one[0], two[1], 3u, 4u};
  braze::storeMatrix<1>(row, one);
  braze::storeMatrix<1, true>(row, one);
  braze::storeMatrix<2>(row, two);
  braze::storeMatrix<2, true>(row, two);
  braze::storeMatrix<4>(row, four);
  braze::storeMatrix<4, true>(row, four);
  __syncwarp();
  unsigned loaded1[1], loaded2[2], loaded4[4], loaded4t[4];
  braze::loadMatrix<1>(loaded1, row);
  braze::loadMatrix<2, true>(loaded2, row);
  braze::loadMatrix<4>(loaded4, row);
  braze::loadMatrix<4, true>(loaded4t, row);
  out[threadIdx.x] = loaded1[0] + loaded2[1] + loaded4[3] + loaded4t[2];
}
)",
                                                "matrix_moves");
  BRAZE_SASS_OR_SKIP(sass, kernel);
  EXPECT_EQ(countInstructions(sass, "STSM"), 6) << sass;
  EXPECT_EQ(countInstructions(sass, "LDSM"), 4) << sass;
  expectNoLocalMemory(kernel, sass);
}

// The kernels the GPU tests run (hopper_kernels.h), each with the instructions that show it
// uses the machinery: a (SASS opcode or prefix, count) list, count -1 meaning "at least one".
struct SharedKernel {
  std::string_view source;
  const char* name;
  std::vector<std::pair<const char*, int>> instructions;
};

TEST(HopperRuntimeTest, TheGpuTestKernelsUseTheMachinery) {
  const std::vector<SharedKernel> kernels = {
      {test::kTmaRoundTrip, "tma_round_trip", {{"UTMALDG", 1}, {"UTMASTG", 1}}},
      // 1-D bulk copies: global -> shared and shared -> global.
      {test::kBulkRoundTrip, "bulk_round_trip", {{"UBLKCP.S.G", -1}, {"UBLKCP.G.S", -1}}},
      {test::kClusterExchange, "cluster_exchange", {{"UCGABAR_ARV", 3}, {"UCGABAR_WAIT", 3}}},
      {test::kClusterMulticast,
       "cluster_multicast",
       {{"UTMALDG.2D.MULTICAST", -1}, {"UCGABAR_ARV", 2}}},
      {test::kMatrixRoundTrip,
       "matrix_round_trip",
       {{"STSM.16.M88.4", -1}, {"STSM.16.MT88.4", -1}, {"LDSM.16.M88.4", -1}}},
  };
  for (const SharedKernel& shared : kernels) {
    SCOPED_TRACE(shared.name);
    const CompiledKernel kernel = compileForSm90a(shared.source, shared.name);
    BRAZE_SASS_OR_SKIP(sass, kernel);
    for (const auto& [opcode, count] : shared.instructions) {
      if (count < 0) {
        EXPECT_NE(sass.find(opcode), std::string::npos) << opcode << "\n" << sass;
      } else {
        EXPECT_EQ(countInstructions(sass, opcode), count) << opcode << "\n" << sass;
      }
    }
    expectNoLocalMemory(kernel, sass);
  }
}

}  // namespace
}  // namespace braze
