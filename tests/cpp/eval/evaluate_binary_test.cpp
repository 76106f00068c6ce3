// Every binary op through the reference evaluator: float ops against <cmath>, integer
// semantics (truncating div, Python remainder, C fmod, shifts, wrapping), comparisons and
// logical/bitwise ops, tensor-scalar forms with constants and scalar inputs, and result dtypes.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/reference_loops.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::mapValues;
using test::RandomTensors;
using test::tensorOf;
using test::throwsError;
using test::valuesOf;
using test::zipValues;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Python's % on floats, as torch.remainder: the result takes the divisor's sign.
double pythonRemainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((b < 0) != (r < 0))) r += b;
  return r;
}

/// Python's % on integers.
double pythonIntRemainder(double a, double b) {
  const auto x = static_cast<int64_t>(a);
  const auto y = static_cast<int64_t>(b);
  int64_t r = x % y;
  if (r != 0 && ((y < 0) != (r < 0))) r += y;
  return static_cast<double>(r);
}

double maximumOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNan;
  return a > b ? a : b;
}
double minimumOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNan;
  return a < b ? a : b;
}

/// One binary op on floating inputs, with input ranges where it is defined.
struct BinaryCase {
  const char* name;
  TensorView* (*build)(TensorView*, TensorView*);
  double (*reference)(double, double);
  double low_a, high_a;
  double low_b, high_b;
  /// The second operand keeps at least this distance from zero.
  double min_abs_b = 0.0;
};

std::ostream& operator<<(std::ostream& os, const BinaryCase& c) {
  return os << c.name;
}

const BinaryCase kFloatCases[] = {
    {"add", [](TensorView* a, TensorView* b) { return add(a, b); },
     [](double a, double b) { return a + b; }, -3, 3, -3, 3},
    {"sub", [](TensorView* a, TensorView* b) { return sub(a, b); },
     [](double a, double b) { return a - b; }, -3, 3, -3, 3},
    {"mul", [](TensorView* a, TensorView* b) { return mul(a, b); },
     [](double a, double b) { return a * b; }, -3, 3, -3, 3},
    {"div", [](TensorView* a, TensorView* b) { return div(a, b); },
     [](double a, double b) { return a / b; }, -3, 3, -3, 3, 0.25},
    {"truediv", [](TensorView* a, TensorView* b) { return truediv(a, b); },
     [](double a, double b) { return a / b; }, -3, 3, -3, 3, 0.25},
    {"remainder", [](TensorView* a, TensorView* b) { return remainder(a, b); }, pythonRemainder,
     -10, 10, -3, 3, 0.3},
    {"fmod", [](TensorView* a, TensorView* b) { return fmod(a, b); },
     [](double a, double b) { return std::fmod(a, b); }, -10, 10, -3, 3, 0.3},
    {"pow", [](TensorView* a, TensorView* b) { return pow(a, b); },
     [](double a, double b) { return std::pow(a, b); }, 0.1, 3, -2, 2},
    {"maximum", [](TensorView* a, TensorView* b) { return maximum(a, b); }, maximumOf, -3, 3, -3,
     3},
    {"minimum", [](TensorView* a, TensorView* b) { return minimum(a, b); }, minimumOf, -3, 3, -3,
     3},
    {"atan2", [](TensorView* a, TensorView* b) { return atan2(a, b); },
     [](double a, double b) { return std::atan2(a, b); }, -3, 3, -3, 3},
};

constexpr DataType kFloatTypes[] = {DataType::Float32, DataType::Float64, DataType::Float16,
                                    DataType::BFloat16};

std::string caseName(const char* op, DataType dtype) {
  return std::string(op) + "_" + std::string(toString(dtype));
}

class BinaryFloatTest : public ::testing::TestWithParam<std::tuple<BinaryCase, DataType>> {};

TEST_P(BinaryFloatTest, MatchesCmath) {
  const auto& [op, dtype] = GetParam();
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2, dtype);
  TensorView* b = makeSymbolicTensor(fusion, 2, dtype);
  fusion.addOutput(op.build(a, b));

  RandomTensors random(11);
  const HostTensor ta = random.uniform(dtype, {6, 9}, op.low_a, op.high_a);
  const HostTensor tb = op.min_abs_b > 0
                            ? random.nonZero(dtype, {6, 9}, op.low_b, op.high_b, op.min_abs_b)
                            : random.uniform(dtype, {6, 9}, op.low_b, op.high_b);
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0],
              {dtype, {6, 9}, zipValues(valuesOf(ta), valuesOf(tb), op.reference)});
}

INSTANTIATE_TEST_SUITE_P(AllOps, BinaryFloatTest,
                         ::testing::Combine(::testing::ValuesIn(kFloatCases),
                                            ::testing::ValuesIn(kFloatTypes)),
                         [](const auto& info) {
                           return caseName(std::get<0>(info.param).name, std::get<1>(info.param));
                         });

