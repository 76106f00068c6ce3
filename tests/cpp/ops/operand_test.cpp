// Operand: C++ constants and fusion Vals as op arguments, their dtypes for promotion, how they
// become Vals of a fusion, and how the fusion of an op is found.

#include "braze/ops/operand.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

TEST(OperandTest, ConstantsTakeTheirNaturalDtype) {
  EXPECT_EQ(Operand(true).dtype(), DataType::Bool);
  EXPECT_EQ(Operand(7).dtype(), DataType::Int64);
  EXPECT_EQ(Operand(int64_t{1} << 40).dtype(), DataType::Int64);
  EXPECT_EQ(Operand(0.25).dtype(), DataType::Float64);
  EXPECT_EQ(Operand(0.5f).dtype(), DataType::Float64);

  EXPECT_FALSE(Operand(7).isVal());
  EXPECT_FALSE(Operand(7).isTensor());
  EXPECT_EQ(Operand(7).val(), nullptr);
  EXPECT_TRUE(identical(Operand(-3).constant(), ScalarValue(int64_t{-3})));
  EXPECT_TRUE(identical(Operand(int64_t{1} << 40).constant(), ScalarValue(int64_t{1} << 40)));
  EXPECT_TRUE(identical(Operand(0.5f).constant(), ScalarValue(0.5)));
  EXPECT_TRUE(identical(Operand(false).constant(), ScalarValue(false)));
}

TEST(OperandTest, ConstantsAreLiteralsForPromotion) {
  const TypedOperand typed = Operand(2.5).typed();
  EXPECT_EQ(typed.dtype, DataType::Float64);
  EXPECT_EQ(typed.kind, OperandKind::Literal);
}

TEST(OperandTest, ValsKeepTheirDtypeAndKind) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  Scalar* s = makeInputScalar(fusion, DataType::Int32);

  const Operand tensor(x);
  EXPECT_TRUE(tensor.isVal());
  EXPECT_TRUE(tensor.isTensor());
  EXPECT_EQ(tensor.val(), x);
  EXPECT_EQ(tensor.dtype(), DataType::BFloat16);
  EXPECT_EQ(tensor.typed().kind, OperandKind::Tensor);
  EXPECT_EQ(tensor.typed().dtype, DataType::BFloat16);

  const Operand scalar(s);
  EXPECT_TRUE(scalar.isVal());
  EXPECT_FALSE(scalar.isTensor());
  EXPECT_EQ(scalar.dtype(), DataType::Int32);
  EXPECT_EQ(scalar.typed().kind, OperandKind::Scalar);
}

TEST(OperandTest, MaterializeCreatesConstantsInTheFusion) {
  Fusion fusion;
  const int64_t before = fusion.numStatements();
  Val* value = Operand(0.75).materialize(fusion, "add", "b");
  EXPECT_EQ(fusion.numStatements(), before + 1);
  ASSERT_TRUE(value->isA<Scalar>());
  auto* scalar = value->as<Scalar>();
  EXPECT_EQ(&scalar->fusion(), &fusion);
  EXPECT_EQ(scalar->dtype(), DataType::Float64);
  ASSERT_TRUE(scalar->isConstant());
  EXPECT_TRUE(identical(*scalar->value(), ScalarValue(0.75)));

  Val* integer = Operand(-12).materialize(fusion, "add", "b");
  EXPECT_EQ(integer->dtype(), DataType::Int64);
  EXPECT_EQ(integer->as<Scalar>()->constantInt(), -12);

  Val* flag = Operand(true).materialize(fusion, "where", "a");
  EXPECT_EQ(flag->dtype(), DataType::Bool);
  EXPECT_TRUE(flag->as<Scalar>()->isConstantEqualTo(1));
}

TEST(OperandTest, MaterializeReturnsValsOfTheSameFusion) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  const int64_t before = fusion.numStatements();
  EXPECT_EQ(Operand(x).materialize(fusion, "exp", "x"), x);
  EXPECT_EQ(fusion.numStatements(), before);
}

TEST(OperandTest, MaterializeRefusesAValOfAnotherFusion) {
  Fusion fusion;
  Fusion other;
  TensorView* y = makeSymbolicTensor(other, 1);
  EXPECT_TRUE(throwsError([&] { Operand(y).materialize(fusion, "mul", "b"); },
                          {"mul: b (T0) belongs to another fusion"}));
}

TEST(OperandTest, MaterializeRefusesAnIterDomain) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError([&] { Operand(x->axis(0)).materialize(fusion, "add", "a"); },
                          {"add: a is the IterDomain", "pass its extent()"}));
}

TEST(OperandTest, FusionOfIsThatOfTheFirstVal) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* s = makeInputScalar(fusion, DataType::Float32);
  EXPECT_EQ(&fusionOf("add", {x, 1.0}), &fusion);
  EXPECT_EQ(&fusionOf("add", {2, s}), &fusion);
  EXPECT_EQ(&fusionOf("where", {true, s, x}), &fusion);
}

TEST(OperandTest, FusionOfRefusesConstantsOnly) {
  EXPECT_TRUE(throwsError(
      [] {
        fusionOf("add", {1, 2.0});
      },
      {"add: every operand is a constant", "fusion.constant"}));
}

TEST(OperandTest, FusionOfRefusesValsOfDifferentFusions) {
  Fusion first;
  Fusion second;
  TensorView* x = makeSymbolicTensor(first, 1);
  makeSymbolicTensor(second, 1);
  TensorView* y = makeSymbolicTensor(second, 1);
  EXPECT_TRUE(throwsError(
      [&] {
        fusionOf("clamp", {x, 0.0, y});
      },
      {"clamp: operands T0 and T1 belong to different fusions"}));
}

}  // namespace
}  // namespace braze
