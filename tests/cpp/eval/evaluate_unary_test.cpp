// Every unary op, casts and gelu through the reference evaluator, against <cmath> on the same
// inputs.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "support/random_tensor.h"
#include "support/reference_loops.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::mapValues;
using test::RandomTensors;
using test::roundTo;
using test::tensorOf;
using test::valuesOf;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double sigmoidOf(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double signOf(double x) {
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
}
double geluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  const double inner = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(inner));
}

/// One unary op on floating inputs: how to build it, what it computes, and an input range
/// where it is defined and well conditioned.
struct UnaryCase {
  const char* name;
  TensorView* (*build)(TensorView*);
  double (*reference)(double);
  double low;
  double high;
  /// Inputs keep at least this distance from zero (divisions, logs of |x|).
  double min_abs = 0.0;
};

std::ostream& operator<<(std::ostream& os, const UnaryCase& c) {
  return os << c.name;
}

const UnaryCase kFloatCases[] = {
    {"neg", [](TensorView* x) { return neg(x); }, [](double x) { return -x; }, -3, 3},
    {"abs", [](TensorView* x) { return abs(x); }, [](double x) { return std::fabs(x); }, -3, 3},
    {"exp", [](TensorView* x) { return exp(x); }, [](double x) { return std::exp(x); }, -3, 3},
    {"exp2", [](TensorView* x) { return exp2(x); }, [](double x) { return std::exp2(x); }, -3, 3},
    {"expm1", [](TensorView* x) { return expm1(x); }, [](double x) { return std::expm1(x); }, -2,
     2},
    {"log", [](TensorView* x) { return log(x); }, [](double x) { return std::log(x); }, 0.1, 5},
    {"log2", [](TensorView* x) { return log2(x); }, [](double x) { return std::log2(x); }, 0.1, 5},
    {"log1p", [](TensorView* x) { return log1p(x); }, [](double x) { return std::log1p(x); }, -0.9,
     3},
    {"sqrt", [](TensorView* x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 5},
    {"rsqrt", [](TensorView* x) { return rsqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); },
     0.1, 5},
    {"reciprocal", [](TensorView* x) { return reciprocal(x); }, [](double x) { return 1.0 / x; },
     -3, 3, 0.2},
    {"sin", [](TensorView* x) { return sin(x); }, [](double x) { return std::sin(x); }, -4, 4},
    {"cos", [](TensorView* x) { return cos(x); }, [](double x) { return std::cos(x); }, -4, 4},
    {"tan", [](TensorView* x) { return tan(x); }, [](double x) { return std::tan(x); }, -1.2, 1.2},
    {"tanh", [](TensorView* x) { return tanh(x); }, [](double x) { return std::tanh(x); }, -3, 3},
    {"sigmoid", [](TensorView* x) { return sigmoid(x); }, sigmoidOf, -6, 6},
    {"relu", [](TensorView* x) { return relu(x); }, [](double x) { return x > 0 ? x : 0.0; }, -3,
     3},
    {"silu", [](TensorView* x) { return silu(x); }, [](double x) { return x * sigmoidOf(x); }, -6,
     6},
    {"erf", [](TensorView* x) { return erf(x); }, [](double x) { return std::erf(x); }, -3, 3},
    {"erfc", [](TensorView* x) { return erfc(x); }, [](double x) { return std::erfc(x); }, -3, 3},
    {"floor", [](TensorView* x) { return floor(x); }, [](double x) { return std::floor(x); }, -5,
     5},
    {"ceil", [](TensorView* x) { return ceil(x); }, [](double x) { return std::ceil(x); }, -5, 5},
    // torch.round: halves go to the even neighbour (nearbyint in the default rounding mode).
    {"round", [](TensorView* x) { return round(x); }, [](double x) { return std::nearbyint(x); },
     -5, 5},
    {"trunc", [](TensorView* x) { return trunc(x); }, [](double x) { return std::trunc(x); }, -5,
     5},
    {"sign", [](TensorView* x) { return sign(x); }, signOf, -3, 3},
    {"gelu", [](TensorView* x) { return gelu(x); }, geluErf, -4, 4},
    {"gelu_tanh", [](TensorView* x) { return gelu(x, GeluApproximation::Tanh); }, geluTanh, -4, 4},
};

constexpr DataType kFloatTypes[] = {DataType::Float32, DataType::Float64, DataType::Float16,
                                    DataType::BFloat16};

class UnaryFloatTest : public ::testing::TestWithParam<std::tuple<UnaryCase, DataType>> {};

