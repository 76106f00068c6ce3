// ExpressionEvaluator: constants, bound symbolic scalars, scalar expressions over them (with
// the elementwise semantics of the builders), memoization, and refused rebinds.

#include "braze/eval/expression_evaluator.h"

#include <cmath>

#include <gtest/gtest.h>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

TEST(ExpressionEvaluatorTest, ConstantsEvaluateToTheirValue) {
  Fusion fusion;
  ExpressionEvaluator evaluator;
  EXPECT_EQ(evaluator.evaluate(fusion.constantIndex(7)), ScalarValue(int64_t{7}));
  EXPECT_EQ(evaluator.evaluate(fusion.constant(0.25, DataType::Float32)), ScalarValue(0.25));
  EXPECT_EQ(evaluator.evaluate(fusion.constant(true, DataType::Bool)), ScalarValue(true));
}

TEST(ExpressionEvaluatorTest, UnboundSymbolIsNullopt) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Index);
  Val* doubled = mul(s, 2);
  ExpressionEvaluator evaluator;
  EXPECT_EQ(evaluator.evaluate(s), std::nullopt);
  EXPECT_EQ(evaluator.evaluate(doubled), std::nullopt);
  EXPECT_FALSE(evaluator.isBound(s));
}

TEST(ExpressionEvaluatorTest, EvaluatesScalarExpressionsOverBoundValues) {
  Fusion fusion;
  Scalar* a = makeInputScalar(fusion, DataType::Int64);
  Scalar* b = makeInputScalar(fusion, DataType::Int64);
  Scalar* x = makeInputScalar(fusion, DataType::Float64);
  Val* quotient = div(a, b);      // C division: truncates toward zero
  Val* modulo = remainder(a, b);  // Python's %: sign of the divisor
  Val* ceiling = ceil_div(add(a, 20), b);
  Val* mixed = add(mul(x, a), 0.5);  // promotes to float
  Val* tanh_gelu = gelu(x, GeluApproximation::Tanh);
  Val* exact_gelu = gelu(x);
  Val* compare = lt(a, b);

  ExpressionEvaluator evaluator;
  evaluator.bind(a, int64_t{-7});
  evaluator.bind(b, int64_t{2});
  evaluator.bind(x, 1.5);
  EXPECT_TRUE(evaluator.isBound(a));
  EXPECT_EQ(evaluator.evaluate(quotient), ScalarValue(int64_t{-3}));
  EXPECT_EQ(evaluator.evaluate(modulo), ScalarValue(int64_t{1}));
  EXPECT_EQ(evaluator.evaluate(ceiling), ScalarValue(int64_t{7}));
  EXPECT_EQ(evaluator.evaluate(mixed), ScalarValue(1.5 * -7 + 0.5));
  EXPECT_EQ(evaluator.evaluate(compare), ScalarValue(true));

  const double v = 1.5;
  const double tanh_expected =
      0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  const double exact_expected = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  EXPECT_NEAR(std::get<double>(*evaluator.evaluate(tanh_gelu)), tanh_expected, 1e-15);
  EXPECT_NEAR(std::get<double>(*evaluator.evaluate(exact_gelu)), exact_expected, 1e-15);
  // The two flavors differ in the fourth decimal at 1.5: the attribute was honored.
  EXPECT_GT(std::fabs(tanh_expected - exact_expected), 1e-5);
}

TEST(ExpressionEvaluatorTest, CastRoundsAndIntegerResultsWrap) {
  Fusion fusion;
  Scalar* x = makeInputScalar(fusion, DataType::Float64);
  Scalar* i = makeInputScalar(fusion, DataType::Int32);
  Val* half = cast(x, DataType::Float16);
  Val* sum = add(i, i);  // int32 + int32 stays int32 and wraps
  ExpressionEvaluator evaluator;
  evaluator.bind(x, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -20));
  evaluator.bind(i, int64_t{INT32_MAX});
  EXPECT_EQ(evaluator.evaluate(half), ScalarValue(1.0 + std::ldexp(1.0, -10)));
  EXPECT_EQ(evaluator.evaluate(sum), ScalarValue(int64_t{-2}));
}

TEST(ExpressionEvaluatorTest, BindCastsToTheScalarsDtype) {
  Fusion fusion;
  Scalar* i = makeInputScalar(fusion, DataType::Int32);
  Scalar* f = makeInputScalar(fusion, DataType::Float32);
  ExpressionEvaluator evaluator;
  evaluator.bind(i, int64_t{(int64_t{1} << 32) + 3});
  evaluator.bind(f, int64_t{2});
  EXPECT_EQ(evaluator.evaluate(i), ScalarValue(int64_t{3}));
  EXPECT_EQ(evaluator.evaluate(f), ScalarValue(2.0));
}

