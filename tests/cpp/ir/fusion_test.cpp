// Fusion as a container: statement ownership and numbering, definitions and uses, inputs and
// outputs, topological order. Exprs are created directly so these tests depend on the IR only.

#include "braze/ir/fusion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace braze {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TensorView* makeUnary(Fusion& fusion, OpKind op, TensorView* x) {
  std::vector<IterDomain*> domain;
  for (IterDomain* id : x->logical()) {
    domain.push_back(fusion.create<IterDomain>(id->extent(), id->iterType()));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), domain);
  fusion.create<Expr>(op, std::vector<Val*>{x}, std::vector<Val*>{y});
  return y;
}

TensorView* makeBinary(Fusion& fusion, OpKind op, TensorView* a, TensorView* b) {
  std::vector<IterDomain*> domain;
  for (IterDomain* id : a->logical()) {
    domain.push_back(fusion.create<IterDomain>(id->extent(), id->iterType()));
  }
  auto* y = fusion.create<TensorView>(a->dtype(), domain);
  fusion.create<Expr>(op, std::vector<Val*>{a, b}, std::vector<Val*>{y});
  return y;
}

std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "<no error>";
}

TEST(FusionTest, StatementsAreNumberedDenselyInCreationOrder) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeUnary(fusion, OpKind::Exp, x);
  for (int64_t id = 0; id < fusion.numStatements(); ++id) {
    EXPECT_EQ(fusion.statement(id)->id(), id);
  }
  EXPECT_EQ(x->name(), "T0");
  EXPECT_EQ(y->name(), "T1");
  EXPECT_EQ(x->axis(0)->extent()->name(), "s0");
  EXPECT_EQ(x->axis(1)->extent()->name(), "s1");
  EXPECT_EQ(fusion.allTensors().size(), 2u);
}

TEST(FusionTest, ExprLinksDefinitionsAndUses) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = makeBinary(fusion, OpKind::Mul, x, x);
  ASSERT_NE(y->definition(), nullptr);
  EXPECT_EQ(y->definition()->op(), OpKind::Mul);
  EXPECT_THAT(y->definition()->inputs(), ElementsAre(x, x));
  // x * x is one use, not two.
  EXPECT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(x->definition(), nullptr);
}

TEST(FusionTest, ExprsAreTopologicalAndSkipDeadCode) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* a = makeUnary(fusion, OpKind::Exp, x);
  TensorView* dead = makeUnary(fusion, OpKind::Log, x);
  TensorView* b = makeUnary(fusion, OpKind::Neg, a);
  TensorView* c = makeBinary(fusion, OpKind::Add, b, a);
  fusion.addOutput(c);
  std::vector<Expr*> exprs = fusion.exprs();
  ASSERT_EQ(exprs.size(), 3u);
  EXPECT_EQ(exprs[0], a->definition());
  EXPECT_EQ(exprs[1], b->definition());
  EXPECT_EQ(exprs[2], c->definition());
  EXPECT_EQ(std::count(exprs.begin(), exprs.end(), dead->definition()), 0);
}

TEST(FusionTest, LongChainsDoNotOverflowTheStack) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = x;
  for (int i = 0; i < 20000; ++i)
    y = makeUnary(fusion, OpKind::Neg, y);
  fusion.addOutput(y);
  EXPECT_EQ(fusion.exprs().size(), 20000u);
}

TEST(FusionTest, InputSpecDescribesSizesAndLayout) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::BFloat16,
                                           .sizes = {-1, 1, 8},
                                           .contiguity = {false, std::nullopt, true},
                                           .allocation_order = {2, 1, 0}});
  EXPECT_EQ(x->dtype(), DataType::BFloat16);
  EXPECT_TRUE(x->axis(0)->isIteration());
  EXPECT_FALSE(x->axis(0)->extent()->isConstant());
  EXPECT_TRUE(x->axis(1)->isBroadcast());
  EXPECT_TRUE(x->axis(2)->extent()->isConstantEqualTo(8));
  EXPECT_THAT(x->allocationOrder(), ElementsAre(2, 1, 0));
  EXPECT_EQ(x->contiguity()[0], std::optional<bool>(false));
  EXPECT_TRUE(fusion.isInput(x));
  EXPECT_EQ(fusion.inputIndex(x), 0);
  EXPECT_EQ(x->loop(), x->logical());
}