/// Comparisons and logical ops, checked on small whole numbers so that ties and zeros occur.
struct PredicateCase {
  const char* name;
  TensorView* (*build)(TensorView*, TensorView*);
  bool (*reference)(double, double);
};

std::ostream& operator<<(std::ostream& os, const PredicateCase& c) {
  return os << c.name;
}

const PredicateCase kPredicateCases[] = {
    {"eq", [](TensorView* a, TensorView* b) { return eq(a, b); },
     [](double a, double b) { return a == b; }},
    {"ne", [](TensorView* a, TensorView* b) { return ne(a, b); },
     [](double a, double b) { return a != b; }},
    {"lt", [](TensorView* a, TensorView* b) { return lt(a, b); },
     [](double a, double b) { return a < b; }},
    {"le", [](TensorView* a, TensorView* b) { return le(a, b); },
     [](double a, double b) { return a <= b; }},
    {"gt", [](TensorView* a, TensorView* b) { return gt(a, b); },
     [](double a, double b) { return a > b; }},
    {"ge", [](TensorView* a, TensorView* b) { return ge(a, b); },
     [](double a, double b) { return a >= b; }},
    {"logical_and", [](TensorView* a, TensorView* b) { return logical_and(a, b); },
     [](double a, double b) { return a != 0 && b != 0; }},
    {"logical_or", [](TensorView* a, TensorView* b) { return logical_or(a, b); },
     [](double a, double b) { return a != 0 || b != 0; }},
    {"logical_xor", [](TensorView* a, TensorView* b) { return logical_xor(a, b); },
     [](double a, double b) { return (a != 0) != (b != 0); }},
};

class BinaryPredicateTest : public ::testing::TestWithParam<std::tuple<PredicateCase, DataType>> {};

TEST_P(BinaryPredicateTest, GivesBool) {
  const auto& [op, dtype] = GetParam();
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2, dtype);
  TensorView* b = makeSymbolicTensor(fusion, 2, dtype);
  fusion.addOutput(op.build(a, b));

  RandomTensors random(12);
  const HostTensor ta = random.uniform(dtype, {7, 8}, -2, 2);
  const HostTensor tb = random.uniform(dtype, {7, 8}, -2, 2);
  // Floats get the same whole numbers, so equality is exercised in every dtype.
  const HostTensor whole_a =
      tensorOf(dtype, {7, 8}, mapValues(valuesOf(ta), [](double v) { return std::round(v); }));
  const HostTensor whole_b =
      tensorOf(dtype, {7, 8}, mapValues(valuesOf(tb), [](double v) { return std::round(v); }));
  const std::vector<double> expected =
      zipValues(valuesOf(whole_a), valuesOf(whole_b),
                [&](double x, double y) { return op.reference(x, y) ? 1.0 : 0.0; });
  expectClose(evaluateFusionTensors(fusion, {whole_a, whole_b})[0],
              {DataType::Bool, {7, 8}, expected});
}

INSTANTIATE_TEST_SUITE_P(AllOps, BinaryPredicateTest,
                         ::testing::Combine(::testing::ValuesIn(kPredicateCases),
                                            ::testing::Values(DataType::Float32, DataType::Float64,
                                                              DataType::BFloat16, DataType::Int32,
                                                              DataType::Int64, DataType::Bool)),
                         [](const auto& info) {
                           return caseName(std::get<0>(info.param).name, std::get<1>(info.param));
                         });

TEST(EvaluateBinary, ComparisonsWithNan) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(eq(a, b));
  fusion.addOutput(ne(a, b));
  fusion.addOutput(lt(a, b));
  fusion.addOutput(ge(a, b));
  fusion.addOutput(maximum(a, b));
  fusion.addOutput(minimum(a, b));
  const HostTensor ta = tensorOf(DataType::Float32, {3}, {kNan, 1.0, kNan});
  const HostTensor tb = tensorOf(DataType::Float32, {3}, {kNan, kNan, 2.0});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ta, tb});
  expectClose(out[0], {DataType::Bool, {3}, {0, 0, 0}});
  expectClose(out[1], {DataType::Bool, {3}, {1, 1, 1}});
  expectClose(out[2], {DataType::Bool, {3}, {0, 0, 0}});
  expectClose(out[3], {DataType::Bool, {3}, {0, 0, 0}});
  expectClose(out[4], {DataType::Float32, {3}, {kNan, kNan, kNan}});
  expectClose(out[5], {DataType::Float32, {3}, {kNan, kNan, kNan}});
}

