// DLPack for device tensors needs no GPU: only pointers and metadata cross.

#include <gtest/gtest.h>

#include "braze/runtime/device_dlpack.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

// A producer's tensor, as PyTorch would hand it over: the deleter counts its calls.
struct Produced {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int* deletions = nullptr;
};

DLManagedTensor* produce(DLDevice device, DLDataType dtype, std::vector<int64_t> shape,
                         std::vector<int64_t> strides, void* data, uint64_t byte_offset,
                         int* deletions) {
  auto* produced = new Produced;
  produced->shape = std::move(shape);
  produced->strides = std::move(strides);
  produced->deletions = deletions;
  DLTensor& dl = produced->managed.dl_tensor;
  dl.data = data;
  dl.device = device;
  dl.ndim = static_cast<int>(produced->shape.size());
  dl.dtype = dtype;
  dl.shape = produced->shape.data();
  dl.strides = produced->strides.empty() ? nullptr : produced->strides.data();
  dl.byte_offset = byte_offset;
  produced->managed.manager_ctx = produced;
  produced->managed.deleter = [](DLManagedTensor* self) {
    auto* p = static_cast<Produced*>(self->manager_ctx);
    ++*p->deletions;
    delete p;
  };
  return &produced->managed;
}

TEST(DeviceDLPackTest, ImportsCudaTensorsWithoutCopying) {
  int deletions = 0;
  {
    const DeviceTensor tensor =
        deviceTensorFromDLPack(produce({kDLCUDA, 1}, {kDLFloat, 16, 1}, {4, 5}, {1, 4},
                                       reinterpret_cast<void*>(0x7f0000000000), 64, &deletions));
    EXPECT_EQ(tensor.dtype(), DataType::Float16);
    EXPECT_EQ(tensor.sizes(), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(tensor.strides(), (std::vector<int64_t>{1, 4}));
    EXPECT_EQ(tensor.data(), 0x7f0000000040u);
    EXPECT_EQ(tensor.device(), 1);
    const DeviceTensor view = tensor;
    EXPECT_EQ(deletions, 0);
  }
  EXPECT_EQ(deletions, 1);
}

TEST(DeviceDLPackTest, NullStridesMeanRowMajor) {
  int deletions = 0;
  const DeviceTensor tensor =
      deviceTensorFromDLPack(produce({kDLCUDA, 0}, {kDLBfloat, 16, 1}, {2, 3, 4}, {},
                                     reinterpret_cast<void*>(0x1000), 0, &deletions));
  EXPECT_EQ(tensor.dtype(), DataType::BFloat16);
  EXPECT_EQ(tensor.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(tensor.isContiguous());
}

TEST(DeviceDLPackTest, RefusesOtherDevicesAndDtypesAndReleasesThem) {
  int deletions = 0;
  EXPECT_TRUE(test::throwsError(
      [&] {
        deviceTensorFromDLPack(
            produce({kDLCPU, 0}, {kDLFloat, 32, 1}, {3}, {}, nullptr, 0, &deletions));
      },
      {"lives on cpu", "CUDA device memory (kDLCUDA) only", "fromDLPack"}));
  EXPECT_EQ(deletions, 1);
  EXPECT_TRUE(test::throwsError(
      [&] {
        deviceTensorFromDLPack(
            produce({kDLCUDAManaged, 0}, {kDLFloat, 32, 1}, {3}, {}, nullptr, 0, &deletions));
      },
      {"lives on cuda_managed:0"}));
  EXPECT_EQ(deletions, 2);
  EXPECT_TRUE(test::throwsError(
      [&] {
        deviceTensorFromDLPack(
            produce({kDLCUDA, 0}, {kDLFloat, 32, 4}, {3}, {}, nullptr, 0, &deletions));
      },
      {"float32x4 is not supported"}));
  EXPECT_EQ(deletions, 3);
  EXPECT_TRUE(test::throwsError(
      [&] {
        deviceTensorFromDLPack(produce({kDLCUDA, 0}, {kDLFloat, 32, 1}, {3, 2}, {-2, 1},
                                       reinterpret_cast<void*>(0x1000), 0, &deletions));
      },
      {"stride -2 of dim 0", "non-negative strides only"}));
  EXPECT_EQ(deletions, 4);
  EXPECT_TRUE(test::throwsError([] { deviceTensorFromDLPack(nullptr); }, {"is null"}));
}

TEST(DeviceDLPackTest, ExportKeepsTheMemoryAliveUntilTheConsumerIsDone) {
  auto owner = std::make_shared<int>(1);
  const DeviceTensor tensor =
      DeviceTensor::borrow(DataType::Int64, {3, 2}, {1, 3}, 0x5000, 2, owner);
  DLManagedTensor* managed = toDLPack(tensor);
  EXPECT_EQ(owner.use_count(), 3);
  const DLTensor& dl = managed->dl_tensor;
  EXPECT_EQ(dl.data, reinterpret_cast<void*>(0x5000));
  EXPECT_EQ(dl.device.device_type, kDLCUDA);
  EXPECT_EQ(dl.device.device_id, 2);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLInt);
  EXPECT_EQ(dl.dtype.bits, 64);
  EXPECT_EQ(std::vector<int64_t>(dl.shape, dl.shape + 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::vector<int64_t>(dl.strides, dl.strides + 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(dl.byte_offset, 0u);
  // A round trip through DLPack gives the same view.
  const DeviceTensor back = deviceTensorFromDLPack(managed);
  EXPECT_EQ(back.data(), tensor.data());
  EXPECT_EQ(back.sizes(), tensor.sizes());
  EXPECT_EQ(back.strides(), tensor.strides());
  EXPECT_EQ(back.device(), 2);
  EXPECT_EQ(back.dtype(), DataType::Int64);
}

TEST(DeviceDLPackTest, ExportOfATensorWithoutStorageIsRefused) {
  EXPECT_TRUE(test::throwsError(
      [] { toDLPack(DeviceTensor::borrow(DataType::Float32, {2}, {1}, 0, 0, nullptr)); },
      {"toDLPack", "has no storage"}));
}

}  // namespace
}  // namespace braze
