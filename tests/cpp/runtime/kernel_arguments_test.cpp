// The byte layout of kernel parameters must match what the generated code declares
// (braze::Tensor<T, N, IndexT> in core/src/codegen/runtime/tensor.cuh).

#include <gtest/gtest.h>

#include <cstring>

#include "braze/runtime/kernel_arguments.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

// Mirrors of the runtime header's struct, compiled by the host compiler: its layout rules for
// these members are the same as NVCC's.
template <typename T, int N, typename IndexT>
struct Tensor {
  T* data;
  IndexT size[N > 0 ? N : 1];
  IndexT stride[N > 0 ? N : 1];
};

template <typename T>
T read(std::span<const std::byte> bytes, size_t offset = 0) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

TEST(KernelArgumentsTest, TensorWithInt32Indices) {
  KernelArguments arguments(DataType::Int32);
  const std::vector<int64_t> sizes = {3, 5, 7};
  const std::vector<int64_t> strides = {70, 14, 2};
  arguments.addTensor(0x7f0000001000, sizes, strides, "T0");
  ASSERT_EQ(arguments.size(), 1u);
  const auto bytes = arguments.bytes(0);
  ASSERT_EQ(bytes.size(), sizeof(Tensor<float, 3, int32_t>));
  const auto tensor = read<Tensor<float, 3, int32_t>>(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data), 0x7f0000001000u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(tensor.size[d], sizes[d]);
    EXPECT_EQ(tensor.stride[d], strides[d]);
  }
}

TEST(KernelArgumentsTest, TensorWithInt64Indices) {
  KernelArguments arguments(DataType::Int64);
  const std::vector<int64_t> sizes = {int64_t{1} << 33, 2};
  const std::vector<int64_t> strides = {2, 1};
  arguments.addTensor(0x1000, sizes, strides, "T0");
  const auto bytes = arguments.bytes(0);
  ASSERT_EQ(bytes.size(), sizeof(Tensor<double, 2, int64_t>));
  const auto tensor = read<Tensor<double, 2, int64_t>>(bytes);
  EXPECT_EQ(tensor.size[0], int64_t{1} << 33);
  EXPECT_EQ(tensor.size[1], 2);
  EXPECT_EQ(tensor.stride[0], 2);
  EXPECT_EQ(tensor.stride[1], 1);
}

TEST(KernelArgumentsTest, PaddingMatchesTheStruct) {
  // Odd ranks with int32 indices end on a 4-byte boundary; the struct is padded to 8.
  for (int rank = 0; rank <= 5; ++rank) {
    KernelArguments arguments(DataType::Int32);
    const std::vector<int64_t> sizes(static_cast<size_t>(rank), 2);
    arguments.addTensor(0x1000, sizes, sizes, "T");
    const size_t expected = rank == 0   ? sizeof(Tensor<float, 0, int32_t>)
                            : rank == 1 ? sizeof(Tensor<float, 1, int32_t>)
                            : rank == 2 ? sizeof(Tensor<float, 2, int32_t>)
                            : rank == 3 ? sizeof(Tensor<float, 3, int32_t>)
                            : rank == 4 ? sizeof(Tensor<float, 4, int32_t>)
                                        : sizeof(Tensor<float, 5, int32_t>);
    EXPECT_EQ(arguments.bytes(0).size(), expected) << "rank " << rank;
  }
}

TEST(KernelArgumentsTest, ZeroDimTensorHasOneSlotOfEach) {
  KernelArguments arguments(DataType::Int64);
  arguments.addTensor(0xabc0, {}, {}, "T0");
  const auto tensor = read<Tensor<float, 0, int64_t>>(arguments.bytes(0));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data), 0xabc0u);
  EXPECT_EQ(tensor.size[0], 0);
  EXPECT_EQ(tensor.stride[0], 0);
}