TEST(EvaluateBinary, FloatDivisionByZero) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(div(a, b));
  fusion.addOutput(fmod(a, b));
  const HostTensor ta = tensorOf(DataType::Float32, {3}, {1.0, -2.0, 0.0});
  const HostTensor tb = tensorOf(DataType::Float32, {3}, {0.0, 0.0, 0.0});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ta, tb});
  expectClose(out[0], {DataType::Float32, {3}, {kInf, -kInf, kNan}});
  expectClose(out[1], {DataType::Float32, {3}, {kNan, kNan, kNan}});
}

TEST(EvaluateBinary, PowSpecialCases) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float64);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float64);
  fusion.addOutput(pow(a, b));
  const HostTensor ta = tensorOf(DataType::Float64, {5}, {0.0, -2.0, -8.0, 2.0, kNan});
  const HostTensor tb = tensorOf(DataType::Float64, {5}, {0.0, 3.0, 1.0 / 3.0, -1.0, 0.0});
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0],
              {DataType::Float64, {5}, {1.0, -8.0, kNan, 0.5, 1.0}});
}

// ---- integers ----

/// Evaluates `build(a, b)` on two 1-D int tensors of `dtype`.
HostTensor evaluateIntegerOp(TensorView* (*build)(TensorView*, TensorView*), DataType dtype,
                             const std::vector<double>& a, const std::vector<double>& b) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, dtype);
  TensorView* y = makeSymbolicTensor(fusion, 1, dtype);
  fusion.addOutput(build(x, y));
  const auto n = static_cast<int64_t>(a.size());
  return evaluateFusionTensors(fusion, {tensorOf(dtype, {n}, a), tensorOf(dtype, {n}, b)})[0];
}

class IntegerBinaryTest : public ::testing::TestWithParam<DataType> {};

TEST_P(IntegerBinaryTest, DivTruncatesTowardZero) {
  const DataType dtype = GetParam();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return div(a, b); }, dtype,
                                {7, -7, 7, -7, 0, 9, 1, -1}, {2, 2, -2, -2, 3, 9, 5, 5}),
              {dtype, {8}, {3, -3, -3, 3, 0, 1, 0, 0}});
}

TEST_P(IntegerBinaryTest, RemainderTakesTheDivisorsSign) {
  const DataType dtype = GetParam();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return remainder(a, b); }, dtype,
                                {7, -7, 7, -7, 0, 9, 1, -1}, {2, 2, -2, -2, 3, 9, 5, 5}),
              {dtype, {8}, {1, 1, -1, -1, 0, 0, 1, 4}});
}

TEST_P(IntegerBinaryTest, FmodTakesTheDividendsSign) {
  const DataType dtype = GetParam();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return fmod(a, b); }, dtype,
                                {7, -7, 7, -7, 0, 9, 1, -1}, {2, 2, -2, -2, 3, 9, 5, 5}),
              {dtype, {8}, {1, -1, 1, -1, 0, 0, 1, -1}});
}

TEST_P(IntegerBinaryTest, RandomRemainderAndDivAgreeWithIdentity) {
  // a == div(a, b) * b + fmod(a, b), and remainder agrees with Python's definition.
  const DataType dtype = GetParam();
  RandomTensors random(13);
  const std::vector<double> a = valuesOf(random.uniform(dtype, {50}, -1000, 1000));
  const std::vector<double> b = valuesOf(random.nonZero(dtype, {50}, -30, 30, 1));
  const HostTensor q =
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return div(x, y); }, dtype, a, b);
  const HostTensor r =
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return remainder(x, y); }, dtype, a, b);
  const HostTensor f =
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return fmod(x, y); }, dtype, a, b);
  expectClose(q,
              {dtype, {50}, zipValues(a, b, [](double x, double y) { return std::trunc(x / y); })});
  expectClose(r, {dtype, {50}, zipValues(a, b, pythonIntRemainder)});
  expectClose(f,
              {dtype, {50}, zipValues(a, b, [](double x, double y) { return std::fmod(x, y); })});
}

TEST_P(IntegerBinaryTest, AddSubMulMaxMin) {
  const DataType dtype = GetParam();
  RandomTensors random(14);
  const std::vector<double> a = valuesOf(random.uniform(dtype, {30}, -1000, 1000));
  const std::vector<double> b = valuesOf(random.uniform(dtype, {30}, -1000, 1000));
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return add(x, y); }, dtype, a, b),
      {dtype, {30}, zipValues(a, b, [](double x, double y) { return x + y; })});
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return sub(x, y); }, dtype, a, b),
      {dtype, {30}, zipValues(a, b, [](double x, double y) { return x - y; })});
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return mul(x, y); }, dtype, a, b),
      {dtype, {30}, zipValues(a, b, [](double x, double y) { return x * y; })});
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return maximum(x, y); }, dtype, a, b),
      {dtype, {30}, zipValues(a, b, [](double x, double y) { return std::max(x, y); })});
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return minimum(x, y); }, dtype, a, b),
      {dtype, {30}, zipValues(a, b, [](double x, double y) { return std::min(x, y); })});
}

