// ArgumentSignature: what KernelExecutor::run compares to reuse its last launch plan. Launches that
// differ only in data pointers share a plan; any difference the plan depends on (dtype, device,
// sizes, strides, storage, scalar values, argument kinds) gives another key.

#include "braze/runtime/argument_signature.h"

#include <gtest/gtest.h>

namespace braze {
namespace {

using Arguments = std::vector<std::variant<DeviceTensor, ScalarValue>>;

DeviceTensor tensor(DataType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                    CUdeviceptr data = 0x1000, int device = 0) {
  return DeviceTensor::borrow(dtype, std::move(sizes), std::move(strides), data, device, nullptr);
}

TEST(ArgumentSignature, DataPointersDoNotMatter) {
  const Arguments a = {tensor(DataType::Float32, {4, 8}, {8, 1}, 0x1000), ScalarValue(2.0)};
  const Arguments b = {tensor(DataType::Float32, {4, 8}, {8, 1}, 0x9000), ScalarValue(2.0)};
  EXPECT_EQ(ArgumentSignature(a), ArgumentSignature(b));
}

TEST(ArgumentSignature, EverythingThePlanReadsMatters) {
  const ArgumentSignature base({tensor(DataType::Float32, {4, 8}, {8, 1}), ScalarValue(2.0)});
  const std::vector<Arguments> others = {
      {tensor(DataType::BFloat16, {4, 8}, {8, 1}), ScalarValue(2.0)},            // dtype
      {tensor(DataType::Float32, {4, 8}, {8, 1}, 0x1000, 1), ScalarValue(2.0)},  // device
      {tensor(DataType::Float32, {4, 9}, {9, 1}), ScalarValue(2.0)},             // sizes
      {tensor(DataType::Float32, {4, 8}, {1, 4}), ScalarValue(2.0)},             // strides
      {tensor(DataType::Float32, {4, 8}, {8, 1}, 0), ScalarValue(2.0)},          // no storage
      {tensor(DataType::Float32, {32}, {1}), ScalarValue(2.0)},                  // rank
      {tensor(DataType::Float32, {4, 8}, {8, 1}), ScalarValue(3.0)},             // scalar value
      {tensor(DataType::Float32, {4, 8}, {8, 1}), ScalarValue(int64_t{2})},      // scalar type
      {tensor(DataType::Float32, {4, 8}, {8, 1})},                               // count
      {ScalarValue(2.0), tensor(DataType::Float32, {4, 8}, {8, 1})},             // order
  };
  for (size_t i = 0; i < others.size(); ++i)
    EXPECT_FALSE(base == ArgumentSignature(others[i])) << i;
}

}  // namespace
}  // namespace braze
