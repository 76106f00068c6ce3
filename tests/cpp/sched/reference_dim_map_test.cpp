// mapDimsToReference: dims carried through elementwise broadcasting, broadcasts, permutes,
// reductions (reduced dims kept) and back from consumers to producers.

#include "braze/sched/reference_dim_map.h"

#include <gtest/gtest.h>

#include "braze/ir/tensor_view.h"
#include "sched/fusion_fixtures.h"

namespace braze {
namespace {

using Dims = std::vector<int64_t>;

TEST(ReferenceDimMap, SoftmaxMapsEveryTensorToTheRowReduction) {
  const test::SoftmaxFusion s = test::makeSoftmax();
  const ReferenceDimMap map = mapDimsToReference(*s.fusion, s.max);
  EXPECT_EQ(map.at(s.max), (Dims{0, 1}));
  EXPECT_EQ(map.at(s.x), (Dims{0, 1}));
  // The broadcast dim of max_b meets the reduced dim through shifted = x - max_b.
  EXPECT_EQ(map.at(s.max_b), (Dims{0, 1}));
  EXPECT_EQ(map.at(s.sum), (Dims{0, 1}));
  EXPECT_EQ(map.at(s.y), (Dims{0, 1}));
}

TEST(ReferenceDimMap, PermuteAndUnpairedBroadcastDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* t = permute(x, {1, 0});                  // t[j, i] = x[i, j]
  TensorView* b = broadcast(t, {false, false, true});  // b[j, i, new]
  fusion.addOutput(neg(b));
  const ReferenceDimMap map = mapDimsToReference(fusion, t);
  EXPECT_EQ(map.at(x), (Dims{1, 0}));
  EXPECT_EQ(map.at(t), (Dims{0, 1}));
  // The new dim pairs with nothing of t.
  EXPECT_EQ(map.at(b), (Dims{0, 1, -1}));
}

TEST(ReferenceDimMap, LogicalPositionCountsReducedDims) {
  const test::SoftmaxFusion s = test::makeSoftmax();
  EXPECT_EQ(logicalPosition(s.sum, s.sum->logical()[1]), 1);
  EXPECT_EQ(logicalPosition(s.sum, s.x->logical()[1]), -1);
}

TEST(ReferenceDimMap, NamesAnOutputDimNoReferenceDimWalks) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* row_sums = sum(x, {1});  // [i, r]
  TensorView* y = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(row_sums);
  fusion.addOutput(neg(y));  // its only dim meets nothing of row_sums
  const ReferenceDimMap map = mapDimsToReference(fusion, row_sums);
  EXPECT_EQ(unmappedOutputDimProblem(fusion, map, row_sums),
            "dim 0 of output " + fusion.outputs()[1]->name() +
                " does not map to a dim of the reference output " + row_sums->name());
  const test::SoftmaxFusion s = test::makeSoftmax();
  EXPECT_EQ(unmappedOutputDimProblem(*s.fusion, mapDimsToReference(*s.fusion, s.y), s.y),
            std::nullopt);
}

}  // namespace
}  // namespace braze