TEST_P(IntegerBinaryTest, PowOfIntegersStaysInteger) {
  const DataType dtype = GetParam();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return pow(a, b); }, dtype,
                                {2, -3, 5, 0, 1, 0, -1, 7}, {10, 3, 0, 5, 7, 0, 5, 2}),
              {dtype, {8}, {1024, -27, 1, 0, 1, 1, -1, 49}});
}

TEST_P(IntegerBinaryTest, CeilDivOfNonNegativeByPositive) {
  const DataType dtype = GetParam();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return ceil_div(a, b); }, dtype,
                                {0, 1, 7, 8, 9, 100, 5}, {4, 4, 4, 4, 4, 7, 1}),
              {dtype, {7}, {0, 1, 2, 2, 3, 15, 5}});
}

TEST_P(IntegerBinaryTest, CeilDivOfNegativeDividendIsMathematicalCeil) {
  const DataType dtype = GetParam();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return ceil_div(a, b); }, dtype,
                                {-3, -1, -7, -8}, {3, 3, 2, 3}),
              {dtype, {4}, {-1, 0, -3, -2}});
}

TEST_P(IntegerBinaryTest, BitwiseOps) {
  const DataType dtype = GetParam();
  RandomTensors random(15);
  const std::vector<double> a = valuesOf(random.uniform(dtype, {40}, -5000, 5000));
  const std::vector<double> b = valuesOf(random.uniform(dtype, {40}, -5000, 5000));
  auto bitwise = [](auto f) {
    return [f](double x, double y) {
      return static_cast<double>(f(static_cast<int64_t>(x), static_cast<int64_t>(y)));
    };
  };
  expectClose(evaluateIntegerOp([](TensorView* x, TensorView* y) { return bitwise_and(x, y); },
                                dtype, a, b),
              {dtype, {40}, zipValues(a, b, bitwise([](int64_t x, int64_t y) { return x & y; }))});
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return bitwise_or(x, y); }, dtype, a, b),
      {dtype, {40}, zipValues(a, b, bitwise([](int64_t x, int64_t y) { return x | y; }))});
  expectClose(evaluateIntegerOp([](TensorView* x, TensorView* y) { return bitwise_xor(x, y); },
                                dtype, a, b),
              {dtype, {40}, zipValues(a, b, bitwise([](int64_t x, int64_t y) { return x ^ y; }))});
}

TEST_P(IntegerBinaryTest, ShiftsAreArithmetic) {
  const DataType dtype = GetParam();
  RandomTensors random(16);
  const std::vector<double> a = valuesOf(random.uniform(dtype, {40}, -5000, 5000));
  const std::vector<double> s = valuesOf(random.uniform(dtype, {40}, 0, 15));
  expectClose(
      evaluateIntegerOp([](TensorView* x, TensorView* y) { return left_shift(x, y); }, dtype, a, s),
      {dtype, {40}, zipValues(a, s, [](double x, double k) { return x * std::exp2(k); })});
  // An arithmetic right shift is floor division by 2^k, also for negative values.
  expectClose(evaluateIntegerOp([](TensorView* x, TensorView* y) { return right_shift(x, y); },
                                dtype, a, s),
              {dtype, {40}, zipValues(a, s, [](double x, double k) {
                 return std::floor(x / std::exp2(k));
               })});
}

TEST_P(IntegerBinaryTest, DivisionByZeroIsAnError) {
  const DataType dtype = GetParam();
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateIntegerOp([](TensorView* a, TensorView* b) { return div(a, b); }, dtype, {4, 5},
                          {1, 0});
      },
      {"div"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateIntegerOp([](TensorView* a, TensorView* b) { return remainder(a, b); }, dtype,
                          {4, 5}, {0, 2});
      },
      {"remainder"}));
}

INSTANTIATE_TEST_SUITE_P(Integers, IntegerBinaryTest,
                         ::testing::Values(DataType::Int32, DataType::Int64),
                         [](const auto& info) { return std::string(toString(info.param)); });

TEST(EvaluateBinary, Int32ArithmeticWrapsOnStore) {
  const double int32_max = std::numeric_limits<int32_t>::max();
  const double int32_min = std::numeric_limits<int32_t>::min();
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return add(a, b); },
                                DataType::Int32, {int32_max, int32_min}, {1, -1}),
              {DataType::Int32, {2}, {int32_min, int32_max}});
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return mul(a, b); },
                                DataType::Int32, {65536, 1 << 20}, {32768, 4096}),
              {DataType::Int32, {2}, {int32_min, 0}});
  expectClose(evaluateIntegerOp([](TensorView* a, TensorView* b) { return left_shift(a, b); },
                                DataType::Int32, {1, 3}, {31, 30}),
              {DataType::Int32, {2}, {int32_min, int32_min + 1073741824.0}});
}

