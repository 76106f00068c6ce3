// Shared analyses: vectorization limits from layouts, reduction axes, persistent buffers and
// the device properties schedulers assume.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/sched/device_info.h"
#include "braze/sched/persistent_buffer.h"
#include "braze/sched/reduction_analysis.h"
#include "braze/sched/vectorization.h"
#include "sched/fusion_fixtures.h"

namespace braze {
namespace {

using testing::ElementsAre;

TensorView* input(Fusion& fusion, DataType dtype, std::vector<int64_t> sizes,
                  std::vector<std::optional<bool>> contiguity = {},
                  std::vector<int64_t> allocation_order = {}) {
  return makeInputTensor(fusion, {.dtype = dtype,
                                  .sizes = std::move(sizes),
                                  .contiguity = std::move(contiguity),
                                  .allocation_order = std::move(allocation_order)});
}

TEST(VectorizationLimitTest, SymbolicInnermostDimIsCheckedAtLaunch) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float32, {-1, -1});
  const VectorizationLimit limit = vectorizationLimit(x);
  EXPECT_EQ(limit.max_width, 4);
  EXPECT_THAT(limit.dims, ElementsAre(x->axis(1)));
  EXPECT_THAT(limit.extents_to_check, ElementsAre(x->axis(1)->extent()));
  EXPECT_TRUE(limit.strides_to_check.empty());
  EXPECT_TRUE(limit.needs_aligned_base);
}

TEST(VectorizationLimitTest, ConstantExtentsDecide) {
  Fusion fusion;
  TensorView* halves = input(fusion, DataType::Float16, {-1, 64});
  EXPECT_EQ(vectorizationLimit(halves).max_width, 8);
  EXPECT_THAT(vectorizationLimit(halves).dims, ElementsAre(halves->axis(1)));
  EXPECT_TRUE(vectorizationLimit(halves).extents_to_check.empty());
  // 3 x 6 floats: the whole tensor is one run of 18, divisible by 2 only.
  TensorView* small = input(fusion, DataType::Float32, {3, 6});
  EXPECT_EQ(vectorizationLimit(small).max_width, 2);
  EXPECT_THAT(vectorizationLimit(small).dims, ElementsAre(small->axis(0), small->axis(1)));
  // Rows of 6 floats continue into the next row: the run spans the symbolic dim too.
  TensorView* rows = input(fusion, DataType::Float32, {-1, 6});
  const VectorizationLimit limit = vectorizationLimit(rows);
  EXPECT_EQ(limit.max_width, 4);
  EXPECT_THAT(limit.dims, ElementsAre(rows->axis(0), rows->axis(1)));
  EXPECT_EQ(limit.extents_to_check.size(), 2u);
  TensorView* doubles = input(fusion, DataType::Float64, {-1, 16});
  EXPECT_EQ(vectorizationLimit(doubles).max_width, 2);
  EXPECT_EQ(vectorizationLimit(rows, /*max_bytes=*/8).max_width, 2);
}

TEST(VectorizationLimitTest, NonContiguousInnermostDim) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float32, {-1, -1}, {true, false});
  const VectorizationLimit limit = vectorizationLimit(x);
  EXPECT_EQ(limit.max_width, 1);
  EXPECT_TRUE(limit.dims.empty());
  EXPECT_THAT(limit.strides_to_check, ElementsAre(x->axis(1)));
}

TEST(VectorizationLimitTest, NonContiguousOuterDimNeedsAlignedStrides) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float32, {-1, 8}, {false, true});
  const VectorizationLimit limit = vectorizationLimit(x);
  EXPECT_EQ(limit.max_width, 4);
  EXPECT_THAT(limit.dims, ElementsAre(x->axis(1)));
  EXPECT_THAT(limit.strides_to_check, ElementsAre(x->axis(0)));
  // A non-contiguous outer dim also stops the run from growing.
  TensorView* odd = input(fusion, DataType::Float32, {-1, 6}, {false, true});
  EXPECT_EQ(vectorizationLimit(odd).max_width, 2);
  EXPECT_THAT(vectorizationLimit(odd).dims, ElementsAre(odd->axis(1)));
}

TEST(VectorizationLimitTest, AllocationOrderAndBroadcasts) {
  Fusion fusion;
  TensorView* column_major = input(fusion, DataType::Float32, {16, -1}, {}, {1, 0});
  EXPECT_THAT(vectorizationLimit(column_major).dims, ElementsAre(column_major->axis(0)));
  EXPECT_EQ(vectorizationLimit(column_major).max_width, 4);
  TensorView* with_broadcast = input(fusion, DataType::Float32, {12, 1});
  EXPECT_THAT(vectorizationLimit(with_broadcast).dims, ElementsAre(with_broadcast->axis(0)));
  EXPECT_EQ(vectorizationLimit(with_broadcast).max_width, 4);
  // A computed tensor is row-major and contiguous.
  TensorView* y = neg(column_major);
  EXPECT_THAT(vectorizationLimit(y).dims, ElementsAre(y->axis(1)));
}

TEST(VectorizationLimitTest, CommonWidth) {
  Fusion fusion;
  TensorView* a = input(fusion, DataType::Float32, {-1, 64});
  TensorView* b = input(fusion, DataType::Float32, {-1, 6});
  TensorView* c = input(fusion, DataType::Float32, {-1, -1}, {true, false});
  EXPECT_EQ(commonVectorWidth({a}), 4);
  EXPECT_EQ(commonVectorWidth({a, b}), 4);
  EXPECT_EQ(commonVectorWidth({a, c}), 1);
  EXPECT_EQ(commonVectorWidth({}), 1);
}

