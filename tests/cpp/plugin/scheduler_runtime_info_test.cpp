// The runtime info schedulers receive: the contiguous factory's arguments (row-major strides,
// dtypes from the fusion, scalars in order, 16-byte alignment) and its refusals, and the
// alignment vector accesses may rely on.

#include "braze/plugin/scheduler_runtime_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"

namespace braze {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// x[float16, 3 dims] * s + y[float32, 2 dims], inputs in the order x, s, y.
struct ThreeInputs {
  Fusion fusion;
  ThreeInputs() {
    TensorView* x = makeSymbolicTensor(fusion, 3, DataType::Float16);
    Scalar* s = makeInputScalar(fusion, DataType::Float32);
    TensorView* y = makeSymbolicTensor(fusion, 2);
    fusion.addOutput(add(mul(x, s), y));
  }
};

TEST(ContiguousRuntimeInfo, GivesRowMajorTensorsAndScalarsInInputOrder) {
  ThreeInputs f;
  driver::DeviceProperties device = driver::h100Properties();
  device.sm_count = 7;
  const SchedulerRuntimeInfo info =
      contiguousRuntimeInfo(f.fusion, {{2, 0, 5}, {4, 5}}, {ScalarValue(0.5)}, device);
  ASSERT_EQ(info.arguments.size(), 3u);
  const auto& x = std::get<TensorArgumentInfo>(info.arguments[0]);
  EXPECT_EQ(x.dtype, DataType::Float16);
  EXPECT_EQ(x.sizes, (std::vector<int64_t>{2, 0, 5}));
  // The empty dim counts as 1 for the strides of the dims outside it.
  EXPECT_EQ(x.strides, (std::vector<int64_t>{5, 5, 1}));
  EXPECT_THAT(x.description, HasSubstr("[2, 0, 5] strides [5, 5, 1]"));
  EXPECT_EQ(toDouble(std::get<ScalarValue>(info.arguments[1])), 0.5);
  const auto& y = std::get<TensorArgumentInfo>(info.arguments[2]);
  EXPECT_EQ(y.dtype, DataType::Float32);
  EXPECT_EQ(y.strides, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(info.data_alignments, (std::vector<int64_t>{16, 0, 16}));
  EXPECT_EQ(info.device.sm_count, 7);
  EXPECT_EQ(contiguousRuntimeInfo(f.fusion, {{1, 1, 1}, {1, 1}}, {ScalarValue(1.0)}).device.name,
            driver::h100Properties().name);
}

TEST(ContiguousRuntimeInfo, RefusesMissingOrExtraSizesAndScalars) {
  ThreeInputs f;
  EXPECT_THAT(
      [&] {
        contiguousRuntimeInfo(f.fusion, {{2, 3, 4}}, {ScalarValue(1.0)});
      },
      ThrowsMessage<Error>(HasSubstr("the fusion has 2 tensor inputs but 1 sizes")));
  EXPECT_THAT(
      [&] {
        contiguousRuntimeInfo(f.fusion, {{2, 3, 4}, {3, 4}});
      },
      ThrowsMessage<Error>(HasSubstr("the fusion has 1 scalar inputs but 0 values")));
  EXPECT_THAT(
      [&] {
        contiguousRuntimeInfo(f.fusion, {{2, 3, 4}, {3, 4}}, {ScalarValue(1.0), ScalarValue(2.0)});
      },
      ThrowsMessage<Error>(HasSubstr("1 scalar inputs but 2 values")));
}

TEST(VectorAlignment, CapsAtSixteenBytesAndTreatsUnknownAsOne) {
  SchedulerRuntimeInfo info;
  info.data_alignments = {256, 8, 0};
  EXPECT_EQ(vectorAlignment(info, 0), 16);
  EXPECT_EQ(vectorAlignment(info, 1), 8);
  EXPECT_EQ(vectorAlignment(info, 2), 1);
  EXPECT_EQ(vectorAlignment(info, 3), 1);  // no entry
}

}  // namespace
}  // namespace braze