TEST(EvaluateBinary, Int64KeepsAll64Bits) {
  // Values beyond 2^53 would lose their low bits if anything went through a double.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t big = (int64_t{1} << 62) + 1;
  const int64_t other = (int64_t{1} << 61) + 3;
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Int64);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(add(a, b));
  fusion.addOutput(sub(a, b));
  fusion.addOutput(mul(a, b));
  fusion.addOutput(bitwise_xor(a, b));
  fusion.addOutput(div(a, b));
  fusion.addOutput(eq(a, b));
  const HostTensor ta = test::tensorOfIntegers(DataType::Int64, {3}, {big, kMax, big});
  const HostTensor tb = test::tensorOfIntegers(DataType::Int64, {3}, {other, 1, big - 1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ta, tb});
  ASSERT_EQ(out.size(), 6u);
  // Wrapping arithmetic, computed here in unsigned to avoid undefined behaviour.
  auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  const auto ubig = static_cast<uint64_t>(big);
  const auto uother = static_cast<uint64_t>(other);
  EXPECT_EQ(test::integersOf(out[0]),
            (std::vector<int64_t>{big + other, kMin, wrap(ubig + ubig - 1)}));
  EXPECT_EQ(test::integersOf(out[1]), (std::vector<int64_t>{big - other, kMax - 1, 1}));
  EXPECT_EQ(test::integersOf(out[2]),
            (std::vector<int64_t>{wrap(ubig * uother), kMax, wrap(ubig * (ubig - 1))}));
  EXPECT_EQ(test::integersOf(out[3]),
            (std::vector<int64_t>{big ^ other, kMax ^ 1, big ^ (big - 1)}));
  EXPECT_EQ(test::integersOf(out[4]), (std::vector<int64_t>{big / other, kMax, 1}));
  expectClose(out[5], {DataType::Bool, {3}, {0, 0, 0}});
}

TEST(EvaluateBinary, TruedivOfIntegersGivesFloat32) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(truediv(a, b));
  const HostTensor ta = tensorOf(DataType::Int32, {4}, {7, -7, 1, 0});
  const HostTensor tb = tensorOf(DataType::Int64, {4}, {2, 2, 3, 5});
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0],
              {DataType::Float32, {4}, {3.5, -3.5, 1.0 / 3.0, 0.0}});
}

TEST(EvaluateBinary, BitwiseAndLogicalOpsOnBools) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Bool);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Bool);
  fusion.addOutput(bitwise_and(a, b));
  fusion.addOutput(bitwise_or(a, b));
  fusion.addOutput(bitwise_xor(a, b));
  const HostTensor ta = tensorOf(DataType::Bool, {4}, {0, 0, 1, 1});
  const HostTensor tb = tensorOf(DataType::Bool, {4}, {0, 1, 0, 1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ta, tb});
  expectClose(out[0], {DataType::Bool, {4}, {0, 0, 0, 1}});
  expectClose(out[1], {DataType::Bool, {4}, {0, 1, 1, 1}});
  expectClose(out[2], {DataType::Bool, {4}, {0, 1, 1, 0}});
}

// ---- tensor-scalar forms and constants ----

TEST(EvaluateBinary, TensorScalarAndScalarTensorConstants) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  fusion.addOutput(add(x, 1.5));
  fusion.addOutput(sub(2.0, x));
  fusion.addOutput(mul(x, 3));
  fusion.addOutput(div(1.0, x));
  fusion.addOutput(pow(x, 2));
  fusion.addOutput(pow(2.0, x));
  fusion.addOutput(remainder(x, 0.75));
  fusion.addOutput(lt(0.5, x));
  fusion.addOutput(maximum(x, 0.0));
  RandomTensors random(17);
  const HostTensor input = random.nonZero(DataType::Float32, {3, 5}, -2, 2, 0.25);
  const std::vector<double> v = valuesOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  ASSERT_EQ(out.size(), 9u);
  auto expected = [&](auto f, DataType dtype = DataType::Float32) {
    return test::ExpectedTensor{dtype, {3, 5}, mapValues(v, f)};
  };
  expectClose(out[0], expected([](double a) { return a + 1.5; }));
  expectClose(out[1], expected([](double a) { return 2.0 - a; }));
  expectClose(out[2], expected([](double a) { return a * 3; }));
  expectClose(out[3], expected([](double a) { return 1.0 / a; }));
  expectClose(out[4], expected([](double a) { return a * a; }));
  expectClose(out[5], expected([](double a) { return std::exp2(a); }));
  expectClose(out[6], expected([](double a) { return pythonRemainder(a, 0.75); }));
  expectClose(out[7], expected([](double a) { return 0.5 < a ? 1.0 : 0.0; }, DataType::Bool));
  expectClose(out[8], expected([](double a) { return std::max(a, 0.0); }));
}