TEST_P(UnaryFloatTest, MatchesCmath) {
  const auto& [op, dtype] = GetParam();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3, dtype);
  fusion.addOutput(op.build(x));

  RandomTensors random(101);
  const HostTensor input = op.min_abs > 0
                               ? random.nonZero(dtype, {3, 5, 7}, op.low, op.high, op.min_abs)
                               : random.uniform(dtype, {3, 5, 7}, op.low, op.high);
  const std::vector<HostTensor> outputs = evaluateFusionTensors(fusion, {input});
  ASSERT_EQ(outputs.size(), 1u);
  expectClose(outputs[0], {dtype, {3, 5, 7}, mapValues(valuesOf(input), op.reference)});
}

INSTANTIATE_TEST_SUITE_P(AllOps, UnaryFloatTest,
                         ::testing::Combine(::testing::ValuesIn(kFloatCases),
                                            ::testing::ValuesIn(kFloatTypes)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::string(toString(std::get<1>(info.param)));
                         });

TEST(EvaluateUnary, RoundTakesHalvesToEven) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(round(x));
  const HostTensor input = tensorOf(DataType::Float32, {6}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5});
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {6}, {0.0, 2.0, 2.0, -0.0, -2.0, -2.0}});
}

TEST(EvaluateUnary, SpecialValuesPropagate) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(exp(x));
  fusion.addOutput(sqrt(x));
  fusion.addOutput(log(x));
  fusion.addOutput(relu(x));
  const HostTensor input = tensorOf(DataType::Float32, {5}, {kNan, kInf, -kInf, 0.0, -1.0});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {5}, {kNan, kInf, 0.0, 1.0, std::exp(-1.0)}});
  expectClose(out[1], {DataType::Float32, {5}, {kNan, kInf, kNan, 0.0, kNan}});
  expectClose(out[2], {DataType::Float32, {5}, {kNan, kInf, kNan, -kInf, kNan}});
  expectClose(out[3], {DataType::Float32, {5}, {kNan, kInf, 0.0, 0.0, 0.0}});
}

// Transcendental ops on integer and bool inputs compute in float32, as PyTorch's default.
struct PromotingCase {
  const char* name;
  TensorView* (*build)(TensorView*);
  double (*reference)(double);
};

std::ostream& operator<<(std::ostream& os, const PromotingCase& c) {
  return os << c.name;
}

const PromotingCase kPromotingCases[] = {
    {"exp", [](TensorView* x) { return exp(x); }, [](double x) { return std::exp(x); }},
    {"log", [](TensorView* x) { return log(x); }, [](double x) { return std::log(x); }},
    {"sqrt", [](TensorView* x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }},
    {"sin", [](TensorView* x) { return sin(x); }, [](double x) { return std::sin(x); }},
    {"tanh", [](TensorView* x) { return tanh(x); }, [](double x) { return std::tanh(x); }},
    {"sigmoid", [](TensorView* x) { return sigmoid(x); }, sigmoidOf},
    {"erf", [](TensorView* x) { return erf(x); }, [](double x) { return std::erf(x); }},
    {"rsqrt", [](TensorView* x) { return rsqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); }},
    {"gelu", [](TensorView* x) { return gelu(x); }, geluErf},
};

class UnaryPromotionTest : public ::testing::TestWithParam<std::tuple<PromotingCase, DataType>> {};

TEST_P(UnaryPromotionTest, IntegerAndBoolInputsGiveFloat32) {
  const auto& [op, dtype] = GetParam();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
  fusion.addOutput(op.build(x));

  RandomTensors random(202);
  // Positive values keep log, sqrt and rsqrt defined.
  const HostTensor input = random.nonZero(dtype, {4, 6}, 1, 9, 1);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, {4, 6}, mapValues(valuesOf(input), op.reference)});
}

INSTANTIATE_TEST_SUITE_P(IntegerInputs, UnaryPromotionTest,
                         ::testing::Combine(::testing::ValuesIn(kPromotingCases),
                                            ::testing::Values(DataType::Int32, DataType::Int64,
                                                              DataType::Bool)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::string(toString(std::get<1>(info.param)));
                         });

// abs, neg, relu, sign and the rounding ops keep an integer input's dtype.
struct IntegerCase {
  const char* name;
  TensorView* (*build)(TensorView*);
  double (*reference)(double);
};

std::ostream& operator<<(std::ostream& os, const IntegerCase& c) {
  return os << c.name;
}

