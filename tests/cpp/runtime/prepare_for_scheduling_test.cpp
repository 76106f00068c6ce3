// prepareForScheduling: an nvFuser-style layer norm (var_mean's Welford, weights expanded by
// broadcast_in_dim) comes out in the form inner_outer takes, the form the executor cache
// schedules; prepareCopyForScheduling leaves the definition alone.

#include "braze/runtime/prepare_for_scheduling.h"

#include <gtest/gtest.h>

#include "braze/ir/structural_hash.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/shipped_registry.h"

namespace braze {
namespace {

int64_t opsIn(const Fusion& fusion, OpKind op) {
  int64_t count = 0;
  for (const Expr* expr : fusion.exprs()) count += expr->op() == op ? 1 : 0;
  return count;
}

// y = (x - mean) * rsqrt(var + eps) * broadcast_in_dim(w, x.shape(), [1]), as nvFuser's
// Python definitions write a layer norm.
std::unique_ptr<Fusion> nvfuserStyleLayerNorm() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* w = makeSymbolicTensor(*fusion, 1);
  const VarMeanResult stats = var_mean(x, {1}, /*correction=*/0, /*keepdim=*/true);
  TensorView* y = mul(sub(x, stats.mean), rsqrt(add(stats.var, 1e-5)));
  const std::vector<Operand> shape{x->axis(0)->extent(), x->axis(1)->extent()};
  fusion->addOutput(mul(y, broadcast_in_dim(w, shape, {1})));
  return fusion;
}

TEST(PrepareForSchedulingTest, ALayerNormComesOutInTheFormInnerOuterTakes) {
  const std::unique_ptr<Fusion> defined = nvfuserStyleLayerNorm();
  const SchedulerRegistry& registry = test::shippedSchedulers();
  const SchedulerEntry& inner_outer = registry.find("inner_outer");
  // The reason fd.sched has to ask about the prepared fusion: as defined, it is refused.
  ASSERT_TRUE(registry.checkCompileTime(inner_outer, *defined).has_value());

  const std::unique_ptr<Fusion> prepared = prepareCopyForScheduling(*defined);
  EXPECT_EQ(registry.checkCompileTime(inner_outer, *prepared), std::nullopt);
  EXPECT_EQ(opsIn(*prepared, OpKind::Welford), 0);
  // The copy changed, the definition did not.
  EXPECT_EQ(opsIn(*defined, OpKind::Welford), 1);
  EXPECT_EQ(opsIn(*defined, OpKind::Expand), 1);
}

TEST(PrepareForSchedulingTest, IsTheFormTheExecutorCacheSchedules) {
  const std::unique_ptr<Fusion> defined = nvfuserStyleLayerNorm();
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  const FusionExecutorCache cache(*defined, options);
  EXPECT_TRUE(structurallyEqual(cache.fusion(), *prepareCopyForScheduling(*defined)));
}

TEST(PrepareForSchedulingTest, APreparedFusionHasNothingLeftToRewrite) {
  std::unique_ptr<Fusion> fusion = nvfuserStyleLayerNorm();
  EXPECT_GT(prepareForScheduling(*fusion, {}), 0);
  EXPECT_EQ(prepareForScheduling(*fusion, {}), 0);
}

// Sharded definitions need the multi-device runtime: the executor cache says so before
// building anything.
TEST(PrepareForSchedulingTest, AShardedFusionIsRefusedByTheSingleDeviceRuntime) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  fusion->addOutput(y);
  y->setDeviceMesh(DeviceMesh::ofSize(2));
  y->split(1, 2, /*inner_split=*/false);
  y->parallelize(1, ParallelType::DIDx);
  EXPECT_TRUE(test::throwsError(
      [&] {
        ExecutorCacheOptions options;
        options.registry = &test::shippedSchedulers();
        FusionExecutorCache cache(std::move(fusion), options);
        cache.run({test::RandomTensors(3).uniform(DataType::Float32, {4, 8})});
      },
      {"places T1 on mesh{0, 1} axis 1 over DIDx", "runs on MultiDeviceExecutor",
       "leave the device meshes out"}));
}

}  // namespace
}  // namespace braze