TEST(ReductionAnalysisTest, InnerAndOuterReductions) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float32, {-1, -1});
  TensorView* rows = sum(x, {1});
  TensorView* cols = sum(x, {0});
  TensorView* transposed = input(fusion, DataType::Float32, {-1, -1}, {}, {1, 0});
  TensorView* down = sum(transposed, {0});
  fusion.addOutput(rows);
  fusion.addOutput(cols);
  fusion.addOutput(down);
  const std::vector<ReductionInfo> info = reductionAxes(fusion);
  ASSERT_EQ(info.size(), 3u);
  EXPECT_EQ(info[0].tv, rows);
  EXPECT_THAT(info[0].axes, ElementsAre(1));
  EXPECT_TRUE(info[0].inner);
  EXPECT_EQ(info[1].tv, cols);
  EXPECT_THAT(info[1].axes, ElementsAre(0));
  EXPECT_FALSE(info[1].inner);
  EXPECT_TRUE(info[2].inner);  // dim 0 is innermost in memory
  EXPECT_TRUE(hasReductions(fusion));
}

TEST(ReductionAnalysisTest, WelfordMatmulAndPointwise) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float32, {-1, -1, -1});
  WelfordResult w = welford(x, {0, 2});
  TensorView* b = input(fusion, DataType::Float32, {-1, -1});
  TensorView* m = matmul(x, b);
  fusion.addOutput(w.avg);
  fusion.addOutput(m);
  const std::vector<ReductionInfo> info = reductionAxes(fusion);
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[0].tv, w.avg);
  EXPECT_THAT(info[0].axes, ElementsAre(0, 2));
  EXPECT_EQ(info[1].tv, m);
  EXPECT_THAT(info[1].axes, ElementsAre(3));

  Fusion pointwise;
  TensorView* p = input(pointwise, DataType::Float32, {-1});
  pointwise.addOutput(exp(p));
  EXPECT_FALSE(hasReductions(pointwise));
  EXPECT_TRUE(reductionAxes(pointwise).empty());
}

TEST(PersistentBufferTest, Softmax) {
  test::SoftmaxFusion s = test::makeSoftmax();
  const std::vector<PersistentBuffer> buffers = persistentBuffers(*s.fusion);
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].tv, s.x);
  EXPECT_EQ(buffers[0].reduction, s.max);
  EXPECT_THAT(buffers[0].dims, ElementsAre(s.x->axis(1)));
  EXPECT_EQ(buffers[1].tv, s.exp);
  EXPECT_EQ(buffers[1].reduction, s.sum);
  EXPECT_THAT(buffers[1].dims, ElementsAre(s.exp->axis(1)));
  // x is read again by the subtraction of the max, exp(x - max) by the division by the sum.
  EXPECT_THAT(buffers[0].rereads, ElementsAre(s.shifted->definition()));
  EXPECT_THAT(buffers[1].rereads, ElementsAre(s.y->definition()));

  ExpressionEvaluator extents;
  EXPECT_EQ(persistentBufferBytes(*s.fusion, extents), std::nullopt);
  extents.bind(s.x->axis(1)->extent(), int64_t{1000});
  EXPECT_EQ(persistentBufferBytes(*s.fusion, extents), 2 * 1000 * 4);
}

TEST(PersistentBufferTest, LayerNormWithReducedPrecisionInput) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float16, {-1, 768});
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* mean = braze::mean(xf, {1}, /*keepdim=*/true);
  TensorView* centered = sub(xf, mean);
  TensorView* var = braze::mean(mul(centered, centered), {1}, /*keepdim=*/true);
  TensorView* y = mul(centered, rsqrt(add(var, 1e-5)));
  fusion.addOutput(cast(y, DataType::Float16));
  const std::vector<PersistentBuffer> buffers = persistentBuffers(fusion);
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].tv, xf);
  EXPECT_EQ(buffers[1].tv, centered);
  // The squares feed the variance; only the normalization reads `centered` again.
  EXPECT_THAT(buffers[0].rereads, ElementsAre(centered->definition()));
  EXPECT_THAT(buffers[1].rereads, ElementsAre(y->definition()));
  ExpressionEvaluator extents;
  EXPECT_EQ(persistentBufferBytes(fusion, extents), 2 * 768 * 4);
}

TEST(PersistentBufferTest, NoneWithoutRereads) {
  Fusion fusion;
  TensorView* x = input(fusion, DataType::Float32, {-1, -1});
  TensorView* s = sum(exp(x), {1});
  fusion.addOutput(mul(s, 2.0));
  EXPECT_TRUE(persistentBuffers(fusion).empty());
  ExpressionEvaluator extents;
  EXPECT_EQ(persistentBufferBytes(fusion, extents), 0);
}

TEST(DeviceInfoTest, RealDeviceOrTheH100StandIn) {
  const driver::DeviceProperties properties = schedulingDeviceProperties();
  if (!hasSchedulingDevice()) {
    const driver::DeviceProperties h100 = driver::h100Properties();
    EXPECT_EQ(properties.name, h100.name);
    EXPECT_EQ(properties.sm_count, h100.sm_count);
    EXPECT_EQ(properties.arch, h100.arch);
  } else {
    EXPECT_GT(properties.sm_count, 0);
  }
  EXPECT_EQ(properties.warp_size, 32);
  EXPECT_GT(properties.max_threads_per_block, 0);
  EXPECT_EQ(schedulingDeviceProperties(7).ordinal, 7);
}

}  // namespace
}  // namespace braze
