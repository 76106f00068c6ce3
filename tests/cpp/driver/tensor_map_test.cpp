// Tensor map specs are checked before the driver sees them: each rule of
// cuTensorMapEncodeTiled fails with a message naming the tensor, the dim and the fix. These run
// on every machine; encoding itself needs the driver.

#include <gtest/gtest.h>

#include <cstring>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/tensor_map.h"
#include "support/error_matchers.h"

namespace braze::driver {
namespace {

// A row-major bf16 [512, 256] matrix read in 64 x 128 boxes with a 128-byte swizzle: what a
// matmul's A operand looks like. The address is aligned but never dereferenced.
TensorMapSpec goodSpec() {
  return TensorMapSpec{.name = "A",
                       .dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                       .address = 0x10000,
                       .dims = {256, 512},
                       .strides = {256},
                       .box = {64, 128},
                       .swizzle = CU_TENSOR_MAP_SWIZZLE_128B};
}

TEST(TensorMapTest, AValidSpecPasses) {
  validateTensorMap(goodSpec());
  TensorMapSpec five_dims = goodSpec();
  five_dims.dims = {64, 2, 3, 4, 5};
  five_dims.strides = {128, 128 * 2 * 2, 128 * 2 * 3 * 2, 128 * 2 * 3 * 4 * 2};
  five_dims.stride_unit = StrideUnit::Bytes;
  five_dims.box = {64, 2, 3, 4, 5};
  five_dims.element_strides = {1, 1, 1, 1, 2};
  validateTensorMap(five_dims);
  EXPECT_EQ(goodSpec().describe(),
            "tensor 'A': bfloat16, dims {256, 512} (innermost first), strides {256} elements, box "
            "{64, 128}, swizzle 128B");
}

TEST(TensorMapTest, RankIsOneToFive) {
  TensorMapSpec none = goodSpec();
  none.dims = {};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(none); },
                                {"tensor map for 'A': 0 dims", "1 to 5 dims"}));
  TensorMapSpec six = goodSpec();
  six.dims = {8, 2, 2, 2, 2, 2};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(six); }, {"6 dims", "5 or fewer"}));
}

TEST(TensorMapTest, TheAddressIsSixteenByteAligned) {
  TensorMapSpec spec = goodSpec();
  spec.address = 0x10008;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(spec); },
                                {"'A'", "global address 0x10008 is not 16-byte aligned"}));
  spec.address = 0;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(spec); }, {"global address is null"}));
}

TEST(TensorMapTest, InterleaveNeedsThirtyTwoByteAlignmentAndThreeDims) {
  TensorMapSpec spec = goodSpec();
  spec.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(spec); },
                                {"interleaved layout needs at least 3 dims"}));
  spec.dims = {16, 4, 4};
  spec.strides = {32, 128};
  spec.stride_unit = StrideUnit::Bytes;
  spec.box = {16, 4, 4};
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  spec.address = 0x10010;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(spec); }, {"is not 32-byte aligned"}));
  spec.address = 0x10000;
  validateTensorMap(spec);
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(spec); },
                                {"32-byte interleave works only with CU_TENSOR_MAP_SWIZZLE_32B"}));
}

TEST(TensorMapTest, DimsAreOneToTwoToTheThirtyTwo) {
  TensorMapSpec zero = goodSpec();
  zero.dims = {256, 0};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(zero); },
                                {"dim 1 has size 0", "1 to 2^32", "skip the launch"}));
  TensorMapSpec huge = goodSpec();
  huge.dims = {(uint64_t{1} << 32) + 1, 1};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(huge); },
                                {"dim 0 (innermost) has size 4294967297"}));
}

TEST(TensorMapTest, StridesAreSixteenByteMultiplesBelowTwoToTheForty) {
  TensorMapSpec odd = goodSpec();
  odd.strides = {260};  // 520 bytes
  EXPECT_TRUE(test::throwsError(
      [&] { validateTensorMap(odd); },
      {"the stride of dim 1 is 520 bytes, not a multiple of 16", "multiple of 8 elements"}));
  TensorMapSpec huge = goodSpec();
  huge.strides = {uint64_t{1} << 40};
  huge.stride_unit = StrideUnit::Bytes;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(huge); }, {"below 2^40 bytes"}));
  TensorMapSpec missing = goodSpec();
  missing.strides = {};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(missing); },
                                {"0 strides for 2 dims", "dim 0, the innermost, is contiguous"}));
}

