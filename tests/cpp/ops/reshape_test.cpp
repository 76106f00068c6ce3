// reshape and flatten: output extents (constant, symbolic, inferred), Broadcast for size 1, and
// every error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/shape.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::scalarText;
using test::throwsError;

TEST(ReshapeTest, ConstantShape) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {2, 3, 4}});
  TensorView* y = reshape(x, {6, 1, 4});
  EXPECT_EQ(y->dtype(), DataType::Float16);
  EXPECT_EQ(domainText(y), "[6, b, 4]");
  const Expr* def = definitionOf(y, OpKind::Reshape);
  EXPECT_EQ(def->inputs().size(), 1u);
  EXPECT_TRUE(def->attributes().empty());
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(ReshapeTest, InfersMinusOneFromConstants) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {2, 3, 4}});
  EXPECT_EQ(domainText(reshape(x, {-1, 4})), "[6, 4]");
  EXPECT_EQ(domainText(reshape(x, {2, -1})), "[2, 12]");
  EXPECT_EQ(domainText(reshape(x, {-1})), "[24]");
}

TEST(ReshapeTest, InfersMinusOneByCancellingSharedFactors) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1, 4}});
  Scalar* s0 = x->axis(0)->extent();
  Scalar* s1 = x->axis(1)->extent();
  TensorView* y = reshape(x, {s0, -1});
  EXPECT_EQ(domainText(y), "[s0, mul(s1, 4)]");
  EXPECT_EQ(y->axis(0)->extent(), s0);
  TensorView* z = reshape(x, {-1, s1, 2});
  EXPECT_EQ(domainText(z), "[mul(s0, 2), s1, 2]");
  TensorView* w = reshape(x, {s1, s0, -1});
  EXPECT_EQ(domainText(w), "[s1, s0, 4]");
}

TEST(ReshapeTest, InfersMinusOneByDivisionOtherwise) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  TensorView* y = reshape(x, {n, -1});
  EXPECT_EQ(domainText(y), "[s2, div(mul(s0, s1), s2)]");
  EXPECT_EQ(y->axis(1)->extent()->dtype(), DataType::Index);
  TensorView* z = reshape(x, {3, -1});
  EXPECT_EQ(domainText(z), "[3, div(mul(s0, s1), 3)]");
}

TEST(ReshapeTest, SymbolicSizesAreUsedAsGiven) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  Scalar* a = makeInputScalar(fusion, DataType::Index);
  Scalar* b = makeInputScalar(fusion, DataType::Int64);
  TensorView* y = reshape(x, {a, b});
  EXPECT_EQ(domainText(y), "[s2, cast(s3, index)]");
  EXPECT_EQ(y->axis(1)->extent()->dtype(), DataType::Index);
}

TEST(ReshapeTest, ZeroElements) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {0, 3}});
  EXPECT_EQ(domainText(reshape(x, {3, 0, 5})), "[3, 0, 5]");
  EXPECT_EQ(domainText(reshape(x, {-1, 5})), "[0, 5]");
}

TEST(ReshapeTest, ErrorConstantElementCountMismatch) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3, 4}});
  EXPECT_TRUE(throwsError(
      [&] {
        reshape(x, {5, 3});
      },
      {"reshape of T0 (input 0): 12 elements cannot be viewed as [5, 3]", "15 elements"}));
  EXPECT_TRUE(throwsError(
      [&] {
        reshape(x, {5, -1});
      },
      {"12 elements cannot be viewed as [5, -1]", "not a multiple of 5"}));
}

TEST(ReshapeTest, ErrorTwoMinusOnes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError(
      [&] {
        reshape(x, {-1, 2, -1});
      },
      {"reshape of T0", "[-1, 2, -1]", "more than one -1"}));
}

TEST(ReshapeTest, ErrorNegativeSizeAndMinusOneBesideZero) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError(
      [&] {
        reshape(x, {-2, 3});
      },
      {"reshape of T0", "shape[0] is -2", "non-negative"}));
  EXPECT_TRUE(throwsError(
      [&] {
        reshape(x, {0, -1});
      },
      {"reshape of T0", "[0, -1]", "-1 beside a size 0"}));
}

TEST(ReshapeTest, ErrorSizeArguments) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(
      throwsError([&] { reshape(x, {1.5}); }, {"reshape", "shape[0]", "must be an integer"}));
  EXPECT_TRUE(throwsError([&] { reshape(x, {x}); }, {"reshape", "shape[0]", "got tensor T0"}));
  EXPECT_TRUE(throwsError([&] { reshape(nullptr, {1}); }, {"reshape", "null"}));
}

TEST(FlattenTest, MergesARangeOfDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {2, -1, 3, 4}});
  EXPECT_EQ(domainText(flatten(x)), "[mul(s0, 24)]");
  EXPECT_EQ(domainText(flatten(x, 1, 2)), "[2, mul(s0, 3), 4]");
  EXPECT_EQ(domainText(flatten(x, -2, -1)), "[2, s0, 12]");
  EXPECT_EQ(domainText(flatten(x, 1, 1)), "[2, s0, 3, 4]");
  definitionOf(flatten(x, 0, 1), OpKind::Reshape);
}

TEST(FlattenTest, ZeroDimBecomesOneElement) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  EXPECT_EQ(domainText(flatten(x)), "[b]");
}

TEST(FlattenTest, Errors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  EXPECT_TRUE(throwsError([&] { flatten(x, 2, 1); },
                          {"flatten of T0 (input 0)", "start_dim 2 comes after end_dim 1"}));
  EXPECT_TRUE(throwsError([&] { flatten(x, 0, 3); }, {"flatten", "dim 3", "out of range"}));
}

}  // namespace
}  // namespace braze
