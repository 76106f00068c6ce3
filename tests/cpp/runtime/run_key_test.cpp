// RunKey: what the executor cache looks runs up by (no GPU needed: borrowed device tensors).

#include "braze/runtime/run_key.h"

#include <gtest/gtest.h>

namespace braze {
namespace {

using Arguments = std::vector<std::variant<DeviceTensor, HostTensor, ScalarValue>>;

DeviceTensor tensor(std::vector<int64_t> sizes, std::vector<int64_t> strides,
                    CUdeviceptr data = 0x1000, DataType dtype = DataType::Float32) {
  return DeviceTensor::borrow(dtype, std::move(sizes), std::move(strides), data, 0, nullptr);
}

RunKey exact(const Arguments& arguments, std::string_view options = "") {
  return RunKey::exact(arguments, options);
}
RunKey signature(const Arguments& arguments, std::string_view options = "") {
  return RunKey::signature(arguments, options);
}

TEST(RunKeyTest, ExactKeysDifferInSizesStridesAlignmentScalarsAndOptions) {
  const Arguments base = {tensor({4, 8}, {8, 1}), ScalarValue(0.5)};
  EXPECT_EQ(exact(base), exact({tensor({4, 8}, {8, 1}, 0x2000), ScalarValue(0.5)}));
  EXPECT_EQ(exact(base).hash(), exact({tensor({4, 8}, {8, 1}, 0x2000), ScalarValue(0.5)}).hash());
  EXPECT_NE(exact(base), exact({tensor({5, 8}, {8, 1}), ScalarValue(0.5)}));
  EXPECT_NE(exact(base), exact({tensor({4, 8}, {16, 1}), ScalarValue(0.5)}));
  EXPECT_NE(exact(base), exact({tensor({4, 8}, {8, 1}, 0x1004), ScalarValue(0.5)}));
  EXPECT_NE(exact(base), exact({tensor({4, 8}, {8, 1}), ScalarValue(0.25)}));
  EXPECT_NE(exact(base), exact({tensor({4, 8}, {8, 1}), ScalarValue(int64_t{1})}));
  EXPECT_NE(exact(base), exact(base, "braze::pointwise"));
  EXPECT_NE(exact(base),
            exact({tensor({4, 8}, {8, 1}, 0x1000, DataType::BFloat16), ScalarValue(0.5)}));
}

TEST(RunKeyTest, ANullPointerNeverMatchesRealStorage) {
  EXPECT_NE(exact({tensor({4, 8}, {8, 1}, 0)}), exact({tensor({4, 8}, {8, 1}, 0x1000)}));
}

TEST(RunKeyTest, SignaturesKeepLayoutAndBroadcastsButNotSizes) {
  const Arguments base = {tensor({4, 8}, {8, 1}), ScalarValue(0.5)};
  EXPECT_EQ(signature(base), signature({tensor({64, 1024}, {1024, 1}), ScalarValue(2.0)}));
  // Transposed storage, a gap, a size-1 dim, another alignment class: other signatures.
  EXPECT_NE(signature(base), signature({tensor({4, 8}, {1, 4}), ScalarValue(0.5)}));
  EXPECT_NE(signature(base), signature({tensor({4, 8}, {16, 1}), ScalarValue(0.5)}));
  EXPECT_NE(signature(base), signature({tensor({1, 8}, {8, 1}), ScalarValue(0.5)}));
  EXPECT_NE(signature(base), signature({tensor({4, 8}, {8, 1}, 0x1002), ScalarValue(0.5)}));
  EXPECT_NE(signature(base),
            signature({HostTensor::empty(DataType::Float32, {4, 8}), ScalarValue(0.5)}));
}

}  // namespace
}  // namespace braze
