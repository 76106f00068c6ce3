// Device meshes and shardings on a definition: DeviceMesh's layout and refusals, what
// takeShardings records from DIDx / DIDy (the outer axis of a split by the mesh dim's size), how
// the attribute travels through clone, the printer and the canonical form, and every refusal.

#include "braze/ir/sharding.h"
#include "braze/ir/stream_axes.h"

#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

TEST(DeviceMeshTest, OneAndTwoDimensionalMeshes) {
  const DeviceMesh line = DeviceMesh::ofSize(4);
  EXPECT_EQ(line.toString(), "mesh{0, 1, 2, 3}");
  EXPECT_EQ(line.numDims(), 1);
  EXPECT_EQ(line.size(0), 4);
  EXPECT_EQ(line.coordinatesOf(2), std::vector<int64_t>{2});
  const DeviceMesh grid({4, 5, 6, 7, 8, 9}, {3, 2});
  EXPECT_EQ(grid.toString(), "mesh[3, 2]{4, 5, 6, 7, 8, 9}");
  EXPECT_EQ(grid.size(), 6);
  EXPECT_EQ(grid.size(0), 3);
  EXPECT_EQ(grid.size(1), 2);
  EXPECT_EQ(grid.coordinatesOf(7), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(grid.coordinatesOf(8), (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(grid.has(9));
  EXPECT_FALSE(grid.has(0));
  EXPECT_NE(grid, DeviceMesh({4, 5, 6, 7, 8, 9}, {2, 3}));
}

TEST(DeviceMeshTest, BadMeshesAreRefused) {
  EXPECT_TRUE(throwsError([] { DeviceMesh(std::vector<int64_t>{}); }, {"at least one device"}));
  EXPECT_TRUE(throwsError([] { DeviceMesh({0, 1, 1}); }, {"device 1 appears twice", "{0, 1, 1}"}));
  EXPECT_TRUE(throwsError([] { DeviceMesh({0, -2}); }, {"device 1 of {0, -2} is -2"}));
  EXPECT_TRUE(throwsError(
      [] {
        DeviceMesh({0, 1, 2}, {2, 2});
      },
      {"shape [2, 2] does not hold the 3 devices", "product is 3"}));
  EXPECT_TRUE(throwsError([] { DeviceMesh({0, 1}, {1, 1, 2}); }, {"one or two dims, not 3"}));
  EXPECT_TRUE(throwsError([] { DeviceMesh::ofSize(2).coordinatesOf(5); },
                          {"device 5 is not in mesh{0, 1}"}));
  EXPECT_TRUE(throwsError([] { DeviceMesh::ofSize(2).size(1); }, {"there is no mesh dim 1"}));
}

struct Pointwise {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = mul(y, 2.0);
  Pointwise() { fusion->addOutput(z); }
};

TEST(ShardingTest, TheOuterAxisOfASplitByTheMeshSizeIsSharded) {
  Pointwise p;
  const size_t unsharded = structuralHash(*p.fusion);
  p.x->setDeviceMesh(DeviceMesh::ofSize(4));  // replicated
  p.y->setDeviceMesh(DeviceMesh::ofSize(4));
  p.y->split(1, 4, /*inner_split=*/false);
  p.y->parallelize(1, ParallelType::DIDx);
  const std::vector<TensorView*> meshed = takeShardings(*p.fusion);
  EXPECT_EQ(meshed, (std::vector<TensorView*>{p.x, p.y}));
  ASSERT_TRUE(p.y->sharding().has_value());
  EXPECT_EQ(p.y->sharding()->axes, (std::vector<ShardedAxis>{{1, 0}}));
  EXPECT_EQ(p.y->sharding()->toString(), "mesh{0, 1, 2, 3} axis 1 over DIDx");
  EXPECT_TRUE(p.x->sharding()->isReplicated());
  EXPECT_EQ(p.x->sharding()->toString(), "mesh{0, 1, 2, 3} replicated");
  EXPECT_FALSE(p.z->sharding().has_value());
  // Unscheduled again: the loop domain is the logical one, nothing parallelized.
  EXPECT_EQ(p.y->loop(), p.y->logical());
  for (const IterDomain* id : p.y->loop()) EXPECT_EQ(id->parallelType(), ParallelType::Serial);
  EXPECT_NE(printMath(*p.fusion).find("on mesh{0, 1, 2, 3} axis 1 over DIDx"), std::string::npos)
      << printMath(*p.fusion);
  const size_t sharded = structuralHash(*p.fusion);
  EXPECT_NE(sharded, unsharded);
  // A clone keeps it; another mesh is another definition.
  std::unique_ptr<Fusion> copy = p.fusion->clone();
  EXPECT_TRUE(structurallyEqual(*copy, *p.fusion));
  p.y->setSharding(Sharding{DeviceMesh({4, 5, 6, 7}), {{1, 0}}, {}});
  EXPECT_NE(structuralHash(*p.fusion), sharded);
  EXPECT_FALSE(structurallyEqual(*copy, *p.fusion));
}

TEST(ShardingTest, TwoAxesOverATwoDimensionalMesh) {
  Pointwise p;
  const DeviceMesh grid({0, 1, 2, 3, 4, 5}, {3, 2});
  p.z->setDeviceMesh(grid);
  p.z->split(1, 2, /*inner_split=*/false);  // DIDx: the last mesh dim, 2 devices
  p.z->parallelize(1, ParallelType::DIDx);
  p.z->split(0, 3, /*inner_split=*/false);  // DIDy: the first, 3 devices
  p.z->parallelize(0, ParallelType::DIDy);
  takeShardings(*p.fusion);
  EXPECT_EQ(p.z->sharding()->axes, (std::vector<ShardedAxis>{{0, 0}, {1, 1}}));
  EXPECT_EQ(p.z->sharding()->axisOver(0), 0);
  EXPECT_EQ(p.z->sharding()->axisOver(1), 1);
  EXPECT_EQ(p.z->sharding()->toString(),
            "mesh[3, 2]{0, 1, 2, 3, 4, 5} axis 0 over DIDy, axis 1 over DIDx");
}

// One device along a mesh dim holds the whole axis, split or not: the tensor is not sharded
// there, so no step communicates over that dim (a stage of one device in a pipeline).
TEST(ShardingTest, AMeshDimOfOneDeviceLeavesTheAxisWhole) {
  {
    Pointwise p;
    p.z->setDeviceMesh(DeviceMesh({3}));
    p.z->parallelize(0, ParallelType::DIDx);
    takeShardings(*p.fusion);
    EXPECT_TRUE(p.z->sharding()->axes.empty());
    EXPECT_EQ(p.z->sharding()->mesh, DeviceMesh({3}));
  }
  {
    Pointwise p;
    p.z->setDeviceMesh(DeviceMesh({3}));
    p.z->split(1, 1, /*inner_split=*/false);
    p.z->parallelize(1, ParallelType::DIDx);
    takeShardings(*p.fusion);
    EXPECT_TRUE(p.z->sharding()->axes.empty());
  }
}

TEST(ShardingTest, ShardingsThatCannotBeTakenAreRefused) {
  {
    Pointwise p;
    p.y->split(0, 2, false);
    p.y->parallelize(0, ParallelType::DIDx);
    EXPECT_TRUE(throwsError([&] { takeShardings(*p.fusion); },
                            {"T1 has a DIDx or DIDy axis but no device mesh", "setDeviceMesh"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(2));
    p.y->split(0, 2, false);
    p.y->parallelize(0, ParallelType::DIDy);
    EXPECT_TRUE(throwsError([&] { takeShardings(*p.fusion); },
                            {"T1 loop axis 0", "is DIDy", "has one dim", "use DIDx"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(4));
    p.y->split(0, 2, false);
    p.y->parallelize(0, ParallelType::DIDx);
    EXPECT_TRUE(throwsError(
        [&] { takeShardings(*p.fusion); },
        {"which has 4 devices along that dim", "split in 2 parts", "split in exactly 4 parts"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(4));
    p.y->split(0, 4);  // 4 elements per part, not 4 parts
    p.y->parallelize(0, ParallelType::DIDx);
    EXPECT_TRUE(throwsError([&] { takeShardings(*p.fusion); },
                            {"split by 4 elements per part", "tv->split(axis, 4, false)"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(4));
    p.y->split(0, 4, false);
    p.y->parallelize(1, ParallelType::DIDx);
    EXPECT_TRUE(throwsError([&] { takeShardings(*p.fusion); }, {"the inner axis of a split"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(4));
    p.y->parallelize(1, ParallelType::DIDx);
    EXPECT_TRUE(throwsError([&] { takeShardings(*p.fusion); },
                            {"without a split", "tv->split(1, 4, false)"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(2));
    p.y->split(1, 2, false);
    p.y->parallelize(1, ParallelType::DIDx);
    p.y->parallelize(0, ParallelType::Stream);
    // Allowed on another axis: the sharding is taken, the stream axis left for takeStreamAxes.
    EXPECT_EQ(requestedStreamAxis(*p.y)->axis, 0);  // read beside the device axis (repros)
    takeShardings(*p.fusion);
    EXPECT_EQ(p.y->sharding()->toString(), "mesh{0, 1} axis 1 over DIDx");
    EXPECT_EQ(p.y->loop()[0]->parallelType(), ParallelType::Stream);
    EXPECT_EQ(p.y->loop().size(), p.y->logical().size());
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(2));
    p.y->split(1, 2, false);
    p.y->parallelize(1, ParallelType::DIDx);
    p.y->parallelize(2, ParallelType::Stream);  // the inner axis of the sharded split
    EXPECT_TRUE(throwsError([&] { takeShardings(*p.fusion); },
                            {"has a stream axis", "beside its sharded axes"}));
  }
  {
    Pointwise p;
    p.y->setDeviceMesh(DeviceMesh::ofSize(2));
    p.y->split(1, 2, false);
    p.y->parallelize(1, ParallelType::DIDx);
    p.y->split(0, 8);
    EXPECT_TRUE(
        throwsError([&] { takeShardings(*p.fusion); }, {"other scheduling on its loop domain"}));
  }
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2);
    TensorView* s = sum(x, {1});
    fusion->addOutput(s);
    s->setDeviceMesh(DeviceMesh::ofSize(2));
    s->split(1, 2, false);
    s->parallelize(1, ParallelType::DIDx);
    EXPECT_TRUE(throwsError([&] { takeShardings(*fusion); },
                            {"logical axis 1 of T1 is the axis it reduces over", "allreduce"}));
  }
}

}  // namespace
}  // namespace braze
