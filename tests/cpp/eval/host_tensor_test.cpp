// HostTensor: allocation, element access for every dtype (through the tensor's own accessors,
// checked against raw memory read by the test support), views and copies.

#include "braze/eval/host_tensor.h"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "braze/eval/strided_layout.h"

#include "support/error_matchers.h"
#include "support/multi_index.h"
#include "support/random_tensor.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;

// Random values for `dtype` that stay exact as doubles; never all zero.
std::vector<double> randomValues(DataType dtype, int64_t count, uint64_t seed) {
  test::RandomTensors random(seed);
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i) {
    const double v = isBoolean(dtype)    ? static_cast<double>(random.integer(0, 1))
                     : isIntegral(dtype) ? static_cast<double>(random.integer(-1000, 1000))
                                         : random.value(-100.0, 100.0);
    values.push_back(test::roundTo(dtype, v));
  }
  if (count > 0) values[0] = test::roundTo(dtype, 1.0);
  return values;
}

double heldAsDouble(const ScalarValue& value) {
  return toDouble(value);
}

TEST(HostTensorTest, EmptyIsContiguousRowMajorAndAligned) {
  const HostTensor t = HostTensor::empty(DataType::Float32, {2, 3, 4});
  EXPECT_EQ(t.dtype(), DataType::Float32);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.size(1), 3);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_TRUE(t.isContiguous());
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  EXPECT_NE(t.owner(), nullptr);
}

TEST(HostTensorTest, EmptyOfZeroElementsAndZeroDims) {
  const HostTensor none = HostTensor::empty(DataType::Int64, {3, 0, 2});
  EXPECT_EQ(none.numel(), 0);
  EXPECT_TRUE(none.defined());
  EXPECT_TRUE(none.isContiguous());
  const HostTensor scalar = HostTensor::empty(DataType::Float64, {});
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_NE(scalar.data(), nullptr);
  EXPECT_FALSE(HostTensor().defined());
}

TEST(HostTensorTest, FullConvertsTheValueForEveryDtype) {
  for (DataType dtype : kAllDataTypes) {
    SCOPED_TRACE(toString(dtype));
    const ScalarValue value = isBoolean(dtype)    ? ScalarValue(true)
                              : isIntegral(dtype) ? ScalarValue(int64_t{-7})
                                                  : ScalarValue(0.1);
    const HostTensor t = HostTensor::full(dtype, {2, 3}, value);
    const std::vector<double> actual = test::valuesOf(t);
    ASSERT_EQ(actual.size(), 6u);
    for (double v : actual) EXPECT_EQ(v, test::roundTo(dtype, toDouble(value)));
  }
}

TEST(HostTensorTest, AtAndSetMatchRawMemoryForEveryDtype) {
  const std::vector<int64_t> sizes = {3, 4, 2};
  for (DataType dtype : kAllDataTypes) {
    SCOPED_TRACE(toString(dtype));
    const std::vector<double> values = randomValues(dtype, 24, 11);
    HostTensor t = test::tensorOf(dtype, sizes, values);
    for (int64_t flat = 0; flat < 24; ++flat) {
      const std::vector<int64_t> index = test::unravelIndex(flat, sizes);
      const ScalarValue held = t.at(index);
      // Held in the dtype's category: bool, int64 or double.
      EXPECT_EQ(held.index(), isBoolean(dtype) ? 0u : isIntegral(dtype) ? 1u : 2u);
      EXPECT_EQ(heldAsDouble(held), values[static_cast<size_t>(flat)]);
      EXPECT_EQ(heldAsDouble(t.atFlat(flat)), values[static_cast<size_t>(flat)]);
    }
    const std::vector<double> replacement = randomValues(dtype, 24, 12);
    for (int64_t flat = 0; flat < 24; ++flat) {
      const double v = replacement[static_cast<size_t>(flat)];
      const ScalarValue held = isBoolean(dtype)    ? ScalarValue(v != 0)
                               : isIntegral(dtype) ? ScalarValue(static_cast<int64_t>(v))
                                                   : ScalarValue(v);
      if (flat % 2 == 0) {
        t.set(test::unravelIndex(flat, sizes), held);
      } else {
        t.setFlat(flat, held);
      }
    }
    EXPECT_EQ(test::valuesOf(t), replacement);
  }
}