TEST(EvaluateBinary, IntegerTensorWithIntegerConstants) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  fusion.addOutput(remainder(x, 3));
  fusion.addOutput(div(-7, x));
  fusion.addOutput(right_shift(x, 1));
  fusion.addOutput(bitwise_and(x, 6));
  const HostTensor input = tensorOf(DataType::Int32, {4}, {-5, 4, 7, -2});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Int32, {4}, {1, 1, 1, 1}});
  expectClose(out[1], {DataType::Int32, {4}, {1, -1, -1, 3}});
  expectClose(out[2], {DataType::Int32, {4}, {-3, 2, 3, -1}});
  expectClose(out[3], {DataType::Int32, {4}, {2, 4, 6, 6}});
}

TEST(EvaluateBinary, FusionScalarInputsMixWithTensors) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  Scalar* alpha = makeInputScalar(fusion, DataType::Float64);
  Scalar* shift = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(add(mul(x, alpha), shift));
  fusion.addOutput(sub(alpha, x));
  RandomTensors random(18);
  const HostTensor input = random.uniform(DataType::Float32, {4, 3});
  const std::vector<EvaluatorArgument> out =
      evaluateFusion(fusion, {input, ScalarValue(0.5), ScalarValue(int64_t{-3})});
  ASSERT_EQ(out.size(), 2u);
  expectClose(std::get<HostTensor>(out[0]),
              {DataType::Float32, {4, 3}, mapValues(valuesOf(input), [](double v) {
                 return v * 0.5 - 3;
               })});
  expectClose(
      std::get<HostTensor>(out[1]),
      {DataType::Float32, {4, 3}, mapValues(valuesOf(input), [](double v) { return 0.5 - v; })});
}

TEST(EvaluateBinary, ScalarOnlyExpressionGivesScalar) {
  Fusion fusion;
  Scalar* a = makeInputScalar(fusion, DataType::Int64);
  Scalar* b = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(add(mul(Operand(a), Operand(b)), 1));
  fusion.addOutput(truediv(Operand(a), Operand(b)));
  fusion.addOutput(ceil_div(Operand(a), Operand(b)));
  const std::vector<EvaluatorArgument> out =
      evaluateFusion(fusion, {ScalarValue(int64_t{7}), ScalarValue(int64_t{2})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(toInt64(std::get<ScalarValue>(out[0])), 15);
  EXPECT_DOUBLE_EQ(toDouble(std::get<ScalarValue>(out[1])), 3.5);
  EXPECT_EQ(toInt64(std::get<ScalarValue>(out[2])), 4);
}

// ---- result dtypes ----

struct PromotionCase {
  DataType a;
  DataType b;
  DataType result;
};

TEST(EvaluateBinary, TensorTensorPromotion) {
  const PromotionCase cases[] = {
      {DataType::Int32, DataType::Int64, DataType::Int64},
      {DataType::Bool, DataType::Int32, DataType::Int32},
      {DataType::Int64, DataType::Float16, DataType::Float16},
      {DataType::Float16, DataType::BFloat16, DataType::Float32},
      {DataType::Float32, DataType::Float64, DataType::Float64},
      {DataType::BFloat16, DataType::Float32, DataType::Float32},
      {DataType::Int32, DataType::Float32, DataType::Float32},
  };
  for (const PromotionCase& c : cases) {
    SCOPED_TRACE(std::string(toString(c.a)) + " + " + std::string(toString(c.b)));
    Fusion fusion;
    TensorView* a = makeSymbolicTensor(fusion, 1, c.a);
    TensorView* b = makeSymbolicTensor(fusion, 1, c.b);
    fusion.addOutput(add(a, b));
    fusion.addOutput(mul(b, a));
    const HostTensor ta = tensorOf(c.a, {3}, {1, 0, 1});
    const HostTensor tb = tensorOf(c.b, {3}, {2, 5, -3});
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ta, tb});
    expectClose(out[0], {c.result, {3}, {3, 5, -2}});
    expectClose(out[1], {c.result, {3}, {2, 0, -3}});
  }
}

