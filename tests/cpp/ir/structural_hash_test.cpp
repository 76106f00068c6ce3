// Structural hash and equality: the key of definition caches. Same construction => equal;
// any change to dtype, shape, layout, constant, op, attribute or wiring => different.

#include "braze/ir/structural_hash.h"

#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"

namespace braze {
namespace {

struct Variant {
  DataType dtype = DataType::Float32;
  std::vector<int64_t> sizes = {-1, -1};
  double constant = 2.0;
  std::vector<int64_t> axes = {1};
  bool keepdim = false;
  bool swap_operands = false;
  bool use_sub = false;
  std::vector<int64_t> allocation_order = {};
};

std::unique_ptr<Fusion> build(const Variant& v) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(
      *fusion, {.dtype = v.dtype, .sizes = v.sizes, .allocation_order = v.allocation_order});
  TensorView* y = makeInputTensor(*fusion, {.dtype = v.dtype, .sizes = v.sizes});
  TensorView* scaled = mul(x, v.constant);
  TensorView* combined = v.use_sub ? (v.swap_operands ? sub(y, scaled) : sub(scaled, y))
                                   : (v.swap_operands ? add(y, scaled) : add(scaled, y));
  fusion->addOutput(sum(combined, v.axes, v.keepdim));
  return fusion;
}

TEST(StructuralHashTest, SameConstructionIsEqual) {
  std::unique_ptr<Fusion> a = build({});
  std::unique_ptr<Fusion> b = build({});
  EXPECT_TRUE(structurallyEqual(*a, *b));
  EXPECT_EQ(structuralHash(*a), structuralHash(*b));
  EXPECT_EQ(canonicalForm(*a), canonicalForm(*b));
}

TEST(StructuralHashTest, DeadStatementsDoNotMatter) {
  std::unique_ptr<Fusion> a = build({});
  std::unique_ptr<Fusion> b = build({});
  exp(b->inputs()[0]->as<TensorView>());  // never reaches an output
  b->constantIndex(42);
  EXPECT_TRUE(structurallyEqual(*a, *b));
  EXPECT_EQ(structuralHash(*a), structuralHash(*b));
}

TEST(StructuralHashTest, ScheduleDoesNotMatter) {
  std::unique_ptr<Fusion> a = build({});
  std::unique_ptr<Fusion> b = build({});
  auto* x = b->inputs()[0]->as<TensorView>();
  x->setLoop({x->axis(1), x->axis(0)});
  x->axis(0)->parallelize(ParallelType::BIDx);
  EXPECT_TRUE(structurallyEqual(*a, *b));
}

TEST(StructuralHashTest, EveryDifferenceIsSeen) {
  const std::unique_ptr<Fusion> base = build({});
  const std::vector<std::pair<std::string, Variant>> variants = {
      {"dtype", {.dtype = DataType::BFloat16}},
      {"fixed size", {.sizes = {-1, 8}}},
      {"broadcast dim", {.sizes = {-1, 1}}},
      {"rank", {.sizes = {-1, -1, -1}}},
      {"constant", {.constant = 3.0}},
      {"axes", {.axes = {0}}},
      {"keepdim", {.keepdim = true}},
      {"operand order", {.swap_operands = true}},
      {"op", {.use_sub = true}},
      {"layout", {.allocation_order = {1, 0}}},
  };
  for (const auto& [what, variant] : variants) {
    std::unique_ptr<Fusion> other = build(variant);
    EXPECT_FALSE(structurallyEqual(*base, *other)) << what;
    EXPECT_NE(structuralHash(*base), structuralHash(*other)) << what;
  }
}

TEST(StructuralHashTest, NegativeZeroAndNanConstants) {
  auto build_with = [](double c) {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 1);
    fusion->addOutput(add(x, c));
    return fusion;
  };
  EXPECT_TRUE(structurallyEqual(*build_with(std::nan("")), *build_with(std::nan(""))));
  EXPECT_FALSE(structurallyEqual(*build_with(0.0), *build_with(-0.0)));
}

TEST(StructuralHashTest, SharedExtentsAreDistinguishedFromIndependentOnes) {
  // x: [s0], y: [s1] vs x: [s0], y shares x's extent: different definitions (the second
  // promises equal sizes).
  auto a = std::make_unique<Fusion>();
  {
    TensorView* x = makeSymbolicTensor(*a, 1);
    TensorView* y = makeSymbolicTensor(*a, 1);
    a->addOutput(add(x, y));
  }
  auto b = std::make_unique<Fusion>();
  {
    TensorView* x = makeSymbolicTensor(*b, 1);
    auto* id = b->create<IterDomain>(x->axis(0)->extent(), IterType::Iteration);
    auto* y = b->create<TensorView>(DataType::Float32, std::vector<IterDomain*>{id});
    b->addInput(y);
    b->addOutput(add(x, y));
  }
  EXPECT_FALSE(structurallyEqual(*a, *b));
}

}  // namespace
}  // namespace braze
