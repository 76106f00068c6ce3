// full, zeros, ones, iota and arange: shapes, the value and start/step inputs in the requested
// dtype, arange's computed length, and every error.

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

TEST(FullTest, ShapeAndValue) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  TensorView* y = full(fusion, {2, n, 1}, 1.5, DataType::Float16);
  EXPECT_EQ(y->dtype(), DataType::Float16);
  EXPECT_EQ(domainText(y), "[2, s0, b]");
  const Expr* def = definitionOf(y, OpKind::Full);
  ASSERT_EQ(def->inputs().size(), 1u);
  const auto* value = def->input(0)->as<Scalar>();
  EXPECT_EQ(value->dtype(), DataType::Float16);
  EXPECT_TRUE(identical(*value->value(), ScalarValue(1.5)));
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(FullTest, ValueConvertedToTheDtype) {
  Fusion fusion;
  TensorView* y = full(fusion, {3}, 2.9, DataType::Int32);
  EXPECT_EQ(y->definition()->input(0)->as<Scalar>()->constantInt(), 2);
  Scalar* v = makeInputScalar(fusion, DataType::Float32);
  TensorView* z = full(fusion, {}, v, DataType::Float64);
  EXPECT_EQ(domainText(z), "[]");
  EXPECT_EQ(scalarText(z->definition()->input(0)->as<Scalar>()), "cast(s0, float64)");
  TensorView* w = full(fusion, {0}, v, DataType::Float32);
  EXPECT_EQ(w->definition()->input(0), v);
  EXPECT_EQ(domainText(w), "[0]");
}

TEST(FullTest, ZerosAndOnes) {
  Fusion fusion;
  TensorView* z = zeros(fusion, {4, 5}, DataType::Bool);
  EXPECT_EQ(z->dtype(), DataType::Bool);
  EXPECT_EQ(domainText(z), "[4, 5]");
  EXPECT_TRUE(identical(*definitionOf(z, OpKind::Full)->input(0)->as<Scalar>()->value(),
                        ScalarValue(false)));
  TensorView* o = ones(fusion, {3}, DataType::Float32);
  EXPECT_TRUE(
      identical(*definitionOf(o, OpKind::Full)->input(0)->as<Scalar>()->value(), ScalarValue(1.0)));
}

TEST(FullTest, Errors) {
  Fusion fusion;
  EXPECT_TRUE(throwsError(
      [&] {
        full(fusion, {2, -3}, 0, DataType::Float32);
      },
      {"full", "shape[1] is -3", "non-negative"}));
  EXPECT_TRUE(throwsError([&] { zeros(fusion, {1.5}, DataType::Float32); },
                          {"full", "shape[0]", "must be an integer"}));
  TensorView* t = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError([&] { full(fusion, {2}, t, DataType::Float32); },
                          {"full", "value", "tensor T0"}));
  Fusion other;
  Scalar* foreign = makeInputScalar(other, DataType::Index);
  EXPECT_TRUE(throwsError([&] { full(fusion, {foreign}, 0, DataType::Float32); },
                          {"full", "another fusion"}));
}

TEST(IotaTest, LengthStartAndStep) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  TensorView* y = iota(fusion, n, 3, 2, DataType::Float32);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[s0]");
  const Expr* def = definitionOf(y, OpKind::Iota);
  ASSERT_EQ(def->inputs().size(), 2u);
  for (Val* input : def->inputs()) EXPECT_EQ(input->dtype(), DataType::Float32);
  EXPECT_TRUE(def->input(0)->as<Scalar>()->isConstantEqualTo(3));
  EXPECT_TRUE(def->input(1)->as<Scalar>()->isConstantEqualTo(2));
  TensorView* d = iota(fusion, 5);
  EXPECT_EQ(d->dtype(), DataType::Int64);
  EXPECT_EQ(domainText(d), "[5]");
}

TEST(IotaTest, Errors) {
  Fusion fusion;
  EXPECT_TRUE(throwsError([&] { iota(fusion, -1); }, {"iota", "length is -1", "non-negative"}));
  EXPECT_TRUE(throwsError([&] { iota(fusion, 4, 0, 1, DataType::Bool); }, {"iota", "dtype bool"}));
  EXPECT_TRUE(throwsError([&] { iota(fusion, 2.0); }, {"iota", "length", "must be an integer"}));
}

