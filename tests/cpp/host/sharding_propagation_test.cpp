// propagateShardings: tensors a user left unplaced take the sharding their neighbours imply,
// forward through elementwise ops, broadcasts, reductions and matmuls, then backward from the
// outputs; what the user placed stays as it is.

#include "braze/host/sharding_propagation.h"

#include <gtest/gtest.h>

#include "braze/ir/sharding.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/sharded_cases.h"

namespace braze {
namespace {

std::vector<ShardedAxis> axesOf(const TensorView* tv) {
  EXPECT_TRUE(tv->sharding().has_value()) << tv->name() << " has no sharding";
  return tv->sharding() ? tv->sharding()->axes : std::vector<ShardedAxis>{};
}

TEST(ShardingPropagationTest, ElementwiseOpsCarryTheShardedAxisForward) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = add(y, y);
  TensorView* rows = sum(z, {1});  // keeps the sharded rows
  TensorView* cols = sum(z, {0});  // reduces over them: a partial sum, not sharded
  fusion->addOutput(rows);
  fusion->addOutput(cols);
  const DeviceMesh mesh = DeviceMesh::ofSize(4);
  test::shardAxis(x, mesh, 0);
  takeShardings(*fusion);
  EXPECT_EQ(propagateShardings(*fusion), 4);
  for (const TensorView* tv : {y, z, rows}) {
    EXPECT_EQ(tv->sharding()->mesh, mesh) << tv->name();
    EXPECT_EQ(axesOf(tv), (std::vector<ShardedAxis>{{0, 0}})) << tv->name();
  }
  EXPECT_EQ(cols->sharding()->mesh, mesh);
  EXPECT_TRUE(cols->sharding()->isReplicated()) << cols->sharding()->toString();
}

TEST(ShardingPropagationTest, OutputsPlaceTheInputsBackward) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* w = makeSymbolicTensor(*fusion, 1);
  TensorView* y = mul(x, broadcast(w, {true, false}));
  fusion->addOutput(y);
  test::shardAxis(y, DeviceMesh::ofSize(2), 1);  // columns sharded
  takeShardings(*fusion);
  propagateShardings(*fusion);
  EXPECT_EQ(axesOf(x), (std::vector<ShardedAxis>{{1, 0}}));
  // The weight reaches y through its broadcast: its one dim is the sharded column dim.
  EXPECT_EQ(axesOf(w), (std::vector<ShardedAxis>{{0, 0}}));
}

TEST(ShardingPropagationTest, AColumnShardedWeightShardsTheMatmulsN) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* c = matmul(a, b);
  TensorView* d = relu(c);
  fusion->addOutput(d);
  const DeviceMesh mesh = DeviceMesh::ofSize(8);
  a->setDeviceMesh(mesh);       // replicated activations [M, K]
  test::shardAxis(b, mesh, 1);  // the weight [K, N], N split over 8 devices
  takeShardings(*fusion);
  EXPECT_EQ(propagateShardings(*fusion), 2);
  EXPECT_EQ(axesOf(c), (std::vector<ShardedAxis>{{1, 0}}));
  EXPECT_EQ(axesOf(d), (std::vector<ShardedAxis>{{1, 0}}));
  EXPECT_TRUE(a->sharding()->isReplicated());
}

TEST(ShardingPropagationTest, ARowShardedActivationShardsTheMatmulsMAndNotItsK) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* c = matmul(a, b);
  fusion->addOutput(c);
  test::shardAxis(c, DeviceMesh::ofSize(4), 0);  // the output's M
  takeShardings(*fusion);
  propagateShardings(*fusion);
  EXPECT_EQ(axesOf(a), (std::vector<ShardedAxis>{{0, 0}}));
  EXPECT_TRUE(b->sharding()->isReplicated()) << "M does not reach the weight [K, N]";
}

TEST(ShardingPropagationTest, WhatTheUserPlacedIsKept) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  fusion->addOutput(y);
  test::shardAxis(x, DeviceMesh::ofSize(2), 0);
  y->setDeviceMesh(DeviceMesh::ofSize(2));  // replicated: an allgather the runtime inserts
  takeShardings(*fusion);
  EXPECT_EQ(propagateShardings(*fusion), 0);
  EXPECT_TRUE(y->sharding()->isReplicated());
}

}  // namespace
}  // namespace braze