TEST(EvaluateBinary, TensorScalarPromotionFollowsPytorch) {
  Fusion fusion;
  TensorView* i32 = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* f16 = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* flags = makeSymbolicTensor(fusion, 1, DataType::Bool);
  fusion.addOutput(add(i32, 2));      // int32: the tensor wins within a category
  fusion.addOutput(mul(i32, 0.5));    // float32: a float scalar lifts an int tensor
  fusion.addOutput(mul(f16, 0.5));    // float16 stays
  fusion.addOutput(add(flags, 3));    // int64 from a bool tensor and an int scalar
  fusion.addOutput(add(flags, 1.5));  // float32
  fusion.addOutput(div(i32, 2));      // int32, truncating
  const HostTensor ti = tensorOf(DataType::Int32, {3}, {5, -3, 8});
  const HostTensor th = tensorOf(DataType::Float16, {3}, {1.5, -0.25, 3.0});
  const HostTensor tb = tensorOf(DataType::Bool, {3}, {1, 0, 1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ti, th, tb});
  ASSERT_EQ(out.size(), 6u);
  expectClose(out[0], {DataType::Int32, {3}, {7, -1, 10}});
  expectClose(out[1], {DataType::Float32, {3}, {2.5, -1.5, 4}});
  expectClose(out[2], {DataType::Float16, {3}, {0.75, -0.125, 1.5}});
  expectClose(out[3], {DataType::Int64, {3}, {4, 3, 4}});
  expectClose(out[4], {DataType::Float32, {3}, {2.5, 1.5, 2.5}});
  expectClose(out[5], {DataType::Int32, {3}, {2, -1, 4}});
}

TEST(EvaluateBinary, ScalarInputsPromoteLikeZeroDimTensors) {
  // A typed scalar Val only changes the dtype when its category is higher than every
  // tensor's, and then its own width counts (unlike a literal, which gives the default dtype).
  Fusion fusion;
  TensorView* i32 = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* f16 = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* flags = makeSymbolicTensor(fusion, 1, DataType::Bool);
  Scalar* f64 = makeInputScalar(fusion, DataType::Float64);
  Scalar* i64 = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(mul(i32, f64));    // float64
  fusion.addOutput(add(f16, f64));    // float16
  fusion.addOutput(add(i32, i64));    // int32
  fusion.addOutput(add(flags, i64));  // int64
  fusion.addOutput(mul(i32, 0.5));    // float32: a literal counts as the default dtype
  const HostTensor ti = tensorOf(DataType::Int32, {3}, {5, -3, 8});
  const HostTensor th = tensorOf(DataType::Float16, {3}, {1.5, -0.25, 3.0});
  const HostTensor tb = tensorOf(DataType::Bool, {3}, {1, 0, 1});
  const std::vector<EvaluatorArgument> out =
      evaluateFusion(fusion, {ti, th, tb, ScalarValue(0.1), ScalarValue(int64_t{1} << 40)});
  ASSERT_EQ(out.size(), 5u);
  expectClose(std::get<HostTensor>(out[0]), {DataType::Float64, {3}, {0.5, -0.3, 0.8}});
  expectClose(std::get<HostTensor>(out[1]), {DataType::Float16, {3}, {1.6, -0.15, 3.1}});
  // int32 + 2^40 wraps to the int32 sum: 2^40 is a multiple of 2^32.
  expectClose(std::get<HostTensor>(out[2]), {DataType::Int32, {3}, {5, -3, 8}});
  expectClose(std::get<HostTensor>(out[3]),
              {DataType::Int64, {3}, {1099511627777.0, 1099511627776.0, 1099511627777.0}});
  expectClose(std::get<HostTensor>(out[4]), {DataType::Float32, {3}, {2.5, -1.5, 4}});
}

TEST(EvaluateBinary, ResultIsRoundedToTheNarrowDtype) {
  // float16 + float16 is computed wide and rounded once when stored.
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float16);
  fusion.addOutput(add(a, b));
  const HostTensor ta = tensorOf(DataType::Float16, {2}, {1.0, 2048.0});
  const HostTensor tb = tensorOf(DataType::Float16, {2}, {1.0 / 2048, 1.0});
  // 1 + 2^-11 is a tie that rounds to even (1.0); 2048 + 1 likewise rounds to 2048.
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0], {DataType::Float16, {2}, {1.0, 2048.0}},
              test::Tolerance{});
}

TEST(EvaluateBinary, BroadcastsOperandsOfDifferentShapes) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 1, 5}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3, 1}});
  fusion.addOutput(sub(a, b));
  RandomTensors random(19);
  const HostTensor ta = random.uniform(DataType::Float32, {4, 1, 5});
  const HostTensor tb = random.uniform(DataType::Float32, {3, 1});
  const std::vector<int64_t> out_sizes = {4, 3, 5};
  const std::vector<double> expected =
      zipValues(test::broadcastValues(valuesOf(ta), {4, 1, 5}, out_sizes),
                test::broadcastValues(valuesOf(tb), {3, 1}, out_sizes),
                [](double x, double y) { return x - y; });
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0], {DataType::Float32, out_sizes, expected});
}