TEST(ArangeTest, ConstantLengths) {
  Fusion fusion;
  struct Case {
    Operand start, end, step;
    DataType dtype;
    int64_t length;
  };
  const Case cases[] = {
      {0, 10, 1, DataType::Int64, 10},        {2, 11, 3, DataType::Int64, 3},
      {10, 0, -3, DataType::Int32, 4},        {5, 5, 1, DataType::Int64, 0},
      {0.0, 1.0, 0.25, DataType::Float32, 4}, {0.0, 1.0, 0.3, DataType::Float64, 4},
      {1, -1.5, -0.5, DataType::Float32, 5},  {-3, 3, 2, DataType::Float32, 3},
  };
  for (const Case& c : cases) {
    TensorView* y = arange(fusion, c.start, c.end, c.step, c.dtype);
    EXPECT_EQ(y->dtype(), c.dtype);
    EXPECT_EQ(domainText(y), c.length == 1 ? "[b]" : "[" + std::to_string(c.length) + "]");
    const Expr* def = definitionOf(y, OpKind::Iota);
    EXPECT_EQ(def->input(0)->dtype(), c.dtype);
    EXPECT_EQ(def->input(1)->dtype(), c.dtype);
  }
}

TEST(ArangeTest, SymbolicLengths) {
  Fusion fusion;
  Scalar* end = makeInputScalar(fusion, DataType::Index);
  // A constant step: exact integer arithmetic.
  EXPECT_EQ(domainText(arange(fusion, 2, end, 3)), "[maximum(ceil_div(sub(s0, 2), 3), 0)]");
  EXPECT_EQ(domainText(arange(fusion, end, 0, -2)), "[maximum(ceil_div(s0, 2), 0)]");
  // A step of unknown sign: ceil of the quotient in float64.
  Scalar* step = makeInputScalar(fusion, DataType::Int64);
  const std::string by = step->name();
  TensorView* y = arange(fusion, 1, 4, step);
  EXPECT_EQ(domainText(y),
            "[maximum(cast(ceil(truediv(3.0, cast(" + by + ", float64))), index), 0)]");
  EXPECT_EQ(y->dtype(), DataType::Int64);
  Scalar* stop = makeInputScalar(fusion, DataType::Float32);
  TensorView* z = arange(fusion, 0.5, stop, 0.5, DataType::Float32);
  EXPECT_EQ(domainText(z), "[maximum(cast(ceil(truediv(sub(cast(" + stop->name() +
                               ", float64), 0.5), 0.5)), index), 0)]");
  EXPECT_EQ(z->axis(0)->extent()->dtype(), DataType::Index);
  // iota's start and step are in the result dtype.
  const Expr* def = definitionOf(z, OpKind::Iota);
  EXPECT_EQ(def->input(0)->dtype(), DataType::Float32);
  EXPECT_EQ(def->input(1)->dtype(), DataType::Float32);
}

TEST(ArangeTest, Errors) {
  Fusion fusion;
  EXPECT_TRUE(throwsError([&] { arange(fusion, 0, 10, 0); }, {"arange", "step must be nonzero"}));
  EXPECT_TRUE(throwsError([&] { arange(fusion, 0, 10, -1); },
                          {"arange", "start 0, end 10 and step -1", "inconsistent"}));
  EXPECT_TRUE(throwsError([&] { arange(fusion, 0, 2.5, 1); },
                          {"arange", "floating but dtype is int64", "floating dtype"}));
  EXPECT_TRUE(
      throwsError([&] { arange(fusion, 0, 3, 1, DataType::Bool); }, {"arange", "dtype bool"}));
  EXPECT_TRUE(throwsError([&] { arange(fusion, false, 3, 1); }, {"arange", "got a bool"}));
  TensorView* t = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError([&] { arange(fusion, 0, t, 1); }, {"arange", "got tensor T0"}));
}

}  // namespace
}  // namespace braze