TEST(HostTensorTest, Float16DecodesAndReencodesEveryBitPattern) {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  for (size_t i = 0; i < bits.size(); ++i) {
    const double value = toDouble(loadElement(DataType::Float16, bits.data(), i));
    uint16_t stored = 0;
    storeElement(DataType::Float16, &stored, 0, value);
    const bool is_nan = (bits[i] & 0x7c00) == 0x7c00 && (bits[i] & 0x3ff) != 0;
    if (is_nan) {
      EXPECT_TRUE(std::isnan(value)) << "bits " << i;
      EXPECT_EQ(stored & 0x7c00, 0x7c00) << "bits " << i;
      EXPECT_NE(stored & 0x3ff, 0) << "bits " << i;
    } else {
      ASSERT_EQ(stored, bits[i]) << "bits " << i << " decode to " << value;
    }
  }
  auto decode = [](uint16_t b) { return toDouble(loadElement(DataType::Float16, &b, 0)); };
  EXPECT_EQ(decode(0x3c00), 1.0);
  EXPECT_EQ(decode(0xc000), -2.0);
  EXPECT_EQ(decode(0x7bff), 65504.0);
  EXPECT_EQ(decode(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(decode(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(decode(0x3555), 0x1.554p-2);
  EXPECT_EQ(decode(0x7c00), INFINITY);
  EXPECT_EQ(decode(0xfc00), -INFINITY);
  EXPECT_TRUE(std::signbit(decode(0x8000)));
}

TEST(HostTensorTest, BFloat16DecodesAndReencodesEveryBitPattern) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto bits = static_cast<uint16_t>(i);
    const double value = toDouble(loadElement(DataType::BFloat16, &bits, 0));
    // Independent decode: the upper half of a float32.
    const uint32_t wide = i << 16;
    float expected;
    std::memcpy(&expected, &wide, sizeof(expected));
    uint16_t stored = 0;
    storeElement(DataType::BFloat16, &stored, 0, value);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(value));
      EXPECT_TRUE((stored & 0x7f80) == 0x7f80 && (stored & 0x7f) != 0) << "bits " << i;
    } else {
      ASSERT_EQ(value, static_cast<double>(expected)) << "bits " << i;
      ASSERT_EQ(stored, bits) << "bits " << i;
    }
  }
}