TEST(TensorMapTest, BoxDimsAreOneTo256) {
  TensorMapSpec big = goodSpec();
  big.box = {64, 257};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(big); },
                                {"box dim 1 is 257 elements", "1 to 256"}));
  TensorMapSpec zero = goodSpec();
  zero.box = {64, 0};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(zero); }, {"box dim 1 is 0 elements"}));
  TensorMapSpec short_list = goodSpec();
  short_list.box = {64};
  EXPECT_TRUE(
      test::throwsError([&] { validateTensorMap(short_list); }, {"1 box sizes for 2 dims"}));
}

TEST(TensorMapTest, TheInnerBoxRowIsSixteenByteMultipleWithinTheSwizzleSpan) {
  TensorMapSpec ragged = goodSpec();
  ragged.box = {12, 128};  // 24 bytes
  EXPECT_TRUE(
      test::throwsError([&] { validateTensorMap(ragged); },
                        {"innermost box row is 12 elements = 24 bytes", "multiple of 8 elements"}));
  TensorMapSpec wide = goodSpec();
  wide.box = {128, 64};  // 256 bytes under a 128-byte swizzle
  EXPECT_TRUE(
      test::throwsError([&] { validateTensorMap(wide); },
                        {"256 bytes, more than the 128-byte swizzle span", "at most 64 elements"}));
  TensorMapSpec span64 = goodSpec();
  span64.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(span64); },
                                {"more than the 64-byte swizzle span", "at most 32 elements"}));
  TensorMapSpec span32 = goodSpec();
  span32.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  span32.box = {16, 128};
  validateTensorMap(span32);
  span32.box = {32, 128};
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(span32); },
                                {"more than the 32-byte swizzle span"}));
  TensorMapSpec unswizzled = goodSpec();
  unswizzled.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  unswizzled.box = {256, 8};
  validateTensorMap(unswizzled);
}

TEST(TensorMapTest, ElementStridesAreOneToEight) {
  TensorMapSpec spec = goodSpec();
  spec.element_strides = {1, 9};
  EXPECT_TRUE(
      test::throwsError([&] { validateTensorMap(spec); }, {"element stride 1 is 9", "1 to 8"}));
  spec.element_strides = {1};
  EXPECT_TRUE(
      test::throwsError([&] { validateTensorMap(spec); }, {"1 element strides for 2 dims"}));
}

TEST(TensorMapTest, NanFillNeedsAFloatingPointType) {
  TensorMapSpec spec = goodSpec();
  spec.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
  validateTensorMap(spec);
  spec.dtype = CU_TENSOR_MAP_DATA_TYPE_INT32;
  spec.box = {32, 128};
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_TRUE(
      test::throwsError([&] { validateTensorMap(spec); },
                        {"NaN out-of-bounds fill needs a floating-point dtype, not int32"}));
}

TEST(TensorMapTest, PackedSubByteTypesAreRefused) {
  TensorMapSpec spec = goodSpec();
  spec.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
  EXPECT_TRUE(test::throwsError([&] { validateTensorMap(spec); },
                                {"packed sub-byte data type", "not supported"}));
}

TEST(TensorMapTest, EncodesWithTheDriver) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const auto memory = DeviceMemory::allocate(0, 256 * 512 * 2);
  TensorMapSpec spec = goodSpec();
  spec.address = memory->pointer();
  const CUtensorMap map = encodeTensorMap(spec);
  static_assert(sizeof(map) == 128);
  // The driver wrote something: an all-zero descriptor would be no map at all.
  const CUtensorMap zero{};
  EXPECT_NE(std::memcmp(&map, &zero, sizeof(map)), 0);
}

}  // namespace
}  // namespace braze::driver
