// Tensor-map parameters and cluster launches through KernelExecutor on an sm_90 GPU (skipped
// elsewhere): the executor encodes each map from the run's tensor, so one compiled kernel
// copies tensors of any size and address; a frozen launch re-addresses its packed maps.

#include <gtest/gtest.h>

#include <cstring>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_properties.h"
#include "braze/driver/tensor_map.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "braze/runtime/kernel_executor.h"
#include "runtime/tensor_map_kernels.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

class TensorMapParametersGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) GTEST_SKIP() << "no CUDA device: " << reason;
    const driver::GpuArch arch = driver::deviceProperties(0).arch;
    if (arch.major < 9) GTEST_SKIP() << "needs an sm_90 GPU; device 0 is " << arch.toString();
  }
};

// Every element of a bf16 matrix is copied, tail boxes included, for several sizes and
// addresses through one executor; the output is poisoned first.
void expectCopies(int64_t cluster_ctas) {
  test::HandWrittenKernel copy = test::tmaCopy(cluster_ctas);
  KernelExecutor executor(*copy.fusion, copy.kernel,
                          CompiledKernel::compile(copy.kernel.source, copy.kernel.kernel_name));
  test::RandomTensors random(31 + cluster_ctas);
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{100, 200}, {32, 64}, {1, 8}, {77, 136}, {100, 200}}) {
    const HostTensor in = random.uniform(DataType::BFloat16, sizes);
    const std::vector<ExecutorArgument> inputs = {DeviceTensor::fromHost(in)};
    DeviceTensor out = DeviceTensor::empty(DataType::BFloat16, sizes);
    out.fillBytes(0xFF);
    std::vector<DeviceTensor> outputs = executor.run(inputs, nullptr, {out});
    BRAZE_CU(ctxSynchronize);
    test::expectClose(outputs[0].toHost(), evaluateFusionTensors(*copy.fusion, {in})[0]);
  }
}

TEST_F(TensorMapParametersGpuTest, OneKernelCopiesTensorsOfAnySizeAndAddress) {
  expectCopies(1);
}

TEST_F(TensorMapParametersGpuTest, AClusteredKernelLaunchesInClustersOfItsShape) {
  // The kernel traps unless its cluster has two CTAs.
  expectCopies(2);
}

TEST_F(TensorMapParametersGpuTest, AnInnerDimWithAStrideIsRefusedByName) {
  test::HandWrittenKernel copy = test::tmaCopy(1, /*strided=*/true);
  KernelExecutor executor(*copy.fusion, copy.kernel,
                          CompiledKernel::compile(copy.kernel.source, copy.kernel.kernel_name));
  test::RandomTensors random(5);
  // A transposed matrix: its dim 1 has stride 64, so no box row is contiguous.
  const HostTensor in =
      test::withAllocationOrder(random.uniform(DataType::BFloat16, {64, 64}), {1, 0});
  try {
    executor.run({DeviceTensor::fromHost(in)});
    FAIL() << "a strided inner dim was encoded";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("tensor map of input 0"), std::string::npos) << message;
    EXPECT_NE(message.find("contiguous"), std::string::npos) << message;
  }
}

// A frozen launch keeps the maps it packed while planning and re-addresses them per run: the
// result is the map the driver encodes for the new address.
TEST_F(TensorMapParametersGpuTest, ReaddressingAMapGivesTheMapOfTheNewAddress) {
  driver::TensorMapSpec spec;
  spec.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  spec.dims = {200, 100};
  spec.strides = {200};
  spec.box = {64, 32};
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  spec.address = 256;
  const CUtensorMap planned = driver::encodeTensorMap(spec);
  std::vector<std::byte> parameters(16 + sizeof(CUtensorMap));
  std::memcpy(parameters.data() + 16, &planned, sizeof(planned));
  const FrozenLaunch::Pointer pointer{16, {host::SlotKind::Input, 0}, /*tensor_map=*/true};
  spec.address = 0x7f0000001000;
  pointer.patch(parameters, spec.address);
  const CUtensorMap expected = driver::encodeTensorMap(spec);
  EXPECT_EQ(std::memcmp(parameters.data() + 16, &expected, sizeof(expected)), 0);
  // An all-zero map (a tensor without elements) stays as it is.
  std::vector<std::byte> empty(16 + sizeof(CUtensorMap), std::byte{0});
  pointer.patch(empty, spec.address);
  EXPECT_TRUE(
      std::all_of(empty.begin(), empty.end(), [](std::byte b) { return b == std::byte{0}; }));
}

}  // namespace
}  // namespace braze
