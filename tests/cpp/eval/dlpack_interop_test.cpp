// DLPack import and export: zero-copy views, ownership (the producer's deleter runs exactly
// once, when the last view is gone, also when the tensor is refused), offsets and strides.

#include "braze/eval/dlpack_interop.h"

#include <gtest/gtest.h>

#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;

// A DLPack producer that owns a buffer and counts how often its deleter runs.
struct Producer {
  std::vector<double> storage;  // backing bytes, reinterpreted per dtype
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
  int deleted = 0;

  Producer(DLDataType dtype, std::vector<int64_t> shape_in, std::vector<int64_t> strides_in,
           size_t bytes, uint64_t byte_offset = 0)
      : storage((bytes + 7) / 8 + 1), shape(std::move(shape_in)), strides(std::move(strides_in)) {
    managed.dl_tensor.data = storage.data();
    managed.dl_tensor.device = {kDLCPU, 0};
    managed.dl_tensor.ndim = static_cast<int>(shape.size());
    managed.dl_tensor.dtype = dtype;
    managed.dl_tensor.shape = shape.data();
    managed.dl_tensor.strides = strides.empty() ? nullptr : strides.data();
    managed.dl_tensor.byte_offset = byte_offset;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
  }

  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(storage.data());
  }
};

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

TEST(DLPackInteropTest, ImportIsAZeroCopyViewWithNullStridesMeaningRowMajor) {
  Producer producer(kFloat32, {2, 3}, {}, 6 * sizeof(float));
  for (int i = 0; i < 6; ++i) producer.as<float>()[i] = 0.5f * static_cast<float>(i) - 1.25f;
  {
    const HostTensor t = fromDLPack(&producer.managed);
    EXPECT_EQ(t.dtype(), DataType::Float32);
    EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));
    EXPECT_EQ(t.data(), producer.storage.data());
    EXPECT_EQ(test::valuesOf(t), (std::vector<double>{-1.25, -0.75, -0.25, 0.25, 0.75, 1.25}));
    EXPECT_EQ(producer.deleted, 0);
  }
  EXPECT_EQ(producer.deleted, 1);
}

TEST(DLPackInteropTest, DeleterRunsOnceWhenTheLastViewDies) {
  Producer producer(kFloat32, {4, 2}, {}, 8 * sizeof(float));
  HostTensor t = fromDLPack(&producer.managed);
  HostTensor view = t.permuted({1, 0});
  HostTensor copy_of_view = view;
  t = HostTensor();
  view = HostTensor();
  EXPECT_EQ(producer.deleted, 0);
  copy_of_view = HostTensor();
  EXPECT_EQ(producer.deleted, 1);
}

TEST(DLPackInteropTest, ByteOffsetAndStridesAreHonored) {
  // A [2, 3] column-major view starting 2 floats into the buffer.
  Producer producer(kFloat32, {2, 3}, {1, 2}, 8 * sizeof(float), 2 * sizeof(float));
  for (int i = 0; i < 8; ++i) producer.as<float>()[i] = static_cast<float>(10 * i + 3);
  const HostTensor t = fromDLPack(&producer.managed);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(t.isContiguous());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(toDouble(t.at({i, j})), 10.0 * static_cast<double>(2 + i + 2 * j) + 3.0);
    }
  }
}

TEST(DLPackInteropTest, ImportsEveryDtypeAndCudaHostMemory) {
  struct Case {
    DLDataType dl;
    DataType dtype;
  };
  const Case cases[] = {
      {{6, 8, 1}, DataType::Bool},
      {{kDLInt, 32, 1}, DataType::Int32},
      {{kDLInt, 64, 1}, DataType::Int64},
      {{kDLFloat, 16, 1}, DataType::Float16},
      {{kDLBfloat, 16, 1}, DataType::BFloat16},
      {{kDLFloat, 32, 1}, DataType::Float32},
      {{kDLFloat, 64, 1}, DataType::Float64},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(toString(c.dtype));
    Producer producer(c.dl, {3}, {}, 3 * 8);
    producer.managed.dl_tensor.device = {kDLCUDAHost, 0};
    const HostTensor t = fromDLPack(&producer.managed);
    EXPECT_EQ(t.dtype(), c.dtype);
    ASSERT_EQ(fromDLDataType(c.dl), c.dtype);
    const DLDataType back = toDLDataType(c.dtype);
    EXPECT_EQ(back.code, c.dl.code);
    EXPECT_EQ(back.bits, c.dl.bits);
    EXPECT_EQ(back.lanes, 1);
  }
  const DLDataType index = toDLDataType(DataType::Index);
  EXPECT_EQ(index.code, kDLInt);
  EXPECT_EQ(index.bits, 64);
}