TEST(KernelArgumentsTest, ScalarsInTheirDtype) {
  KernelArguments arguments(DataType::Int32);
  arguments.addScalar(DataType::Float32, 1.5, "s0");
  arguments.addScalar(DataType::Float64, 0.1, "s1");
  arguments.addScalar(DataType::Int64, int64_t{-5'000'000'000}, "s2");
  arguments.addScalar(DataType::Int32, int64_t{-7}, "s3");
  arguments.addScalar(DataType::Bool, true, "s4");
  arguments.addScalar(DataType::Float16, 0.333251953125, "s5");  // exactly a half
  arguments.addScalar(DataType::BFloat16, -2.0, "s6");
  arguments.addScalar(DataType::Index, int64_t{12345}, "s7");
  arguments.addScalar(DataType::Float32, int64_t{3}, "s8");  // an integer for a float input
  ASSERT_EQ(arguments.size(), 9u);
  EXPECT_EQ(arguments.bytes(0).size(), 4u);
  EXPECT_EQ(read<float>(arguments.bytes(0)), 1.5f);
  EXPECT_EQ(read<double>(arguments.bytes(1)), 0.1);
  EXPECT_EQ(read<int64_t>(arguments.bytes(2)), -5'000'000'000);
  EXPECT_EQ(read<int32_t>(arguments.bytes(3)), -7);
  EXPECT_EQ(arguments.bytes(4).size(), 1u);
  EXPECT_EQ(read<uint8_t>(arguments.bytes(4)), 1);
  EXPECT_EQ(arguments.bytes(5).size(), 2u);
  EXPECT_EQ(read<uint16_t>(arguments.bytes(5)), 0x3555);  // float16 bits of 0.33325
  EXPECT_EQ(read<uint16_t>(arguments.bytes(6)), 0xC000);  // bfloat16 bits of -2
  EXPECT_EQ(arguments.bytes(7).size(), 4u);               // Index is the kernel's int32
  EXPECT_EQ(read<int32_t>(arguments.bytes(7)), 12345);
  EXPECT_EQ(read<float>(arguments.bytes(8)), 3.0f);
}

TEST(KernelArgumentsTest, IndexScalarsFollowTheIndexType) {
  KernelArguments arguments(DataType::Int64);
  arguments.addScalar(DataType::Index, int64_t{1} << 40, "s0");
  EXPECT_EQ(arguments.bytes(0).size(), 8u);
  EXPECT_EQ(read<int64_t>(arguments.bytes(0)), int64_t{1} << 40);
}

TEST(KernelArgumentsTest, FloatScalarsAreRoundedToTheirDtype) {
  KernelArguments arguments(DataType::Int32);
  arguments.addScalar(DataType::Float32, 0.1, "s0");
  EXPECT_EQ(read<float>(arguments.bytes(0)), 0.1f);
}

TEST(KernelArgumentsTest, PointersAndTheParameterArray) {
  KernelArguments arguments(DataType::Int32);
  arguments.addTensor(0x2000, std::vector<int64_t>{4}, std::vector<int64_t>{1}, "T0");
  arguments.addScalar(DataType::Float32, 2.0, "s0");
  arguments.addPointer(0xdead0000);
  void** pointers = arguments.pointers();
  EXPECT_EQ(pointers[0], arguments.bytes(0).data());
  EXPECT_EQ(pointers[1], arguments.bytes(1).data());
  EXPECT_EQ(pointers[2], arguments.bytes(2).data());
  EXPECT_EQ(*static_cast<uint64_t*>(pointers[2]), 0xdead0000u);
  EXPECT_EQ(*static_cast<float*>(pointers[1]), 2.0f);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pointers[i]) % 8, 0u) << i;
  }
}

TEST(KernelArgumentsTest, TensorMapsAreCopiedWholeAndAligned) {
  // A tensor map after a 4-byte scalar: the kernel declares it `const __grid_constant__
  // braze::TensorMap`, 64-byte aligned; the host copy is aligned as CUtensorMap (128).
  KernelArguments arguments(DataType::Int32);
  arguments.addScalar(DataType::Int32, int64_t{7}, "n");
  CUtensorMap map{};
  for (size_t i = 0; i < CU_TENSOR_MAP_NUM_QWORDS; ++i) map.opaque[i] = 0x0101010101010101u * i;
  arguments.addTensorMap(map);
  arguments.addPointer(0xbeef0000);
  EXPECT_EQ(arguments.offset(1) % 128, 0u);
  ASSERT_EQ(arguments.bytes(1).size(), sizeof(CUtensorMap));
  EXPECT_EQ(std::memcmp(arguments.bytes(1).data(), &map, sizeof(map)), 0);
  void** pointers = arguments.pointers();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pointers[1]) % alignof(CUtensorMap), 0u);
  EXPECT_EQ(*static_cast<uint64_t*>(pointers[2]), 0xbeef0000u);
}

TEST(KernelArgumentsTest, SizesBeyondInt32AreRefusedWithWhatToDo) {
  KernelArguments arguments(DataType::Int32);
  EXPECT_TRUE(test::throwsError(
      [&] {
        arguments.addTensor(0x1000, std::vector<int64_t>{int64_t{1} << 31}, std::vector<int64_t>{1},
                            "input 0 (T0)");
      },
      {"input 0 (T0)", "dim 0", "2147483648", "int32 index type", "int64 indexing"}));
  // Each size fits, but the last element's offset does not.
  EXPECT_TRUE(test::throwsError(
      [&] {
        arguments.addTensor(0x1000, std::vector<int64_t>{65536, 65536},
                            std::vector<int64_t>{65536, 1}, "output 0 (T2)");
      },
      {"output 0 (T2)", "offset of its last element", "4294967295", "int64 indexing"}));
  // An empty tensor has no last element.
  arguments.addTensor(0x1000, std::vector<int64_t>{0, 65536}, std::vector<int64_t>{65536, 1}, "T3");
  EXPECT_TRUE(test::throwsError(
      [&] { arguments.addScalar(DataType::Index, int64_t{1} << 32, "scalar input 1 (s4)"); },
      {"scalar input 1 (s4)", "4294967296", "int32 index type"}));
  EXPECT_TRUE(test::throwsError(
      [&] { arguments.addScalar(DataType::Int32, int64_t{1} << 32, "scalar input 2 (s5)"); },
      {"scalar input 2 (s5)", "does not fit int32"}));
}

}  // namespace
}  // namespace braze