TEST(FusionTest, LoopDomainIsSeparateFromLogical) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  std::vector<IterDomain*> logical = x->logical();
  x->setLoop({logical[1], logical[0]});
  EXPECT_EQ(x->logical(), logical);
  EXPECT_EQ(x->loop()[0], logical[1]);
}

TEST(FusionTest, BadInputSpecsAreRefused) {
  Fusion fusion;
  EXPECT_THAT(errorOf([&] {
                makeInputTensor(fusion, {.sizes = {2, -3}});
              }),
              HasSubstr("size -3 at dim 1 is invalid"));
  EXPECT_THAT(errorOf([&] {
                makeInputTensor(fusion, {.sizes = {2, 3}, .allocation_order = {0, 0}});
              }),
              HasSubstr("must be a permutation"));
  EXPECT_THAT(errorOf([&] {
                makeInputTensor(fusion, {.sizes = {2, 1}, .contiguity = {true, true}});
              }),
              HasSubstr("contiguity of dim 1 must be None exactly when the dim is a broadcast"));
  EXPECT_THAT(errorOf([&] {
                makeInputTensor(fusion, {.sizes = {2}, .contiguity = {true, true}});
              }),
              HasSubstr("contiguity has 2 entries but the tensor has rank 1"));
}

TEST(FusionTest, BadInputsAndOutputsAreRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = makeUnary(fusion, OpKind::Exp, x);
  EXPECT_THAT(errorOf([&] { fusion.addInput(y); }),
              HasSubstr("addInput: T1 is computed by exp inside the fusion"));
  EXPECT_THAT(errorOf([&] { fusion.addInput(x); }), HasSubstr("T0 is already an input"));
  EXPECT_THAT(errorOf([&] { fusion.addInput(fusion.constantIndex(3)); }),
              HasSubstr("3 is a constant"));
  Fusion other;
  TensorView* z = makeSymbolicTensor(other, 1);
  EXPECT_THAT(errorOf([&] { fusion.addOutput(z); }), HasSubstr("belongs to another fusion"));
  EXPECT_THAT(errorOf([&] { fusion.addOutput(x->axis(0)); }),
              HasSubstr("an IterDomain cannot be an output"));
}

TEST(FusionTest, ScalarInputsAndConstants) {
  Fusion fusion;
  Scalar* alpha = makeInputScalar(fusion, DataType::Float64);
  Scalar* three = fusion.constant(int64_t{3}, DataType::Float32);
  EXPECT_FALSE(alpha->isConstant());
  EXPECT_EQ(alpha->name(), "s0");
  ASSERT_TRUE(three->isConstant());
  // A constant is stored in its dtype's category: an int given for a float is a double.
  EXPECT_TRUE(std::holds_alternative<double>(*three->value()));
  EXPECT_EQ(three->name(), "3.0");
  EXPECT_TRUE(three->isConstantEqualTo(3));
  EXPECT_EQ(fusion.constant(true, DataType::Int32)->constantInt(), 1);
}

TEST(FusionTest, AttributesAreTypedAndNamed) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  auto* y = fusion.create<TensorView>(
      DataType::Float32, std::vector<IterDomain*>{
                             fusion.create<IterDomain>(x->axis(0)->extent(), IterType::Iteration),
                             fusion.create<IterDomain>(x->axis(1)->extent(), IterType::Reduction)});
  auto* expr = fusion.create<Expr>(OpKind::Sum, std::vector<Val*>{x}, std::vector<Val*>{y},
                                   std::vector<Attribute>{{"axes", std::vector<int64_t>{1}}});
  EXPECT_TRUE(expr->hasAttribute("axes"));
  EXPECT_THAT(expr->attribute<std::vector<int64_t>>("axes"), ElementsAre(1));
  EXPECT_FALSE(expr->hasAttribute("dim"));
  EXPECT_THAT(errorOf([&] { expr->attribute<int64_t>("axes"); }), HasSubstr("please report"));
  EXPECT_EQ(y->rank(), 1);
  EXPECT_EQ(y->nDims(), 2);
  EXPECT_TRUE(y->hasReduction());
}

}  // namespace
}  // namespace braze