const IntegerCase kIntegerCases[] = {
    {"neg", [](TensorView* x) { return neg(x); }, [](double x) { return -x; }},
    {"abs", [](TensorView* x) { return abs(x); }, [](double x) { return std::fabs(x); }},
    {"relu", [](TensorView* x) { return relu(x); }, [](double x) { return x > 0 ? x : 0.0; }},
    {"sign", [](TensorView* x) { return sign(x); }, signOf},
    {"floor", [](TensorView* x) { return floor(x); }, [](double x) { return x; }},
    {"ceil", [](TensorView* x) { return ceil(x); }, [](double x) { return x; }},
    {"round", [](TensorView* x) { return round(x); }, [](double x) { return x; }},
    {"trunc", [](TensorView* x) { return trunc(x); }, [](double x) { return x; }},
};

class UnaryIntegerTest : public ::testing::TestWithParam<std::tuple<IntegerCase, DataType>> {};

TEST_P(UnaryIntegerTest, KeepsIntegerDtype) {
  const auto& [op, dtype] = GetParam();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
  fusion.addOutput(op.build(x));

  RandomTensors random(303);
  const HostTensor input = random.uniform(dtype, {5, 4}, -100, 100);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {dtype, {5, 4}, mapValues(valuesOf(input), op.reference)});
}

INSTANTIATE_TEST_SUITE_P(IntegerInputs, UnaryIntegerTest,
                         ::testing::Combine(::testing::ValuesIn(kIntegerCases),
                                            ::testing::Values(DataType::Int32, DataType::Int64)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::string(toString(std::get<1>(info.param)));
                         });

TEST(EvaluateUnary, Int32NegAndAbsWrapAtTheMinimum) {
  // As on the GPU: -INT32_MIN does not fit and wraps back to INT32_MIN.
  const double int32_min = std::numeric_limits<int32_t>::min();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  fusion.addOutput(neg(x));
  fusion.addOutput(abs(x));
  const HostTensor input = tensorOf(DataType::Int32, {3}, {int32_min, -5, 7});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Int32, {3}, {int32_min, 5, -7}});
  expectClose(out[1], {DataType::Int32, {3}, {int32_min, 5, 7}});
}

TEST(EvaluateUnary, IsNanIsInfIsFinite) {
  for (DataType dtype : kFloatTypes) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(isnan(x));
    fusion.addOutput(isinf(x));
    fusion.addOutput(isfinite(x));
    const HostTensor input =
        tensorOf(dtype, {2, 4}, {1.5, kNan, kInf, -kInf, -0.0, -kNan, 3.0, -2.25});
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
    expectClose(out[0], {DataType::Bool, {2, 4}, {0, 1, 0, 0, 0, 1, 0, 0}});
    expectClose(out[1], {DataType::Bool, {2, 4}, {0, 0, 1, 1, 0, 0, 0, 0}});
    expectClose(out[2], {DataType::Bool, {2, 4}, {1, 0, 0, 0, 1, 0, 1, 1}});
  }
}

TEST(EvaluateUnary, IsNanOfIntegersIsFalse) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(isnan(x));
  fusion.addOutput(isfinite(x));
  RandomTensors random(404);
  const HostTensor input = random.uniform(DataType::Int64, {9}, -50, 50);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Bool, {9}, std::vector<double>(9, 0.0)});
  expectClose(out[1], {DataType::Bool, {9}, std::vector<double>(9, 1.0)});
}

TEST(EvaluateUnary, LogicalNotOfEveryCategory) {
  const std::vector<double> values = {0.0, 2.0, -1.0, 0.0, 5.0, 1.0};
  const std::vector<double> expected = {1, 0, 0, 1, 0, 0};
  for (DataType dtype : {DataType::Float32, DataType::Float64, DataType::Float16, DataType::Int32,
                         DataType::Int64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(logical_not(x));
    const HostTensor input = tensorOf(dtype, {2, 3}, values);
    expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Bool, {2, 3}, expected});
  }
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Bool);
  fusion.addOutput(logical_not(x));
  const HostTensor input = tensorOf(DataType::Bool, {4}, {1, 0, 0, 1});
  expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Bool, {4}, {0, 1, 1, 0}});
}

TEST(EvaluateUnary, LogicalNotTreatsNanAsTrue) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(logical_not(x));
  const HostTensor input = tensorOf(DataType::Float32, {3}, {kNan, -0.0, 1e-30});
  expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Bool, {3}, {0, 1, 0}});
}

TEST(EvaluateUnary, BitwiseNotOfIntegers) {
  for (DataType dtype : {DataType::Int32, DataType::Int64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(bitwise_not(x));
    RandomTensors random(505);
    const HostTensor input = random.uniform(dtype, {3, 4}, -1000, 1000);
    // Two's complement: ~x == -x - 1.
    expectClose(evaluateFusionTensors(fusion, {input})[0],
                {dtype, {3, 4}, mapValues(valuesOf(input), [](double v) { return -v - 1; })});
  }
}

TEST(EvaluateUnary, BitwiseNotOfBoolIsLogicalNot) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Bool);
  fusion.addOutput(bitwise_not(x));
  const HostTensor input = tensorOf(DataType::Bool, {4}, {1, 0, 1, 1});
  expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Bool, {4}, {0, 1, 0, 0}});
}

