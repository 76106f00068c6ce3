// Fusion::clone: a deep copy with the same ids, names, inputs, outputs and schedule, and an
// old-to-new map; the copy is independent of the original. Fusion::cloneSubset: chosen
// statements only, some replaced by stand-ins.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/error_matchers.h"

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

// The statements of `tv`: its IterDomains and their extents.
std::vector<const Statement*> withDomain(const TensorView* tv) {
  std::vector<const Statement*> statements = {tv};
  for (const IterDomain* id : tv->logical()) {
    statements.push_back(id);
    statements.push_back(id->extent());
  }
  return statements;
}

TEST(CloneSubsetTest, CopiesOnlyTheChosenStatementsInIdOrder) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  TensorView* z = neg(y);
  fusion.addOutput(z);
  std::vector<const Statement*> chosen = withDomain(x);
  for (const Statement* s : withDomain(y)) chosen.push_back(s);
  chosen.push_back(y->definition());
  chosen.push_back(y->definition());  // duplicates are ignored
  CloneMap map;
  const std::unique_ptr<Fusion> copy = fusion.cloneSubset(chosen, {}, &map);
  copy->addInput(map[x]);
  copy->addOutput(map[y]);
  EXPECT_EQ(printMath(*copy),
            "fusion(T0: float32[i0{s0}]) -> (T1)\n"
            "  T1: float32[i1{s0}] = exp(T0)\n");
  EXPECT_EQ(copy->numStatements(), 6);  // x, y, their IterDomains, s0, the exp
  EXPECT_TRUE(map.contains(x));
  EXPECT_FALSE(map.contains(z));
  EXPECT_EQ(map[y]->definition(), map[y->definition()]);
  EXPECT_EQ(map[x]->uses(), std::vector<Expr*>{map[y->definition()]});
}

TEST(CloneSubsetTest, AStandInReplacesAStatement) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* total = sum(x, {1});
  TensorView* z = neg(total);
  fusion.addOutput(z);
  // neg alone, reading a new rank-1 input where it read the sum.
  std::vector<const Statement*> chosen = withDomain(z);
  chosen.push_back(z->definition());
  chosen.push_back(total);
  CloneMap map;
  const std::unique_ptr<Fusion> copy = fusion.cloneSubset(
      chosen,
      [&](const Statement& old, Fusion& target, const CloneMap& m) -> Statement* {
        if (&old != total) return nullptr;
        auto* id = target.create<IterDomain>(m[total->axis(0)->extent()], IterType::Iteration);
        return target.create<TensorView>(DataType::Float32, std::vector<IterDomain*>{id});
      },
      &map);
  copy->addInput(map[total]);
  copy->addOutput(map[z]);
  EXPECT_EQ(printMath(*copy),
            "fusion(T0: float32[i0{s0}]) -> (T1)\n"
            "  T1: float32[i1{s0}] = neg(T0)\n");
}

TEST(CloneSubsetTest, NamesAStatementThatWasNotChosen) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = exp(x);
  fusion.addOutput(y);
  const std::vector<const Statement*> chosen = {y->definition(), y};
  EXPECT_TRUE(test::throwsError([&] { fusion.cloneSubset(chosen); },
                                {"is referenced but was not cloned", "please report"}));
}

}  // namespace
}  // namespace braze