TEST(EvaluateBinary, MismatchedRunTimeSizesNameTheOpAndSizes) {
  // Symbolic dims of two inputs must agree when bound; a size-1 run-time value is not a
  // broadcast.
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2);
  TensorView* b = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(add(a, b));
  RandomTensors random(20);
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {random.uniform(DataType::Float32, {3, 4}),
                                       random.uniform(DataType::Float32, {3, 5})});
      },
      {"add", "4", "5"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {random.uniform(DataType::Float32, {3, 4}),
                                       random.uniform(DataType::Float32, {3, 1})});
      },
      {"add", "4", "1"}));
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

// gcd, nextafter and logical_right_shift on whole tensors, in their dtypes' widths.
TEST(EvaluateBinary, GcdOfInt64AndInt32Tensors) {
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  TensorView* c = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  fusion.addOutput(gcd(a, b));
  fusion.addOutput(gcd(c, 6));
  const std::vector<int64_t> as = {12, -12, 0, 0, kMin64, kMin64, kMin64, 7};
  const std::vector<int64_t> bs = {18, 18, 0, -5, 6, 0, kMin64, 13};
  const std::vector<int64_t> cs = {-2147483647 - 1, 0, -9, 4, 6, -6, 1, 35};
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {test::tensorOfIntegers(DataType::Int64, {8}, as),
                                     test::tensorOfIntegers(DataType::Int64, {8}, bs),
                                     test::tensorOfIntegers(DataType::Int32, {8}, cs)});
  EXPECT_EQ(out[0].dtype(), DataType::Int64);
  EXPECT_EQ(test::integersOf(out[0]), (std::vector<int64_t>{6, 6, 0, 5, 2, kMin64, kMin64, 1}));
  EXPECT_EQ(out[1].dtype(), DataType::Int32);
  EXPECT_EQ(test::integersOf(out[1]), (std::vector<int64_t>{2, 6, 3, 2, 6, 6, 1, 1}));
}

TEST(EvaluateBinary, NextafterInFloat32AndFloat64) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1}});
  TensorView* y = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {-1}});
  fusion.addOutput(nextafter(x, 2.0));
  fusion.addOutput(nextafter(y, 0.0));
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {tensorOf(DataType::Float32, {4}, {1.0, -1.0, 2.0, inf}),
                                     tensorOf(DataType::Float64, {3}, {1.0, -0.0, -inf})});
  EXPECT_EQ(out[0].dtype(), DataType::Float32);
  const std::vector<double> f = valuesOf(out[0]);
  EXPECT_EQ(f[0], 1.0 + 0x1p-23);
  EXPECT_EQ(f[1], -1.0 + 0x1p-24);
  EXPECT_EQ(f[2], 2.0);
  EXPECT_EQ(f[3], static_cast<double>(std::numeric_limits<float>::max()));
  const std::vector<double> d = valuesOf(out[1]);
  EXPECT_EQ(d[0], 1.0 - 0x1p-53);
  EXPECT_EQ(d[1], 0.0);
  EXPECT_FALSE(std::signbit(d[1]));
  EXPECT_EQ(d[2], std::numeric_limits<double>::lowest());
}

TEST(EvaluateBinary, LogicalRightShiftOfInt32AndInt64) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  TensorView* s = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  fusion.addOutput(logical_right_shift(a, s));
  fusion.addOutput(logical_right_shift(b, s));  // int64: a count of 40 still shifts
  fusion.addOutput(right_shift(a, s));          // arithmetic, for contrast
  const std::vector<int64_t> shifts = {0, 1, 28, 31, 32, 40, -1};
  const std::vector<HostTensor> out = evaluateFusionTensors(
      fusion, {test::tensorOfIntegers(DataType::Int32, {7}, std::vector<int64_t>(7, -1)),
               test::tensorOfIntegers(DataType::Int32, {7}, shifts),
               test::tensorOfIntegers(DataType::Int64, {7}, std::vector<int64_t>(7, -1))});
  EXPECT_EQ(test::integersOf(out[0]), (std::vector<int64_t>{-1, 2147483647, 15, 1, 0, 0, 0}));
  EXPECT_EQ(test::integersOf(out[1]),
            (std::vector<int64_t>{-1, std::numeric_limits<int64_t>::max(), (int64_t{1} << 36) - 1,
                                  (int64_t{1} << 33) - 1, (int64_t{1} << 32) - 1,
                                  (int64_t{1} << 24) - 1, 0}));
  EXPECT_EQ(test::integersOf(out[2]), (std::vector<int64_t>(7, -1)));
}

}  // namespace
}  // namespace braze
