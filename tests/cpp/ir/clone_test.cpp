// Fusion::clone: a deep copy with the same ids, names, inputs, outputs and schedule, and an
// old-to-new map; the copy is independent of the original.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze {
namespace {

std::unique_ptr<Fusion> makeLayerNormLike() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = DataType::Float16, .sizes = {-1, 64}});
  Scalar* eps = makeInputScalar(*fusion, DataType::Float64);
  TensorView* xf = cast(x, DataType::Float32);
  VarMeanResult stats = var_mean(xf, {1}, /*correction=*/0, /*keepdim=*/true);
  TensorView* y = mul(sub(xf, stats.mean), rsqrt(add(stats.var, eps)));
  fusion->addOutput(cast(y, DataType::Float16));
  return fusion;
}

TEST(CloneTest, CopyPrintsAndHashesTheSame) {
  std::unique_ptr<Fusion> original = makeLayerNormLike();
  std::unique_ptr<Fusion> copy = original->clone();
  EXPECT_EQ(printMath(*original), printMath(*copy));
  EXPECT_TRUE(structurallyEqual(*original, *copy));
  EXPECT_EQ(structuralHash(*original), structuralHash(*copy));
  EXPECT_EQ(copy->numStatements(), original->numStatements());
}

TEST(CloneTest, MapPointsIntoTheCopy) {
  std::unique_ptr<Fusion> original = makeLayerNormLike();
  CloneMap map;
  std::unique_ptr<Fusion> copy = original->clone(&map);
  for (int64_t id = 0; id < original->numStatements(); ++id) {
    Statement* old = original->statement(id);
    Statement* twin = map[old];
    EXPECT_EQ(&twin->fusion(), copy.get());
    EXPECT_EQ(twin->id(), id);
    EXPECT_EQ(twin->statementKind(), old->statementKind());
  }
  auto* old_input = original->inputs()[0]->as<TensorView>();
  EXPECT_EQ(map[old_input], copy->inputs()[0]);
  EXPECT_EQ(map[old_input->axis(0)], copy->inputs()[0]->as<TensorView>()->axis(0));
}

TEST(CloneTest, CopyIsIndependentAndKeepsSchedule) {
  std::unique_ptr<Fusion> original = makeLayerNormLike();
  auto* x = original->inputs()[0]->as<TensorView>();
  x->setLoop({x->axis(1), x->axis(0)});
  x->axis(1)->parallelize(ParallelType::TIDx);
  x->setMemoryType(MemoryType::Shared);
  CloneMap map;
  std::unique_ptr<Fusion> copy = original->clone(&map);
  TensorView* x2 = map[x];
  EXPECT_EQ(x2->loop()[0], x2->axis(1));
  EXPECT_EQ(x2->axis(1)->parallelType(), ParallelType::TIDx);
  EXPECT_EQ(x2->memoryType(), MemoryType::Shared);

  // Changing the copy leaves the original alone.
  copy->addOutput(exp(x2));
  EXPECT_EQ(original->outputs().size(), 1u);
  EXPECT_FALSE(structurallyEqual(*original, *copy));
}

}  // namespace
}  // namespace braze