TEST(HostTensorTest, StoringRoundsToNearestEven) {
  auto storeHalf = [](double v) {
    uint16_t bits = 0;
    storeElement(DataType::Float16, &bits, 0, v);
    return toDouble(loadElement(DataType::Float16, &bits, 0));
  };
  EXPECT_EQ(storeHalf(1.0 + std::ldexp(1.0, -11)), 1.0);  // tie: to the even mantissa
  EXPECT_EQ(storeHalf(1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(storeHalf(1.0 + 1.1 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(storeHalf(65519.0), 65504.0);
  EXPECT_EQ(storeHalf(65520.0), INFINITY);  // the tie above the largest half rounds up
  EXPECT_EQ(storeHalf(-1e6), -INFINITY);
  EXPECT_EQ(storeHalf(std::ldexp(1.0, -25)), 0.0);  // tie with zero: to even (zero)
  EXPECT_EQ(storeHalf(std::ldexp(1.5, -25)), std::ldexp(1.0, -24));
  EXPECT_EQ(storeHalf(std::ldexp(3.0, -25)), std::ldexp(2.0, -24));  // subnormal tie to even
  EXPECT_TRUE(std::isnan(storeHalf(NAN)));

  auto storeBf16 = [](double v) {
    uint16_t bits = 0;
    storeElement(DataType::BFloat16, &bits, 0, v);
    return toDouble(loadElement(DataType::BFloat16, &bits, 0));
  };
  EXPECT_EQ(storeBf16(1.0 + std::ldexp(1.0, -8)), 1.0);
  EXPECT_EQ(storeBf16(1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(storeBf16(3.14159), 3.140625);
  EXPECT_EQ(storeBf16(1e39), INFINITY);

  float f = 0;
  storeElement(DataType::Float32, &f, 0, 0.1);
  EXPECT_EQ(f, 0.1f);
  storeElement(DataType::Float32, &f, 0, 1.0 + std::ldexp(1.0, -24));  // tie: to even
  EXPECT_EQ(f, 1.0f);
}

TEST(HostTensorTest, StoringIntegersWrapsAndTruncates) {
  int32_t i32 = 0;
  storeElement(DataType::Int32, &i32, 0, int64_t{(int64_t{1} << 32) + 5});
  EXPECT_EQ(i32, 5);
  storeElement(DataType::Int32, &i32, 0, int64_t{int64_t{1} << 31});
  EXPECT_EQ(i32, INT32_MIN);
  storeElement(DataType::Int32, &i32, 0, -3.7);
  EXPECT_EQ(i32, -3);
  int64_t i64 = 0;
  storeElement(DataType::Int64, &i64, 0, 3.9);
  EXPECT_EQ(i64, 3);
  storeElement(DataType::Index, &i64, 0, int64_t{-42});
  EXPECT_EQ(i64, -42);
  EXPECT_EQ(std::get<int64_t>(loadElement(DataType::Index, &i64, 0)), -42);
  uint8_t flag = 7;
  storeElement(DataType::Bool, &flag, 0, 0.0);
  EXPECT_EQ(flag, 0);
  storeElement(DataType::Bool, &flag, 0, int64_t{2});
  EXPECT_EQ(flag, 1);
  // A foreign buffer may hold any nonzero byte for true.
  const uint8_t foreign = 0x40;
  EXPECT_EQ(std::get<bool>(loadElement(DataType::Bool, &foreign, 0)), true);
}

TEST(HostTensorTest, PermutedViewSharesStorage) {
  const std::vector<double> values = randomValues(DataType::Float32, 24, 3);
  HostTensor base = test::tensorOf(DataType::Float32, {2, 3, 4}, values);
  HostTensor view = base.permuted({2, 0, 1});
  EXPECT_EQ(view.sizes(), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(view.strides(), (std::vector<int64_t>{1, 12, 4}));
  EXPECT_EQ(view.data(), base.data());
  EXPECT_FALSE(view.isContiguous());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(toDouble(view.at({k, i, j})), values[static_cast<size_t>(i * 12 + j * 4 + k)]);
      }
    }
  }
  view.set({3, 1, 2}, 5.5);
  EXPECT_EQ(toDouble(base.at({1, 2, 3})), 5.5);
  // Flat positions follow the view's own row-major order.
  EXPECT_EQ(toDouble(view.atFlat(1)), toDouble(base.at({0, 1, 0})));
}

TEST(HostTensorTest, StridedViewTakesEveryStepthElement) {
  const std::vector<double> values = randomValues(DataType::Int32, 15, 4);
  const HostTensor base = test::tensorOf(DataType::Int32, {3, 5}, values);
  const HostTensor view = base.strided(1, 1, 2);
  EXPECT_EQ(view.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(view.strides(), (std::vector<int64_t>{5, 2}));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      EXPECT_EQ(toDouble(view.at({i, j})), values[static_cast<size_t>(i * 5 + 1 + 2 * j)]);
    }
  }
  EXPECT_EQ(base.strided(1, 5, 1).size(1), 0);
  EXPECT_EQ(base.strided(1, 0, 3).size(1), 2);
  EXPECT_EQ(base.strided(1, 4, 3).size(1), 1);
}

TEST(HostTensorTest, ExpandedViewRepeatsSizeOneDims) {
  const std::vector<double> values = randomValues(DataType::Float64, 3, 5);
  const HostTensor base = test::tensorOf(DataType::Float64, {3, 1}, values);
  const HostTensor view = base.expanded({2, 3, 4});
  EXPECT_EQ(view.sizes(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(view.strides(), (std::vector<int64_t>{0, 1, 0}));
  for (int64_t n = 0; n < 24; ++n) {
    const std::vector<int64_t> index = test::unravelIndex(n, {2, 3, 4});
    EXPECT_EQ(toDouble(view.atFlat(n)), values[static_cast<size_t>(index[1])]);
  }
  EXPECT_EQ(base.expanded({-1, 5}).sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(throwsError([&] { base.expanded({4, 5}); }, {"expanded", "dim 0", "size 3"}));
}

TEST(HostTensorTest, ContiguousCopiesAnyViewForEveryDtype) {
  for (DataType dtype : kAllDataTypes) {
    SCOPED_TRACE(toString(dtype));
    const std::vector<double> values = randomValues(dtype, 60, 6);
    const HostTensor base = test::tensorOf(dtype, {3, 4, 5}, values);
    for (const HostTensor& view : {base.permuted({1, 2, 0}), base.strided(2, 1, 2),
                                   base.strided(0, 2, 1).expanded({2, 1, 4, 5})}) {
      const HostTensor copy = view.contiguous();
      EXPECT_TRUE(copy.isContiguous());
      EXPECT_NE(copy.data(), base.data());
      EXPECT_EQ(copy.sizes(), view.sizes());
      EXPECT_EQ(test::valuesOf(copy), test::valuesOf(view));
    }
  }
}

TEST(HostTensorTest, IsContiguousIgnoresStridesOfSizeOneDims) {
  std::vector<float> data(6);
  const HostTensor t =
      HostTensor::borrow(DataType::Float32, {2, 1, 3}, {3, 99, 1}, data.data(), {});
  EXPECT_TRUE(t.isContiguous());
  const HostTensor u = HostTensor::borrow(DataType::Float32, {2, 3}, {1, 2}, data.data(), {});
  EXPECT_FALSE(u.isContiguous());
}

TEST(HostTensorTest, ViewsKeepBorrowedStorageAlive) {
  int released = 0;
  std::vector<double> buffer = {1.0, 2.0, 3.0, 4.0};
  std::shared_ptr<void> owner(buffer.data(), [&released](void*) { ++released; });
  HostTensor base = HostTensor::borrow(DataType::Float64, {2, 2}, {2, 1}, buffer.data(), owner);
  owner.reset();
  HostTensor view = base.permuted({1, 0});
  base = HostTensor();
  EXPECT_EQ(released, 0);
  EXPECT_EQ(toDouble(view.at({0, 1})), 3.0);
  view = HostTensor();
  EXPECT_EQ(released, 1);
}

TEST(HostTensorTest, DescribeNamesDtypeSizesAndStrides) {
  EXPECT_EQ(HostTensor::empty(DataType::Float32, {2, 3}).describe(),
            "float32[2, 3] strides [3, 1]");
  EXPECT_EQ(HostTensor::empty(DataType::BFloat16, {}).describe(), "bfloat16[] strides []");
}

TEST(HostTensorTest, BadAccessIsAnErrorNotACrash) {
  HostTensor t = HostTensor::full(DataType::Float32, {2, 3}, 1.0);
  EXPECT_TRUE(throwsError([&] { t.at({1}); }, {"HostTensor::at", "rank 2"}));
  EXPECT_TRUE(throwsError([&] { t.at({1, 3}); }, {"HostTensor::at", "[1, 3]", "dim 1"}));
  EXPECT_TRUE(throwsError([&] { t.set({-1, 0}, 2.0); }, {"HostTensor::set", "dim 0"}));
  EXPECT_TRUE(throwsError([&] { t.atFlat(6); }, {"atFlat", "position 6", "6 elements"}));
  EXPECT_TRUE(throwsError([&] { t.size(2); }, {"dim 2", "valid dims are -2 .. 1"}));
  EXPECT_TRUE(throwsError([&] { t.permuted({0, 0}); }, {"not a permutation"}));
  EXPECT_TRUE(throwsError([&] { t.strided(1, 0, 0); }, {"step 0"}));
  EXPECT_TRUE(throwsError([&] { t.strided(1, 4, 1); }, {"start 4"}));
  EXPECT_TRUE(throwsError(
      [&] {
        HostTensor::empty(DataType::Float32, {2, -1});
      },
      {"size -1", "dim 1", "negative"}));
  EXPECT_TRUE(throwsError(
      [&] {
        HostTensor::borrow(DataType::Float32, {2, 3}, {1}, t.data(), nullptr);
      },
      {"borrow", "different lengths"}));
  EXPECT_TRUE(
      throwsError([&] { HostTensor::borrow(DataType::Float32, {2}, {1}, nullptr, nullptr); },
                  {"borrow", "null"}));
}

// Dense in some order: row-major, or another allocation order; not with a gap or an overlap.
TEST(StridedLayoutTest, DenseInSomeOrder) {
  EXPECT_TRUE(isDenseLayout({2, 3}, {3, 1}));
  EXPECT_TRUE(isDenseLayout({2, 3}, {1, 2}));         // column-major
  EXPECT_TRUE(isDenseLayout({2, 1, 3}, {3, 99, 1}));  // a size-1 dim's stride is never used
  EXPECT_TRUE(isDenseLayout({4, 0, 3}, {7, 5, 1}));   // empty
  EXPECT_FALSE(isDenseLayout({2, 3}, {4, 1}));        // a gap after each row
  EXPECT_FALSE(isDenseLayout({2, 3}, {1, 1}));        // overlapping
  EXPECT_FALSE(isContiguousLayout({2, 3}, {1, 2}));   // dense, but not row-major
}

}  // namespace
}  // namespace braze