TEST(DLPackInteropTest, BoolBytesAreReadAsNonzero) {
  Producer producer({6, 8, 1}, {3}, {}, 3);
  auto* bytes = reinterpret_cast<uint8_t*>(producer.storage.data());
  bytes[0] = 0;
  bytes[1] = 1;
  bytes[2] = 0x80;
  const HostTensor t = fromDLPack(&producer.managed);
  EXPECT_EQ(test::valuesOf(t), (std::vector<double>{0.0, 1.0, 1.0}));
}

TEST(DLPackInteropTest, EmptyTensorWithNullDataImports) {
  Producer producer(kFloat32, {0, 4}, {}, 0);
  producer.managed.dl_tensor.data = nullptr;
  const HostTensor t = fromDLPack(&producer.managed);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.defined());
}

TEST(DLPackInteropTest, RefusedDeviceReleasesTheTensorOnce) {
  Producer producer(kFloat32, {2}, {}, 8);
  producer.managed.dl_tensor.device = {kDLCUDA, 1};
  EXPECT_TRUE(throwsError([&] { fromDLPack(&producer.managed); }, {"fromDLPack", "cuda:1", "CPU"}));
  EXPECT_EQ(producer.deleted, 1);
}

TEST(DLPackInteropTest, RefusedDtypesReleaseTheTensorOnce) {
  struct Case {
    DLDataType dtype;
    const char* spelled;
  };
  const Case cases[] = {
      {{kDLFloat, 32, 4}, "float32x4"},   {{kDLInt, 8, 1}, "int8"},     {{kDLUInt, 8, 1}, "uint8"},
      {{kDLComplex, 64, 1}, "complex64"}, {{kDLFloat, 8, 1}, "float8"}, {{6, 16, 1}, "bool16"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spelled);
    Producer producer(c.dtype, {2}, {}, 64);
    EXPECT_TRUE(throwsError([&] { fromDLPack(&producer.managed); },
                            {"fromDLPack", c.spelled, "not supported"}));
    EXPECT_EQ(producer.deleted, 1);
    EXPECT_EQ(fromDLDataType(c.dtype), std::nullopt);
  }
}

TEST(DLPackInteropTest, RefusedShapesReleaseTheTensorOnce) {
  Producer negative(kFloat32, {2, -3}, {}, 64);
  EXPECT_TRUE(throwsError([&] { fromDLPack(&negative.managed); }, {"dim 1", "negative size -3"}));
  EXPECT_EQ(negative.deleted, 1);
  Producer no_shape(kFloat32, {2}, {}, 64);
  no_shape.managed.dl_tensor.shape = nullptr;
  EXPECT_TRUE(throwsError([&] { fromDLPack(&no_shape.managed); }, {"shape", "null"}));
  EXPECT_EQ(no_shape.deleted, 1);
  EXPECT_TRUE(throwsError([] { fromDLPack(nullptr); }, {"fromDLPack", "null"}));
}

TEST(DLPackInteropTest, ExportDescribesTheTensorAndKeepsStorageAlive) {
  int released = 0;
  std::vector<int32_t> buffer = {1, 2, 3, 4, 5, 6};
  std::shared_ptr<void> owner(buffer.data(), [&released](void*) { ++released; });
  HostTensor t =
      HostTensor::borrow(DataType::Int32, {2, 3}, {3, 1}, buffer.data(), owner).permuted({1, 0});
  owner.reset();
  DLManagedTensor* managed = toDLPack(t);
  t = HostTensor();
  EXPECT_EQ(released, 0);
  const DLTensor& dl = managed->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLInt);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(std::vector<int64_t>(dl.shape, dl.shape + 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::vector<int64_t>(dl.strides, dl.strides + 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(static_cast<char*>(dl.data) + dl.byte_offset, reinterpret_cast<char*>(buffer.data()));
  managed->deleter(managed);
  EXPECT_EQ(released, 1);
}

TEST(DLPackInteropTest, ExportThenImportRoundTripsValuesForEveryDtype) {
  test::RandomTensors random(21);
  for (DataType dtype : kAllDataTypes) {
    SCOPED_TRACE(toString(dtype));
    const HostTensor original = random.uniform(dtype, {3, 4}).strided(1, 1, 2);
    const std::vector<double> values = test::valuesOf(original);
    HostTensor imported = fromDLPack(toDLPack(original));
    EXPECT_EQ(imported.dtype(), dtype == DataType::Index ? DataType::Int64 : dtype);
    EXPECT_EQ(imported.sizes(), original.sizes());
    EXPECT_EQ(imported.strides(), original.strides());
    EXPECT_EQ(imported.data(), original.data());
    EXPECT_EQ(test::valuesOf(imported), values);
  }
}

}  // namespace
}  // namespace braze
