// The Hopper runtime headers at work on an sm_90 GPU (skipped elsewhere): tensor copies with a
// 128-byte swizzle and a tail tile, 1-D bulk copies, a cluster exchanging values through
// distributed shared memory, a multicast copy filling both CTAs of a cluster, stmatrix and
// ldmatrix against their documented layouts, and a warp-specialized GEMM that composes the
// copies, mbarriers, wgmma and setmaxnreg. Outputs are poisoned before each run; inputs are
// random.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/device_properties.h"
#include "braze/driver/primary_context.h"
#include "braze/driver/tensor_map.h"
#include "braze/runtime/kernel_arguments.h"
#include "braze/runtime/launch_params.h"
#include "codegen/hopper_kernels.h"

namespace braze {
namespace {

using driver::DeviceMemory;
using driver::TensorMapSpec;

// Skips unless device 0 is an sm_90 GPU (the kernels are built for sm_90a, which runs nowhere
// else).
#define BRAZE_SKIP_WITHOUT_SM90()                                                          \
  do {                                                                                     \
    std::string reason;                                                                    \
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA device: " << reason; \
    const driver::GpuArch arch = driver::deviceProperties(0).arch;                         \
    if (arch.major != 9 || arch.minor != 0)                                                \
      GTEST_SKIP() << "needs an sm_90 GPU; device 0 is " << arch.toString();               \
  } while (false)

// A compiled kernel loaded on device 0.
class LoadedKernel {
 public:
  LoadedKernel(std::string_view body, const std::string& name)
      : compiled_(test::compileForSm90a(body, name)) {
    driver::makePrimaryContextCurrent(0);
    BRAZE_CU(moduleLoadData, &module_, compiled_.cubin().data());
    BRAZE_CU(moduleGetFunction, &function_, module_, name.c_str());
  }
  ~LoadedKernel() { driver::driverApi().moduleUnload(module_); }
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  /// Launches with `params` and waits for the kernel.
  void run(const LaunchParams& params, KernelArguments& arguments) {
    if (params.dynamic_shared_memory_bytes > 48 * 1024) {
      BRAZE_CU(funcSetAttribute, function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
               static_cast<int>(params.dynamic_shared_memory_bytes));
    }
    checkLaunchLimits(params, driver::deviceProperties(0),
                      compiled_.resources().static_shared_memory_bytes, compiled_.kernelName());
    DriverLaunchConfig config(params, nullptr);
    BRAZE_CU(launchKernelEx, &config.config, function_, arguments.pointers(), nullptr);
    BRAZE_CU(ctxSynchronize);
  }

 private:
  CompiledKernel compiled_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

template <typename T>
std::shared_ptr<DeviceMemory> upload(const std::vector<T>& values) {
  auto memory = DeviceMemory::allocate(0, values.size() * sizeof(T));
  BRAZE_CU(memcpyHtoD, memory->pointer(), values.data(), values.size() * sizeof(T));
  return memory;
}

// Device memory of `count` T, every byte 0xff (NaN for floats and bf16).
template <typename T>
std::shared_ptr<DeviceMemory> poisoned(size_t count) {
  auto memory = DeviceMemory::allocate(0, count * sizeof(T));
  BRAZE_CU(memsetD8Async, memory->pointer(), 0xff, count * sizeof(T), nullptr);
  BRAZE_CU(ctxSynchronize);
  return memory;
}

template <typename T>
std::vector<T> download(const DeviceMemory& memory) {
  std::vector<T> values(memory.bytes() / sizeof(T));
  BRAZE_CU(memcpyDtoH, values.data(), memory.pointer(), memory.bytes());
  return values;
}

uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

std::vector<uint16_t> randomBf16(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<uint16_t> values(count);
  for (uint16_t& value : values) value = toBf16(normal(generator));
  return values;
}

TEST(HopperRuntimeGpuTest, TensorCopiesRoundTripASwizzledTileWithATail) {
  BRAZE_SKIP_WITHOUT_SM90();
  // 100 x 200 is no multiple of the 32 x 64 box: the last row and column of boxes hang over.
  constexpr int kRows = 100, kCols = 200, kBoxRows = 32, kBoxCols = 64;
  constexpr int kGridX = (kCols + kBoxCols - 1) / kBoxCols,
                kGridY = (kRows + kBoxRows - 1) / kBoxRows;
  const std::vector<uint16_t> input = randomBf16(kRows * kCols, 1);
  const auto in = upload(input);
  const auto out = poisoned<uint16_t>(kRows * kCols);
  const auto tiles = poisoned<uint16_t>(kGridX * kGridY * kBoxRows * kBoxCols);
  TensorMapSpec spec{.name = "in",
                     .dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                     .address = in->pointer(),
                     .dims = {kCols, kRows},
                     .strides = {kCols},
                     .box = {kBoxCols, kBoxRows},
                     .swizzle = CU_TENSOR_MAP_SWIZZLE_128B};
  const CUtensorMap in_map = driver::encodeTensorMap(spec);
  spec.name = "out";
  spec.address = out->pointer();
  const CUtensorMap out_map = driver::encodeTensorMap(spec);

  LoadedKernel kernel(test::kTmaRoundTrip, "tma_round_trip");
  KernelArguments arguments(DataType::Int32);
  arguments.addTensorMap(in_map);
  arguments.addTensorMap(out_map);
  arguments.addPointer(tiles->pointer());
  kernel.run({.grid = {kGridX, kGridY, 1}, .block = {128, 1, 1}}, arguments);

  EXPECT_EQ(download<uint16_t>(*out), input);
  const std::vector<uint16_t> seen = download<uint16_t>(*tiles);
  int mismatches = 0;
  for (int by = 0; by < kGridY; ++by) {
    for (int bx = 0; bx < kGridX; ++bx) {
      for (int r = 0; r < kBoxRows; ++r) {
        for (int c = 0; c < kBoxCols; ++c) {
          const int row = by * kBoxRows + r, col = bx * kBoxCols + c;
          // Outside the tensor the load writes zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE).
          const uint16_t expected = row < kRows && col < kCols ? input[row * kCols + col] : 0;
          const uint16_t got = seen[((by * kGridX + bx) * kBoxRows + r) * kBoxCols + c];
          if (got != expected && ++mismatches <= 5) {
            ADD_FAILURE() << "box (" << bx << ", " << by << ") element (" << r << ", " << c
                          << "): " << got << ", expected " << expected;
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(HopperRuntimeGpuTest, OneDimensionalBulkCopiesRoundTrip) {
  BRAZE_SKIP_WITHOUT_SM90();
  constexpr int kBlocks = 8, kChunk = 1024;
  std::mt19937 generator(2);
  std::normal_distribution<float> normal;
  std::vector<float> input(kBlocks * kChunk);
  for (float& value : input) value = normal(generator);
  const auto in = upload(input);
  const auto out = poisoned<float>(input.size());
  LoadedKernel kernel(test::kBulkRoundTrip, "bulk_round_trip");
  KernelArguments arguments(DataType::Int32);
  arguments.addPointer(in->pointer());
  arguments.addPointer(out->pointer());
  kernel.run({.grid = {kBlocks, 1, 1}, .block = {256, 1, 1}}, arguments);
  const std::vector<float> result = download<float>(*out);
  for (size_t i = 0; i < input.size(); ++i) {
    ASSERT_EQ(result[i], 2.0f * input[i]) << "element " << i;
  }
}

TEST(HopperRuntimeGpuTest, ClusterCtasExchangeValuesThroughDistributedSharedMemory) {
  BRAZE_SKIP_WITHOUT_SM90();
  constexpr int kBlocks = 4;
  const auto out = poisoned<uint32_t>(4 * kBlocks);
  LoadedKernel kernel(test::kClusterExchange, "cluster_exchange");
  KernelArguments arguments(DataType::Int32);
  arguments.addPointer(out->pointer());
  kernel.run({.grid = {kBlocks, 1, 1}, .block = {32, 1, 1}, .cluster = {2, 1, 1}}, arguments);
  const std::vector<uint32_t> result = download<uint32_t>(*out);
  for (uint32_t b = 0; b < kBlocks; ++b) {
    const uint32_t peer = b ^ 1u;
    EXPECT_EQ(result[4 * b + 0], 100 + peer) << "block " << b << ": the peer's published value";
    EXPECT_EQ(result[4 * b + 1], 2u) << "block " << b << ": CTAs per cluster";
    EXPECT_EQ(result[4 * b + 2], 1000 + peer) << "block " << b << ": what the peer stored here";
    // Rank and x-index in a (2, 1, 1) cluster are both b % 2.
    EXPECT_EQ(result[4 * b + 3], 110 * (b % 2) + 2) << "block " << b << ": rank, index, dims";
  }
}

TEST(HopperRuntimeGpuTest, MulticastFillsEveryCtaOfTheCluster) {
  BRAZE_SKIP_WITHOUT_SM90();
  constexpr int kBlocks = 4, kCols = 64, kBoxRows = 8;
  constexpr int kRows = kBlocks * kBoxRows;  // two boxes per cluster of 2
  const std::vector<uint16_t> input = randomBf16(kRows * kCols, 5);
  const auto in = upload(input);
  const auto out = poisoned<uint16_t>(kBlocks * 2 * kBoxRows * kCols);
  const CUtensorMap map =
      driver::encodeTensorMap(TensorMapSpec{.name = "in",
                                            .dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                            .address = in->pointer(),
                                            .dims = {kCols, kRows},
                                            .strides = {kCols},
                                            .box = {kCols, kBoxRows}});
  LoadedKernel kernel(test::kClusterMulticast, "cluster_multicast");
  KernelArguments arguments(DataType::Int32);
  arguments.addTensorMap(map);
  arguments.addPointer(out->pointer());
  kernel.run({.grid = {kBlocks, 1, 1}, .block = {64, 1, 1}, .cluster = {2, 1, 1}}, arguments);
  const std::vector<uint16_t> result = download<uint16_t>(*out);
  constexpr int kPerBlock = 2 * kBoxRows * kCols;
  for (int b = 0; b < kBlocks; ++b) {
    // Both CTAs of cluster b / 2 hold that cluster's two boxes.
    const std::vector<uint16_t> got(result.begin() + b * kPerBlock,
                                    result.begin() + (b + 1) * kPerBlock);
    const std::vector<uint16_t> expected(input.begin() + b / 2 * kPerBlock,
                                         input.begin() + (b / 2 + 1) * kPerBlock);
    EXPECT_EQ(got, expected) << "block " << b;
  }
}

TEST(HopperRuntimeGpuTest, MatrixMovesPlaceFragmentsWhereTheLayoutSays) {
  BRAZE_SKIP_WITHOUT_SM90();
  const auto out = poisoned<uint16_t>(512);
  const auto ok = poisoned<uint32_t>(32);
  LoadedKernel kernel(test::kMatrixRoundTrip, "matrix_round_trip");
  KernelArguments arguments(DataType::Int32);
  arguments.addPointer(out->pointer());
  arguments.addPointer(ok->pointer());
  kernel.run({.grid = {1, 1, 1}, .block = {32, 1, 1}}, arguments);
  const std::vector<uint16_t> result = download<uint16_t>(*out);
  for (int i = 0; i < 4; ++i) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        // Lane 4 r + c / 2 holds (r, c) of matrix i, as value 256 i + 8 r + c.
        const int value = 256 * i + 8 * r + c;
        EXPECT_EQ(result[i * 64 + r * 8 + c], value)
            << "plain, matrix " << i << " (" << r << ", " << c << ")";
        EXPECT_EQ(result[256 + i * 64 + c * 8 + r], value)
            << "transposed, matrix " << i << " (" << r << ", " << c << ")";
      }
    }
  }
  EXPECT_EQ(download<uint32_t>(*ok), std::vector<uint32_t>(32, 1u)) << "ldmatrix read back";
}

}  // namespace
}  // namespace braze
