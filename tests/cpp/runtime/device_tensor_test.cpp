// DeviceTensor metadata needs no GPU; allocation and copies do (skipped without one).

#include <gtest/gtest.h>

#include <cstring>

#include "braze/driver/cuda_driver.h"
#include "braze/runtime/device_tensor.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

TEST(DeviceTensorTest, BorrowKeepsMetadataAndOwner) {
  auto owner = std::make_shared<int>(7);
  const DeviceTensor tensor =
      DeviceTensor::borrow(DataType::Float16, {2, 3}, {1, 2}, 0x10000, 1, owner);
  EXPECT_EQ(tensor.dtype(), DataType::Float16);
  EXPECT_EQ(tensor.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor.strides(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(tensor.rank(), 2);
  EXPECT_EQ(tensor.numel(), 6);
  EXPECT_EQ(tensor.data(), 0x10000u);
  EXPECT_EQ(tensor.device(), 1);
  EXPECT_EQ(owner.use_count(), 2);
  EXPECT_FALSE(tensor.isContiguous());
  EXPECT_TRUE(tensor.defined());
  // Elements 0 .. 1*1 + 2*2 = 5: six halves.
  EXPECT_EQ(tensor.storageBytes(), 12);
  EXPECT_EQ(tensor.describe(), "float16[2, 3] strides [1, 2] on cuda:1");
  const TensorArgumentInfo info = tensor.argumentInfo();
  EXPECT_EQ(info.dtype, DataType::Float16);
  EXPECT_EQ(info.sizes, tensor.sizes());
  EXPECT_EQ(info.strides, tensor.strides());
  EXPECT_TRUE(info.has_storage);
  EXPECT_EQ(info.description, tensor.describe());
}

TEST(DeviceTensorTest, ContiguityAndSpans) {
  EXPECT_TRUE(
      DeviceTensor::borrow(DataType::Float32, {2, 3}, {3, 1}, 0x100, 0, nullptr).isContiguous());
  // A size-1 dim's stride is never used.
  EXPECT_TRUE(DeviceTensor::borrow(DataType::Float32, {2, 1, 3}, {3, 99, 1}, 0x100, 0, nullptr)
                  .isContiguous());
  const DeviceTensor expanded =
      DeviceTensor::borrow(DataType::Float32, {4, 3}, {0, 1}, 0x100, 0, nullptr);
  EXPECT_FALSE(expanded.isContiguous());
  EXPECT_EQ(expanded.storageBytes(), 12);
  const DeviceTensor empty = DeviceTensor::borrow(DataType::Float32, {0, 3}, {3, 1}, 0, 0, nullptr);
  EXPECT_TRUE(empty.defined());
  EXPECT_EQ(empty.storageBytes(), 0);
  const DeviceTensor scalar = DeviceTensor::borrow(DataType::Float64, {}, {}, 0x100, 0, nullptr);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.storageBytes(), 8);
  EXPECT_FALSE(DeviceTensor::borrow(DataType::Float32, {2}, {1}, 0, 0, nullptr).defined());
}

TEST(DeviceTensorTest, BadShapesAreRefused) {
  EXPECT_TRUE(test::throwsError(
      [] {
        DeviceTensor::borrow(DataType::Float32, {2, 3}, {1}, 0x100, 0, nullptr);
      },
      {"DeviceTensor::borrow", "differ in length"}));
  EXPECT_TRUE(test::throwsError(
      [] {
        DeviceTensor::borrow(DataType::Float32, {2, -3}, {3, 1}, 0x100, 0, nullptr);
      },
      {"size -3 of dim 1", "negative"}));
  EXPECT_TRUE(test::throwsError(
      [] {
        DeviceTensor::borrow(DataType::Float32, {2, 3}, {-3, 1}, 0x100, 0, nullptr);
      },
      {"stride -3 of dim 0", "non-negative strides only"}));
  EXPECT_TRUE(test::throwsError(
      [] { DeviceTensor::borrow(DataType::Float32, {2}, {1}, 0x100, -1, nullptr); },
      {"device ordinal -1"}));
}

TEST(DeviceTensorTest, WithoutADriverAllocationSaysWhy) {
  if (driver::isDriverAvailable()) GTEST_SKIP() << "a CUDA driver and device are present";
  EXPECT_TRUE(test::throwsError([] { DeviceTensor::empty(DataType::Float32, {4}); },
                                {"no CUDA driver or device: "}));
  test::RandomTensors random(3);
  const HostTensor host = random.uniform(DataType::Float32, {4});
  EXPECT_TRUE(
      test::throwsError([&] { DeviceTensor::fromHost(host); }, {"no CUDA driver or device: "}));
}

TEST(DeviceTensorTest, RoundTripKeepsValuesAndLayout) {
  if (!driver::isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  test::RandomTensors random(4);
  for (const DataType dtype :
       {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
        DataType::Int32, DataType::Int64, DataType::Bool}) {
    const HostTensor dense = random.uniform(dtype, {5, 6, 7});
    // A permuted layout and one with gaps whose skipped elements hold sentinels.
    for (const HostTensor& host :
         {dense, test::withAllocationOrder(dense, {2, 0, 1}), test::withGaps(dense, 1, 3)}) {
      const DeviceTensor device = DeviceTensor::fromHost(host);
      EXPECT_EQ(device.sizes(), host.sizes());
      EXPECT_EQ(device.strides(), host.strides());
      EXPECT_EQ(device.dtype(), dtype);
      const HostTensor back = device.toHost();
      EXPECT_EQ(back.strides(), host.strides());
      EXPECT_EQ(test::valuesOf(back), test::valuesOf(dense)) << dtype << " " << host.describe();
    }
  }
}

// From pageable memory the driver's copy returns before its DMA lands; fromHost must not, or a
// copy on a non-blocking stream (which does not wait for the legacy stream) reads old bytes.
TEST(DeviceTensorTest, FromHostHasLandedForWorkOnNonBlockingStreams) {
  if (!driver::isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  CUstream stream = nullptr;
  BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const HostTensor host = test::RandomTensors(10 + attempt).uniform(DataType::Float32, {1 << 24});
    const DeviceTensor sent = DeviceTensor::fromHost(host);
    const DeviceTensor copied = DeviceTensor::empty(DataType::Float32, {1 << 24});
    BRAZE_CU(memcpyDtoDAsync, copied.data(), sent.data(), static_cast<size_t>(sent.storageBytes()),
             stream);
    BRAZE_CU(streamSynchronize, stream);
    const HostTensor back = copied.toHost();
    EXPECT_EQ(std::memcmp(back.data(), host.data(), static_cast<size_t>(sent.storageBytes())), 0)
        << "attempt " << attempt;
  }
  BRAZE_CU(streamDestroy, stream);
}

TEST(DeviceTensorTest, EmptyIsContiguousAndFillBytesPoisons) {
  if (!driver::isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const DeviceTensor tensor = DeviceTensor::empty(DataType::Float32, {3, 4});
  EXPECT_TRUE(tensor.isContiguous());
  EXPECT_EQ(tensor.strides(), (std::vector<int64_t>{4, 1}));
  EXPECT_NE(tensor.data(), 0u);
  tensor.fillBytes(0xFF);
  for (const double value : test::valuesOf(tensor.toHost())) EXPECT_TRUE(std::isnan(value));
  const DeviceTensor ints = DeviceTensor::empty(DataType::Int32, {5});
  ints.fillBytes(0xFF);
  for (const double value : test::valuesOf(ints.toHost())) EXPECT_EQ(value, -1.0);
  const DeviceTensor none = DeviceTensor::empty(DataType::Float32, {0, 4});
  EXPECT_EQ(none.numel(), 0);
  none.fillBytes(0xFF);
  EXPECT_EQ(none.toHost().numel(), 0);
}

}  // namespace
}  // namespace braze