TEST(EvaluateUnary, GeluFormsDifferAsDocumented) {
  // The two forms agree to ~1e-3 but not exactly; each must match its own formula.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float64);
  fusion.addOutput(gelu(x, GeluApproximation::None));
  fusion.addOutput(gelu(x, GeluApproximation::Tanh));
  const HostTensor input = tensorOf(DataType::Float64, {5}, {-3.0, -1.0, 0.0, 0.7, 2.5});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float64, {5}, mapValues(valuesOf(input), geluErf)});
  expectClose(out[1], {DataType::Float64, {5}, mapValues(valuesOf(input), geluTanh)});
  EXPECT_NE(valuesOf(out[0])[1], valuesOf(out[1])[1]);
}

// ---- casts ----

TEST(EvaluateCast, Float32ToFloat16AndBackRoundsToHalfPrecision) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(cast(cast(x, DataType::Float16), DataType::Float32));
  RandomTensors random(606);
  // A wide range: subnormal halves, ordinary values, values above 65504 that overflow to inf.
  std::vector<double> values = valuesOf(random.uniform(DataType::Float32, {40}, -3, 3));
  values.insert(values.end(), {1e-7, -3e-6, 6e-8, 2.0 / 3.0, 65504.0, 65519.0, 65520.0, 1e5, -1e6,
                               kNan, kInf, -kInf, 1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048});
  const auto count = static_cast<int64_t>(values.size());
  const HostTensor input = tensorOf(DataType::Float32, {count}, values);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32,
               {count},
               mapValues(valuesOf(input), [](double v) { return roundTo(DataType::Float16, v); })},
              test::Tolerance{});
}

TEST(EvaluateCast, Float32ToBFloat16AndBackRoundsToBFloat16Precision) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(cast(cast(x, DataType::BFloat16), DataType::Float32));
  RandomTensors random(707);
  std::vector<double> values = valuesOf(random.uniform(DataType::Float32, {40}, -300, 300));
  values.insert(values.end(), {1e-30, 3e38, -3.3e38, 1.0 + 1.0 / 256, 1.0 + 3.0 / 256, kNan, kInf});
  const auto count = static_cast<int64_t>(values.size());
  const HostTensor input = tensorOf(DataType::Float32, {count}, values);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32,
               {count},
               mapValues(valuesOf(input), [](double v) { return roundTo(DataType::BFloat16, v); })},
              test::Tolerance{});
}

TEST(EvaluateCast, ChainThroughHalfTypesRoundsAtEveryStep) {
  // float64 -> float32 -> bfloat16 -> float16 -> float64: each cast rounds what it receives.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float64);
  TensorView* y =
      cast(cast(cast(cast(x, DataType::Float32), DataType::BFloat16), DataType::Float16),
           DataType::Float64);
  fusion.addOutput(y);
  RandomTensors random(808);
  const HostTensor input = random.uniform(DataType::Float64, {64}, -100, 100);
  const std::vector<double> expected = mapValues(valuesOf(input), [](double v) {
    return roundTo(DataType::Float16, roundTo(DataType::BFloat16, roundTo(DataType::Float32, v)));
  });
  expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Float64, {64}, expected},
              test::Tolerance{});
}

TEST(EvaluateCast, FloatToIntegerTruncatesTowardZeroAndNanGivesZero) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(cast(x, DataType::Int32));
  fusion.addOutput(cast(x, DataType::Int64));
  const HostTensor input = tensorOf(DataType::Float32, {6}, {2.7, -2.7, 0.4, -0.9, kNan, 1e6});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Int32, {6}, {2, -2, 0, 0, 0, 1e6}});
  expectClose(out[1], {DataType::Int64, {6}, {2, -2, 0, 0, 0, 1e6}});
}

TEST(EvaluateCast, Int64ToInt32Wraps) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(cast(x, DataType::Int32));
  const double two32 = 4294967296.0;
  const HostTensor input =
      tensorOf(DataType::Int64, {4}, {two32 + 5, -two32 - 7, 2147483648.0, 123});
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Int32, {4}, {5, -7, -2147483648.0, 123}});
}