TEST(ExpressionEvaluatorTest, EvaluatesExtentsOfDerivedTensors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = slice(x, 1, int64_t{1}, int64_t{-1}, int64_t{2});
  ExpressionEvaluator evaluator;
  evaluator.bind(x->axis(0)->extent(), int64_t{4});
  evaluator.bind(x->axis(1)->extent(), int64_t{10});
  EXPECT_EQ(evaluator.evaluate(y->axis(0)->extent()), ScalarValue(int64_t{4}));
  // Elements 1, 3, 5, 7 of 0 .. 8.
  EXPECT_EQ(evaluator.evaluate(y->axis(1)->extent()), ScalarValue(int64_t{4}));
}

TEST(ExpressionEvaluatorTest, ResultsAreMemoized) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Index);
  Val* e = add(s, 1);
  ExpressionEvaluator evaluator;
  evaluator.bind(s, int64_t{4});
  EXPECT_EQ(evaluator.evaluate(e), ScalarValue(int64_t{5}));
  EXPECT_TRUE(evaluator.isBound(e));
  EXPECT_EQ(evaluator.evaluate(e), ScalarValue(int64_t{5}));
}

TEST(ExpressionEvaluatorTest, LongChainsDoNotExhaustTheStack) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Int64);
  Val* value = s;
  for (int i = 0; i < 100000; ++i) value = add(value, s);
  ExpressionEvaluator evaluator;
  evaluator.bind(s, int64_t{3});
  EXPECT_EQ(evaluator.evaluate(value), ScalarValue(int64_t{300003}));
}

TEST(ExpressionEvaluatorTest, RebindingToTheSameValueIsAccepted) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Index);
  ExpressionEvaluator evaluator;
  evaluator.bind(s, int64_t{5});
  evaluator.bind(s, int64_t{5});
  evaluator.bind(fusion.constantIndex(3), int64_t{3});
  EXPECT_EQ(evaluator.evaluate(s), ScalarValue(int64_t{5}));
}

TEST(ExpressionEvaluatorTest, RebindingToAnotherValueIsRefused) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Index);
  ExpressionEvaluator evaluator;
  evaluator.bind(s, int64_t{5});
  EXPECT_TRUE(throwsError([&] { evaluator.bind(s, int64_t{7}); },
                          {s->name(), "already bound to 5", "cannot rebind it to 7"}));
  EXPECT_EQ(evaluator.evaluate(s), ScalarValue(int64_t{5}));
}

TEST(ExpressionEvaluatorTest, BindingAConstantToAnotherValueIsRefused) {
  Fusion fusion;
  ExpressionEvaluator evaluator;
  EXPECT_TRUE(throwsError([&] { evaluator.bind(fusion.constantIndex(4), int64_t{6}); },
                          {"constant 4", "cannot be bound to 6"}));
}

TEST(ExpressionEvaluatorTest, BindingAComputedScalarAgainstItsDefinitionIsRefused) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Index);
  Val* next = add(s, 1);
  ExpressionEvaluator evaluator;
  evaluator.bind(s, int64_t{2});
  evaluator.bind(next, int64_t{3});  // consistent
  EXPECT_TRUE(throwsError([&] { evaluator.bind(next, int64_t{9}); },
                          {next->name(), "computed as 3", "cannot rebind it to 9"}));
}

TEST(ExpressionEvaluatorTest, EvaluateOrThrowNamesTheUnboundLeaves) {
  Fusion fusion;
  Scalar* a = makeInputScalar(fusion, DataType::Index);
  Scalar* b = makeInputScalar(fusion, DataType::Index);
  Scalar* c = makeInputScalar(fusion, DataType::Index);
  Val* e = add(mul(a, b), c);
  ExpressionEvaluator evaluator;
  evaluator.bind(b, int64_t{1});
  EXPECT_TRUE(throwsError(
      [&] { evaluator.evaluateOrThrow(e, "the extent of dim 1 of T3"); },
      {"cannot evaluate the extent of dim 1 of T3", e->name(), a->name(), c->name(), "not bound"}));
  evaluator.bind(a, int64_t{2});
  evaluator.bind(c, int64_t{3});
  EXPECT_EQ(evaluator.evaluateOrThrow(e, "e"), ScalarValue(int64_t{5}));
}

TEST(ExpressionEvaluatorTest, IntegerDivisionByZeroNamesTheOp) {
  Fusion fusion;
  Scalar* a = makeInputScalar(fusion, DataType::Int64);
  Scalar* b = makeInputScalar(fusion, DataType::Int64);
  Val* q = div(a, b);
  ExpressionEvaluator evaluator;
  evaluator.bind(a, int64_t{1});
  evaluator.bind(b, int64_t{0});
  EXPECT_TRUE(throwsError([&] { evaluator.evaluate(q); }, {"div", "zero"}));
}

TEST(ExpressionEvaluatorTest, TensorsAreNotScalars) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  ExpressionEvaluator evaluator;
  EXPECT_TRUE(throwsError([&] { evaluator.evaluate(x); }, {x->name(), "not a scalar"}));
  EXPECT_TRUE(throwsError([&] { evaluator.bind(x, int64_t{1}); }, {x->name(), "not a scalar"}));
}

}  // namespace
}  // namespace braze