TEST(EvaluateCast, IntegersToFloatsRound) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(cast(x, DataType::Float16));
  fusion.addOutput(cast(x, DataType::BFloat16));
  fusion.addOutput(cast(x, DataType::Float32));
  const std::vector<double> values = {1, -3, 2049, 70000, 16777217, -257};
  const HostTensor input = tensorOf(DataType::Int64, {6}, values);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  for (auto [index, dtype] : {std::pair{0, DataType::Float16}, std::pair{1, DataType::BFloat16},
                              std::pair{2, DataType::Float32}}) {
    SCOPED_TRACE(toString(dtype));
    expectClose(out[index],
                {dtype, {6}, mapValues(values, [dtype](double v) { return roundTo(dtype, v); })},
                test::Tolerance{});
  }
}

TEST(EvaluateCast, BoolToAndFromNumbers) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* as_bool = cast(x, DataType::Bool);
  fusion.addOutput(as_bool);
  fusion.addOutput(cast(as_bool, DataType::Float32));
  fusion.addOutput(cast(as_bool, DataType::Int32));
  const HostTensor input = tensorOf(DataType::Float32, {5}, {0.0, -2.5, 1e-20, kNan, -0.0});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Bool, {5}, {0, 1, 1, 1, 0}});
  expectClose(out[1], {DataType::Float32, {5}, {0, 1, 1, 1, 0}});
  expectClose(out[2], {DataType::Int32, {5}, {0, 1, 1, 1, 0}});
}

TEST(EvaluateCast, SameDtypeIsIdentity) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  fusion.addOutput(cast(x, DataType::BFloat16));
  RandomTensors random(909);
  const HostTensor input = random.uniform(DataType::BFloat16, {3, 3});
  expectClose(evaluateFusionTensors(fusion, {input})[0], input, test::Tolerance{});
}

// ---- scalar operands ----

TEST(EvaluateUnary, ScalarInputGivesScalarOutput) {
  Fusion fusion;
  Scalar* s = makeInputScalar(fusion, DataType::Float64);
  fusion.addOutput(exp(Operand(s)));
  fusion.addOutput(cast(Operand(s), DataType::Int64));
  const std::vector<EvaluatorArgument> out = evaluateFusion(fusion, {ScalarValue(1.75)});
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<ScalarValue>(out[0]));
  ASSERT_TRUE(std::holds_alternative<ScalarValue>(out[1]));
  EXPECT_NEAR(toDouble(std::get<ScalarValue>(out[0])), std::exp(1.75), 1e-12);
  EXPECT_EQ(toInt64(std::get<ScalarValue>(out[1])), 1);
}

TEST(EvaluateUnary, ScalarResultBroadcastsIntoTensorOp) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  Scalar* s = makeInputScalar(fusion, DataType::Float64);
  fusion.addOutput(mul(x, sqrt(Operand(s))));
  RandomTensors random(1001);
  const HostTensor input = random.uniform(DataType::Float32, {3, 4});
  const std::vector<EvaluatorArgument> out = evaluateFusion(fusion, {input, ScalarValue(2.25)});
  expectClose(
      std::get<HostTensor>(out[0]),
      {DataType::Float32, {3, 4}, mapValues(valuesOf(input), [](double v) { return v * 1.5; })});
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

// signbit reads the stored sign bit: -0.0 and a nan with its sign set, in every float dtype.
TEST(EvaluateUnary, SignbitOfFloatsAndIntegers) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1}});
  TensorView* h = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1}});
  TensorView* i = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  fusion.addOutput(signbit(x));
  fusion.addOutput(signbit(h));
  fusion.addOutput(signbit(i));
  const HostTensor xs = HostTensor::empty(DataType::Float32, {6});
  const float inf = std::numeric_limits<float>::infinity();
  const float values[] = {-0.0f, 0.0f, -inf, 2.5f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  std::memcpy(xs.data(), values, sizeof(values));
  const uint32_t negative_nan = 0xffc00000u;  // a quiet nan with its sign bit set
  std::memcpy(static_cast<float*>(xs.data()) + 5, &negative_nan, sizeof(negative_nan));
  const HostTensor hs = HostTensor::empty(DataType::Float16, {3});
  const uint16_t halves[] = {0x8000, 0x0000, 0xfe00};  // -0.0, 0.0, a negative nan
  std::memcpy(hs.data(), halves, sizeof(halves));
  const std::vector<HostTensor> out = evaluateFusionTensors(
      fusion, {xs, hs, test::tensorOfIntegers(DataType::Int64, {4}, {-1, 0, 5, INT64_MIN})});
  EXPECT_EQ(out[0].dtype(), DataType::Bool);
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(valuesOf(out[2]), (std::vector<double>{1, 0, 0, 1}));
}

}  // namespace
}  // namespace braze
