// evaluateElementwise and roundToPrecision: the meaning of every elementwise op on one element.
// Expected values come from independent formulas, exact integer arithmetic in __int128, tables
// of bit patterns computed by hand (and with Python's struct module for float16), and a brute
// force search over every float16 and bfloat16 value.

#include "braze/ops/elementwise_semantics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "support/dtype_shorthands.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

using namespace test::dtypes;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();

ScalarValue run(OpKind op, std::vector<ScalarValue> inputs, DataType dtype,
                ElementwiseAttributes attributes = {}) {
  return evaluateElementwise(op, inputs, dtype, attributes);
}

// std::get checks the result is held in its dtype's category (double / int64 / bool).
double runF(OpKind op, std::vector<ScalarValue> inputs, DataType dtype = F64,
            ElementwiseAttributes attributes = {}) {
  return std::get<double>(run(op, std::move(inputs), dtype, attributes));
}
int64_t runI(OpKind op, std::vector<ScalarValue> inputs, DataType dtype = I64) {
  return std::get<int64_t>(run(op, std::move(inputs), dtype));
}
bool runB(OpKind op, std::vector<ScalarValue> inputs, DataType dtype = B) {
  return std::get<bool>(run(op, std::move(inputs), dtype));
}

/// Random doubles in [low, high] with |x| >= 0.1, never zero.
class Draw {
 public:
  explicit Draw(uint64_t seed) : engine_(seed) {}
  double real(double low, double high) {
    for (;;) {
      const double x = std::uniform_real_distribution<double>(low, high)(engine_);
      if (std::fabs(x) >= 0.1) return x;
    }
  }
  int64_t integer(int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(engine_);
  }
  int64_t nonZeroInteger(int64_t low, int64_t high) {
    for (;;) {
      const int64_t x = integer(low, high);
      if (x != 0) return x;
    }
  }
  int64_t bits64() { return static_cast<int64_t>(engine_()); }

 private:
  std::mt19937_64 engine_;
};

void expectClose(double actual, double expected, double relative = 1e-12) {
  EXPECT_NEAR(actual, expected, relative * std::max(1.0, std::fabs(expected)));
}

int64_t wrap64(__int128 value) {
  return static_cast<int64_t>(static_cast<uint64_t>(value));
}

// ---------------------------------------------------------------------------------------------
// Unary.

TEST(ElementwiseSemanticsTest, UnaryFloatOpsMatchIndependentFormulas) {
  Draw draw(11);
  for (int i = 0; i < 200; ++i) {
    const double x = draw.real(-3.0, 3.0);
    const double a = std::fabs(x);
    SCOPED_TRACE(x);
    EXPECT_EQ(runF(OpKind::Neg, {x}), 0.0 - x);
    EXPECT_EQ(runF(OpKind::Abs, {x}), x < 0 ? -x : x);
    expectClose(runF(OpKind::Exp, {x}), std::pow(2.718281828459045, x), 1e-14);
    expectClose(runF(OpKind::Exp2, {x}), std::exp(x * 0.6931471805599453));
    expectClose(runF(OpKind::Expm1, {x}), std::exp(x) - 1.0, 1e-12);
    expectClose(runF(OpKind::Log, {a}), std::log2(a) * 0.6931471805599453);
    expectClose(runF(OpKind::Log2, {a}), std::log(a) / 0.6931471805599453);
    expectClose(runF(OpKind::Log1p, {a}), std::log(1.0 + a));
    expectClose(runF(OpKind::Sqrt, {a}) * runF(OpKind::Sqrt, {a}), a);
    expectClose(runF(OpKind::Rsqrt, {a}), 1.0 / std::pow(a, 0.5));
    expectClose(runF(OpKind::Reciprocal, {x}) * x, 1.0);
    expectClose(runF(OpKind::Sin, {x}), std::cos(x - 1.5707963267948966));
    expectClose(runF(OpKind::Cos, {x}), std::sin(x + 1.5707963267948966));
    expectClose(runF(OpKind::Tan, {x}), std::sin(x) / std::cos(x), 1e-10);
    expectClose(runF(OpKind::Tanh, {x}), (std::exp(2 * x) - 1) / (std::exp(2 * x) + 1));
    const double sigmoid = 0.5 * (1.0 + std::tanh(0.5 * x));
    expectClose(runF(OpKind::Sigmoid, {x}), sigmoid);
    expectClose(runF(OpKind::Silu, {x}), x * sigmoid);
    expectClose(runF(OpKind::Erfc, {x}), 1.0 - std::erf(x));
    expectClose(runF(OpKind::Erf, {x}) + runF(OpKind::Erfc, {x}), 1.0);
    EXPECT_EQ(runF(OpKind::Relu, {x}), x > 0 ? x : 0.0);
    EXPECT_EQ(runF(OpKind::Sign, {x}), x > 0 ? 1.0 : -1.0);
    EXPECT_EQ(runF(OpKind::Floor, {x}),
              static_cast<double>(static_cast<int64_t>(x) - (x < 0 && x != std::trunc(x))));
    EXPECT_EQ(runF(OpKind::Ceil, {x}),
              static_cast<double>(static_cast<int64_t>(x) + (x > 0 && x != std::trunc(x))));
    EXPECT_EQ(runF(OpKind::Trunc, {x}), static_cast<double>(static_cast<int64_t>(x)));
  }
}

TEST(ElementwiseSemanticsTest, GeluBothForms) {
  // Values from Python's math.erf and math.tanh.
  const ElementwiseAttributes erf_form{};
  const ElementwiseAttributes tanh_form{.gelu_tanh = true};
  expectClose(runF(OpKind::Gelu, {1.0}, F64, erf_form), 0.8413447460685429, 1e-15);
  expectClose(runF(OpKind::Gelu, {-1.0}, F64, erf_form), -0.15865525393145707, 1e-15);
  expectClose(runF(OpKind::Gelu, {2.5}, F64, erf_form), 2.4844758366855597, 1e-15);
  expectClose(runF(OpKind::Gelu, {1.0}, F64, tanh_form), 0.8411919906082768, 1e-15);
  expectClose(runF(OpKind::Gelu, {-1.0}, F64, tanh_form), -0.15880800939172324, 1e-15);
  expectClose(runF(OpKind::Gelu, {-0.5}, F64, tanh_form), -0.15428599017485606, 1e-15);
  EXPECT_TRUE(std::isnan(runF(OpKind::Gelu, {kNan})));
  EXPECT_EQ(runF(OpKind::Gelu, {kInf}), kInf);
}

TEST(ElementwiseSemanticsTest, UnarySpecialValues) {
  EXPECT_EQ(runF(OpKind::Log, {0.0}), -kInf);
  EXPECT_TRUE(std::isnan(runF(OpKind::Log, {-1.0})));
  EXPECT_TRUE(std::isnan(runF(OpKind::Sqrt, {-1.0})));
  EXPECT_EQ(runF(OpKind::Rsqrt, {0.0}), kInf);
  EXPECT_EQ(runF(OpKind::Reciprocal, {0.0}), kInf);
  EXPECT_EQ(runF(OpKind::Reciprocal, {-0.0}), -kInf);
  EXPECT_EQ(runF(OpKind::Exp, {-kInf}), 0.0);
  EXPECT_EQ(runF(OpKind::Sigmoid, {-kInf}), 0.0);
  EXPECT_EQ(runF(OpKind::Sigmoid, {kInf}), 1.0);
  EXPECT_EQ(runF(OpKind::Sigmoid, {-1000.0}), 0.0);
  EXPECT_TRUE(std::isnan(runF(OpKind::Sigmoid, {kNan})));
  expectClose(runF(OpKind::Silu, {1.0}), 0.7310585786300049, 1e-15);
  // relu and sign propagate nan; relu(-0.0) is +0.0 as torch.relu.
  EXPECT_TRUE(std::isnan(runF(OpKind::Relu, {kNan})));
  EXPECT_EQ(runF(OpKind::Relu, {-kInf}), 0.0);
  EXPECT_FALSE(std::signbit(runF(OpKind::Relu, {-0.0})));
  EXPECT_TRUE(std::isnan(runF(OpKind::Sign, {kNan})));
  EXPECT_EQ(runF(OpKind::Sign, {-0.0}), 0.0);
  EXPECT_EQ(runF(OpKind::Sign, {-kInf}), -1.0);
  EXPECT_EQ(runF(OpKind::Floor, {-kInf}), -kInf);
  EXPECT_TRUE(std::isnan(runF(OpKind::Trunc, {kNan})));
}

TEST(ElementwiseSemanticsTest, RoundIsHalfToEven) {
  const double cases[][2] = {
      {0.5, 0.0},
      {1.5, 2.0},
      {2.5, 2.0},
      {3.5, 4.0},
      {-0.5, -0.0},
      {-1.5, -2.0},
      {-2.5, -2.0},
      {2.4, 2.0},
      {2.6, 3.0},
      {-2.6, -3.0},
      {0.49999999999999994, 0.0},
      {-0.49999999999999994, -0.0},
      {4503599627370497.0, 4503599627370497.0},  // 2^52 + 1 is already whole
  };
  for (const auto& c : cases) {
    const double rounded = runF(OpKind::Round, {c[0]});
    EXPECT_EQ(rounded, c[1]) << c[0];
    EXPECT_EQ(std::signbit(rounded), std::signbit(c[1])) << c[0];
  }
  EXPECT_TRUE(std::signbit(runF(OpKind::Round, {-0.3})));
  EXPECT_EQ(runF(OpKind::Round, {kInf}), kInf);
  EXPECT_TRUE(std::isnan(runF(OpKind::Round, {kNan})));
  Draw draw(12);
  for (int i = 0; i < 500; ++i) {
    // Multiples of 0.25 hit the ties often.
    const double x = std::round(draw.real(-40.0, 40.0) * 4.0) / 4.0 + (i % 2 ? 0.0 : 0.125);
    EXPECT_EQ(runF(OpKind::Round, {x}), std::nearbyint(x)) << x;  // default mode: to even
  }
}

TEST(ElementwiseSemanticsTest, FloatingOpsOfIntegerInputs) {
  expectClose(runF(OpKind::Exp, {int64_t{2}}, F32), 7.38905609893065);
  EXPECT_EQ(runF(OpKind::Sqrt, {int64_t{9}}, F32), 3.0);
  EXPECT_EQ(runF(OpKind::Reciprocal, {int64_t{4}}, F32), 0.25);
  EXPECT_EQ(runF(OpKind::Sigmoid, {false}, F32), 0.5);
}

TEST(ElementwiseSemanticsTest, UnaryIntegerOps) {
  EXPECT_EQ(runI(OpKind::Neg, {int64_t{5}}), -5);
  EXPECT_EQ(runI(OpKind::Neg, {kMin64}), kMin64);  // wraps
  EXPECT_EQ(runI(OpKind::Neg, {kMin32}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::Abs, {int64_t{-5}}), 5);
  EXPECT_EQ(runI(OpKind::Abs, {kMin64}), kMin64);
  EXPECT_EQ(runI(OpKind::Abs, {kMin32}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::Sign, {int64_t{-7}}), -1);
  EXPECT_EQ(runI(OpKind::Sign, {int64_t{0}}), 0);
  EXPECT_EQ(runI(OpKind::Sign, {int64_t{9}}, I32), 1);
  EXPECT_EQ(runI(OpKind::Relu, {int64_t{-4}}), 0);
  EXPECT_EQ(runI(OpKind::Relu, {int64_t{4}}), 4);
  for (OpKind op : {OpKind::Floor, OpKind::Ceil, OpKind::Round, OpKind::Trunc}) {
    EXPECT_EQ(runI(op, {int64_t{-7}}), -7) << op;
  }
  EXPECT_EQ(runI(OpKind::BitwiseNot, {int64_t{5}}), -6);
  EXPECT_EQ(runI(OpKind::BitwiseNot, {int64_t{-1}}, IDX), 0);
  EXPECT_FALSE(runB(OpKind::BitwiseNot, {true}));
  EXPECT_TRUE(runB(OpKind::BitwiseNot, {false}));
  EXPECT_TRUE(runB(OpKind::Abs, {true}));
}

TEST(ElementwiseSemanticsTest, ClassificationAndLogicalNot) {
  EXPECT_TRUE(runB(OpKind::IsNan, {kNan}));
  EXPECT_FALSE(runB(OpKind::IsNan, {kInf}));
  EXPECT_FALSE(runB(OpKind::IsNan, {int64_t{3}}));
  EXPECT_TRUE(runB(OpKind::IsInf, {-kInf}));
  EXPECT_FALSE(runB(OpKind::IsInf, {kNan}));
  EXPECT_FALSE(runB(OpKind::IsInf, {kMax64}));
  EXPECT_TRUE(runB(OpKind::IsFinite, {1.5}));
  EXPECT_FALSE(runB(OpKind::IsFinite, {kNan}));
  EXPECT_FALSE(runB(OpKind::IsFinite, {kInf}));
  EXPECT_TRUE(runB(OpKind::IsFinite, {int64_t{-2}}));
  EXPECT_TRUE(runB(OpKind::IsFinite, {true}));
  EXPECT_TRUE(runB(OpKind::LogicalNot, {0.0}));
  EXPECT_TRUE(runB(OpKind::LogicalNot, {-0.0}));
  EXPECT_FALSE(runB(OpKind::LogicalNot, {kNan}));  // nan is nonzero
  EXPECT_FALSE(runB(OpKind::LogicalNot, {int64_t{-2}}));
  EXPECT_TRUE(runB(OpKind::LogicalNot, {int64_t{0}}));
  EXPECT_TRUE(runB(OpKind::LogicalNot, {false}));
}

// ---------------------------------------------------------------------------------------------
// Binary arithmetic.

TEST(ElementwiseSemanticsTest, FloatArithmetic) {
  Draw draw(21);
  for (int i = 0; i < 200; ++i) {
    const double a = draw.real(-100.0, 100.0);
    const double b = draw.real(-100.0, 100.0);
    SCOPED_TRACE(std::to_string(a) + ", " + std::to_string(b));
    EXPECT_EQ(runF(OpKind::Add, {a, b}), a + b);
    EXPECT_EQ(runF(OpKind::Sub, {a, b}), a - b);
    EXPECT_EQ(runF(OpKind::Mul, {a, b}), a * b);
    EXPECT_EQ(runF(OpKind::Div, {a, b}), a / b);
    EXPECT_EQ(runF(OpKind::TrueDiv, {a, b}), a / b);
    expectClose(runF(OpKind::Atan2, {a, b}),
                std::atan(a / b) + (b < 0 ? (a < 0 ? -M_PI : M_PI) : 0));
    EXPECT_EQ(runF(OpKind::Maximum, {a, b}), a > b ? a : b);
    EXPECT_EQ(runF(OpKind::Minimum, {a, b}), a < b ? a : b);
    // Python's % takes the divisor's sign; C's fmod the dividend's.
    const double python_rem = runF(OpKind::Remainder, {a, b});
    expectClose(python_rem, a - b * std::floor(a / b), 1e-10);
    EXPECT_TRUE(python_rem == 0 || (python_rem < 0) == (b < 0));
    EXPECT_LE(std::fabs(python_rem), std::fabs(b));
    const double c_rem = runF(OpKind::Fmod, {a, b});
    expectClose(c_rem, a - b * std::trunc(a / b), 1e-10);
    EXPECT_TRUE(c_rem == 0 || (c_rem < 0) == (a < 0));
    const double positive = std::fabs(a) / 10.0;
    expectClose(runF(OpKind::Pow, {positive, b / 50.0}), std::exp(b / 50.0 * std::log(positive)),
                1e-12);
  }
}

TEST(ElementwiseSemanticsTest, FloatArithmeticEdgeCases) {
  EXPECT_EQ(runF(OpKind::Div, {1.0, 0.0}), kInf);
  EXPECT_EQ(runF(OpKind::TrueDiv, {int64_t{-1}, int64_t{0}}, F32), -kInf);
  EXPECT_EQ(runF(OpKind::TrueDiv, {int64_t{7}, int64_t{2}}, F32), 3.5);
  EXPECT_EQ(runF(OpKind::Remainder, {-7.5, 2.0}), 0.5);
  EXPECT_EQ(runF(OpKind::Remainder, {7.5, -2.0}), -0.5);
  EXPECT_EQ(runF(OpKind::Fmod, {-7.5, 2.0}), -1.5);
  EXPECT_TRUE(std::isnan(runF(OpKind::Remainder, {1.0, 0.0})));
  EXPECT_TRUE(std::isnan(runF(OpKind::Fmod, {1.0, 0.0})));
  EXPECT_EQ(runF(OpKind::Pow, {kNan, 0.0}), 1.0);
  EXPECT_EQ(runF(OpKind::Pow, {2.0, -2.0}), 0.25);
  EXPECT_TRUE(std::isnan(runF(OpKind::Pow, {-8.0, 1.0 / 3.0})));
  EXPECT_EQ(runF(OpKind::Pow, {int64_t{2}, 0.5}, F32), std::sqrt(2.0));
  EXPECT_EQ(runF(OpKind::Atan2, {int64_t{1}, int64_t{1}}, F32), M_PI / 4);
  // maximum / minimum propagate nan from either side.
  for (OpKind op : {OpKind::Maximum, OpKind::Minimum}) {
    EXPECT_TRUE(std::isnan(runF(op, {kNan, 1.0}))) << op;
    EXPECT_TRUE(std::isnan(runF(op, {1.0, kNan}))) << op;
    EXPECT_TRUE(std::isnan(runF(op, {-kInf, kNan}))) << op;
  }
  EXPECT_EQ(runF(OpKind::Maximum, {-kInf, -3.0}), -3.0);
  EXPECT_EQ(runF(OpKind::Minimum, {kInf, -3.0}), -3.0);
  // An integer operand of a float op is converted.
  EXPECT_EQ(runF(OpKind::Add, {int64_t{3}, 0.5}, F32), 3.5);
  EXPECT_EQ(runF(OpKind::Mul, {true, 2.5}, F32), 2.5);
}

TEST(ElementwiseSemanticsTest, IntegerArithmeticWraps) {
  Draw draw(22);
  for (int i = 0; i < 300; ++i) {
    const int64_t a = draw.bits64();
    const int64_t b = draw.bits64();
    EXPECT_EQ(runI(OpKind::Add, {a, b}), wrap64(__int128{a} + b));
    EXPECT_EQ(runI(OpKind::Sub, {a, b}), wrap64(__int128{a} - b));
    EXPECT_EQ(runI(OpKind::Mul, {a, b}), wrap64(__int128{a} * b));
    EXPECT_EQ(runI(OpKind::Maximum, {a, b}), a > b ? a : b);
    EXPECT_EQ(runI(OpKind::Minimum, {a, b}), a < b ? a : b);
    // int32 results wrap to 32 bits.
    const int64_t a32 = draw.integer(kMin32, kMax32);
    const int64_t b32 = draw.integer(kMin32, kMax32);
    EXPECT_EQ(runI(OpKind::Add, {a32, b32}, I32),
              static_cast<int32_t>(static_cast<uint32_t>(a32 + b32)));
    EXPECT_EQ(runI(OpKind::Mul, {a32, b32}, I32),
              static_cast<int32_t>(static_cast<uint32_t>(__int128{a32} * b32)));
  }
  EXPECT_EQ(runI(OpKind::Add, {kMax64, int64_t{1}}), kMin64);
  EXPECT_EQ(runI(OpKind::Sub, {kMin64, int64_t{1}}), kMax64);
  EXPECT_EQ(runI(OpKind::Add, {kMax32, int64_t{1}}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::Mul, {int64_t{65536}, int64_t{65536}}, I32), 0);
  EXPECT_EQ(runI(OpKind::Add, {int64_t{7}, int64_t{8}}, IDX), 15);
}

TEST(ElementwiseSemanticsTest, IntegerDivisionFamily) {
  Draw draw(23);
  for (int i = 0; i < 400; ++i) {
    const int64_t a = draw.integer(-1000, 1000);
    const int64_t b = draw.nonZeroInteger(-30, 30);
    SCOPED_TRACE(std::to_string(a) + ", " + std::to_string(b));
    const double q = static_cast<double>(a) / static_cast<double>(b);
    EXPECT_EQ(runI(OpKind::Div, {a, b}), static_cast<int64_t>(std::trunc(q)));
    EXPECT_EQ(runI(OpKind::CeilDiv, {a, b}), static_cast<int64_t>(std::ceil(q)));
    EXPECT_EQ(runI(OpKind::Remainder, {a, b}), a - b * static_cast<int64_t>(std::floor(q)));
    EXPECT_EQ(runI(OpKind::Fmod, {a, b}),
              static_cast<int64_t>(std::fmod(static_cast<double>(a), static_cast<double>(b))));
  }
  EXPECT_EQ(runI(OpKind::Div, {int64_t{-7}, int64_t{2}}), -3);
  EXPECT_EQ(runI(OpKind::Div, {int64_t{7}, int64_t{-2}}), -3);
  EXPECT_EQ(runI(OpKind::Remainder, {int64_t{-7}, int64_t{3}}), 2);
  EXPECT_EQ(runI(OpKind::Remainder, {int64_t{7}, int64_t{-3}}), -2);
  EXPECT_EQ(runI(OpKind::Remainder, {int64_t{-7}, int64_t{-3}}), -1);
  EXPECT_EQ(runI(OpKind::Fmod, {int64_t{-7}, int64_t{3}}), -1);
  EXPECT_EQ(runI(OpKind::Fmod, {int64_t{7}, int64_t{-3}}), 1);
  EXPECT_EQ(runI(OpKind::CeilDiv, {int64_t{7}, int64_t{2}}), 4);
  EXPECT_EQ(runI(OpKind::CeilDiv, {int64_t{8}, int64_t{2}}), 4);
  EXPECT_EQ(runI(OpKind::CeilDiv, {int64_t{-7}, int64_t{2}}), -3);
  // The one overflowing quotient wraps instead of trapping.
  EXPECT_EQ(runI(OpKind::Div, {kMin64, int64_t{-1}}), kMin64);
  EXPECT_EQ(runI(OpKind::Remainder, {kMin64, int64_t{-1}}), 0);
  EXPECT_EQ(runI(OpKind::Fmod, {kMin64, int64_t{-1}}), 0);
  EXPECT_EQ(runI(OpKind::CeilDiv, {kMin64, int64_t{-1}}), kMin64);
}

TEST(ElementwiseSemanticsTest, IntegerDivisionByZeroNamesTheOp) {
  for (OpKind op : {OpKind::Div, OpKind::Remainder, OpKind::Fmod, OpKind::CeilDiv}) {
    const std::string name(toString(op));
    EXPECT_TRUE(throwsError(
        [&] {
          run(op, {int64_t{5}, int64_t{0}}, I64);
        },
        {name + ": integer division by zero"}))
        << op;
  }
  EXPECT_TRUE(throwsError([] { run(OpKind::Div, {true, false}, B); }, {"div", "by zero"}));
}

TEST(ElementwiseSemanticsTest, IntegerPow) {
  Draw draw(24);
  for (int i = 0; i < 200; ++i) {
    const int64_t base = draw.integer(-6, 6);
    const int64_t exponent = draw.integer(0, 12);
    EXPECT_EQ(runI(OpKind::Pow, {base, exponent}),
              static_cast<int64_t>(std::pow(static_cast<double>(base), exponent)))
        << base << " ** " << exponent;
  }
  // Wrapping: multiply 41 times by hand.
  uint64_t expected = 1;
  for (int i = 0; i < 41; ++i) expected *= 3;
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{3}, int64_t{41}}), static_cast<int64_t>(expected));
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{2}, int64_t{63}}), kMin64);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{2}, int64_t{64}}), 0);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{0}, int64_t{0}}), 1);
  // Negative exponents: the integer part of 1 / base^-e.
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{1}, int64_t{-3}}), 1);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{-1}, int64_t{-3}}), -1);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{-1}, int64_t{-4}}), 1);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{2}, int64_t{-1}}), 0);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{-5}, int64_t{-2}}), 0);
  EXPECT_EQ(runI(OpKind::Pow, {int64_t{0}, int64_t{-1}}), 0);
}

// ---------------------------------------------------------------------------------------------
// Comparisons, logical and bitwise ops, shifts.

TEST(ElementwiseSemanticsTest, Comparisons) {
  Draw draw(31);
  for (int i = 0; i < 200; ++i) {
    const double a = draw.real(-5.0, 5.0);
    const double b = i % 3 == 0 ? a : draw.real(-5.0, 5.0);
    EXPECT_EQ(runB(OpKind::Eq, {a, b}), a == b);
    EXPECT_EQ(runB(OpKind::Ne, {a, b}), a != b);
    EXPECT_EQ(runB(OpKind::Lt, {a, b}), a < b);
    EXPECT_EQ(runB(OpKind::Le, {a, b}), a <= b);
    EXPECT_EQ(runB(OpKind::Gt, {a, b}), a > b);
    EXPECT_EQ(runB(OpKind::Ge, {a, b}), a >= b);
  }
  for (OpKind op : {OpKind::Eq, OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge}) {
    EXPECT_FALSE(runB(op, {kNan, kNan})) << op;
    EXPECT_FALSE(runB(op, {1.0, kNan})) << op;
  }
  EXPECT_TRUE(runB(OpKind::Ne, {kNan, kNan}));
  // Two int64s compare exactly, even where doubles could not tell them apart.
  const int64_t big = int64_t{1} << 53;
  EXPECT_FALSE(runB(OpKind::Eq, {big + 1, big}));
  EXPECT_TRUE(runB(OpKind::Gt, {big + 1, big}));
  EXPECT_TRUE(runB(OpKind::Lt, {int64_t{1}, 1.5}));
  EXPECT_TRUE(runB(OpKind::Eq, {true, int64_t{1}}));
  EXPECT_TRUE(runB(OpKind::Ge, {int64_t{2}, true}));
}

TEST(ElementwiseSemanticsTest, LogicalOpsTreatNonzeroAsTrue) {
  const ScalarValue truthy[] = {true, int64_t{-3}, 0.5, kNan, -kInf};
  const ScalarValue falsy[] = {false, int64_t{0}, 0.0, -0.0};
  for (const ScalarValue& t : truthy) {
    for (const ScalarValue& f : falsy) {
      EXPECT_FALSE(runB(OpKind::LogicalAnd, {t, f}));
      EXPECT_TRUE(runB(OpKind::LogicalAnd, {t, t}));
      EXPECT_TRUE(runB(OpKind::LogicalOr, {f, t}));
      EXPECT_FALSE(runB(OpKind::LogicalOr, {f, f}));
      EXPECT_TRUE(runB(OpKind::LogicalXor, {t, f}));
      EXPECT_FALSE(runB(OpKind::LogicalXor, {t, t}));
      EXPECT_FALSE(runB(OpKind::LogicalXor, {f, f}));
    }
  }
}

TEST(ElementwiseSemanticsTest, BitwiseOps) {
  Draw draw(32);
  for (int i = 0; i < 100; ++i) {
    const int64_t a = draw.bits64();
    const int64_t b = draw.bits64();
    const auto ua = static_cast<uint64_t>(a);
    const auto ub = static_cast<uint64_t>(b);
    EXPECT_EQ(runI(OpKind::BitwiseAnd, {a, b}), static_cast<int64_t>(ua & ub));
    EXPECT_EQ(runI(OpKind::BitwiseOr, {a, b}), static_cast<int64_t>(ua | ub));
    EXPECT_EQ(runI(OpKind::BitwiseXor, {a, b}), static_cast<int64_t>(ua ^ ub));
    EXPECT_EQ(runI(OpKind::BitwiseNot, {a}), static_cast<int64_t>(~ua));
  }
  // On bools the bitwise ops act logically.
  for (bool a : {false, true}) {
    for (bool b : {false, true}) {
      EXPECT_EQ(runB(OpKind::BitwiseAnd, {a, b}), a && b);
      EXPECT_EQ(runB(OpKind::BitwiseOr, {a, b}), a || b);
      EXPECT_EQ(runB(OpKind::BitwiseXor, {a, b}), a != b);
    }
  }
}

TEST(ElementwiseSemanticsTest, Shifts) {
  Draw draw(33);
  for (int i = 0; i < 100; ++i) {
    const int64_t a = draw.bits64();
    const int64_t s = draw.integer(0, 62);
    EXPECT_EQ(runI(OpKind::LeftShift, {a, s}), wrap64(__int128{a} * (__int128{1} << s)));
    // Arithmetic right shift is floor division by 2^s.
    const __int128 divisor = __int128{1} << s;
    __int128 floor_quotient = __int128{a} / divisor;
    if (__int128{a} % divisor != 0 && a < 0) floor_quotient -= 1;
    EXPECT_EQ(runI(OpKind::RightShift, {a, s}), static_cast<int64_t>(floor_quotient));
  }
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{1}, int64_t{63}}), kMin64);
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{1}, int64_t{64}}), 0);
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{1}, int64_t{100}}), 0);
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{1}, int64_t{-1}}), 0);
  EXPECT_EQ(runI(OpKind::RightShift, {int64_t{-8}, int64_t{1}}), -4);
  EXPECT_EQ(runI(OpKind::RightShift, {int64_t{-8}, int64_t{64}}), -1);
  EXPECT_EQ(runI(OpKind::RightShift, {int64_t{8}, int64_t{70}}), 0);
  EXPECT_EQ(runI(OpKind::RightShift, {int64_t{-5}, int64_t{-1}}), -1);
  EXPECT_EQ(runI(OpKind::RightShift, {int64_t{5}, int64_t{-1}}), 0);
  // int32: shifts past the width behave as on an int32 register.
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{1}, int64_t{31}}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{1}, int64_t{32}}, I32), 0);
  EXPECT_EQ(runI(OpKind::LeftShift, {int64_t{3}, int64_t{40}}, I32), 0);
  EXPECT_EQ(runI(OpKind::RightShift, {kMin32, int64_t{31}}, I32), -1);
  EXPECT_EQ(runI(OpKind::RightShift, {kMin32, int64_t{40}}, I32), -1);
  EXPECT_EQ(runI(OpKind::RightShift, {kMax32, int64_t{40}}, I32), 0);
}

TEST(ElementwiseSemanticsTest, LogicalRightShiftFillsWithZeros) {
  Draw draw(34);
  for (int i = 0; i < 100; ++i) {
    const int64_t a = draw.bits64();
    const int64_t s = draw.integer(0, 63);
    EXPECT_EQ(runI(OpKind::LogicalRightShift, {a, s}),
              static_cast<int64_t>(static_cast<uint64_t>(a) >> s));
  }
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-8}, int64_t{0}}), -8);  // a zero shift
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{1}}), kMax64);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{63}}), 1);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {kMin64, int64_t{63}}), 1);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{16}, int64_t{4}}), 1);
  // Counts outside [0, 64) give 0, whatever the sign of a (right_shift gives -1 for a < 0).
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{64}}), 0);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{1000}}), 0);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{-1}}), 0);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{5}, kMin64}), 0);
  EXPECT_EQ(runI(OpKind::RightShift, {int64_t{-1}, int64_t{64}}), -1);
  // int32: the 32 bits of an int32 register.
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{28}}, I32), 15);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{0}}, I32), -1);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {kMin32, int64_t{31}}, I32), 1);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{1}}, I32), kMax32);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{-1}, int64_t{32}}, I32), 0);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {kMax32, int64_t{40}}, I32), 0);
  EXPECT_EQ(runI(OpKind::LogicalRightShift, {int64_t{7}, int64_t{-3}}, I32), 0);
}

TEST(ElementwiseSemanticsTest, GcdIsNonNegativeAndTotal) {
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{12}, int64_t{18}}), 6);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{-12}, int64_t{18}}), 6);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{12}, int64_t{-18}}), 6);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{-12}, int64_t{-18}}), 6);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{0}, int64_t{0}}), 0);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{0}, int64_t{-7}}), 7);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{-7}, int64_t{0}}), 7);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{17}, int64_t{5}}), 1);
  EXPECT_EQ(runI(OpKind::Gcd, {kMax64, kMax64}), kMax64);
  // INT64_MIN: its magnitude 2^63 is taken as unsigned, no undefined behavior.
  EXPECT_EQ(runI(OpKind::Gcd, {kMin64, int64_t{6}}), 2);
  EXPECT_EQ(runI(OpKind::Gcd, {kMin64, int64_t{-3}}), 1);
  EXPECT_EQ(runI(OpKind::Gcd, {kMin64, int64_t{1} << 40}), int64_t{1} << 40);
  EXPECT_EQ(runI(OpKind::Gcd, {kMin64, kMax64}), 1);
  // The one result that does not fit, 2^63, wraps to INT64_MIN (two's complement).
  EXPECT_EQ(runI(OpKind::Gcd, {kMin64, int64_t{0}}), kMin64);
  EXPECT_EQ(runI(OpKind::Gcd, {kMin64, kMin64}), kMin64);
  // int32 results: 2^31 wraps to INT32_MIN the same way.
  EXPECT_EQ(runI(OpKind::Gcd, {kMin32, int64_t{6}}, I32), 2);
  EXPECT_EQ(runI(OpKind::Gcd, {kMin32, int64_t{0}}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::Gcd, {int64_t{-24}, int64_t{36}}, I32), 12);
  Draw draw(35);
  for (int i = 0; i < 100; ++i) {
    const int64_t a = draw.integer(-100000, 100000);
    const int64_t b = draw.integer(-100000, 100000);
    EXPECT_EQ(runI(OpKind::Gcd, {a, b}), std::gcd(a, b)) << a << ", " << b;
  }
}

TEST(ElementwiseSemanticsTest, NextafterStepsOneUlpOfTheResultDtype) {
  EXPECT_EQ(runF(OpKind::Nextafter, {1.0, 2.0}), std::nextafter(1.0, 2.0));
  EXPECT_EQ(runF(OpKind::Nextafter, {1.0, 2.0}), 1.0 + 0x1p-52);
  EXPECT_EQ(runF(OpKind::Nextafter, {1.0, 0.0}), 1.0 - 0x1p-53);
  // float32 steps by a float32 ulp (nextafterf), not a float64 one.
  EXPECT_EQ(runF(OpKind::Nextafter, {1.0, 2.0}, F32), 1.0 + 0x1p-23);
  EXPECT_EQ(runF(OpKind::Nextafter, {1.0, -2.0}, F32), 1.0 - 0x1p-24);
  EXPECT_EQ(runF(OpKind::Nextafter, {0.0, 1.0}, F32),
            static_cast<double>(std::numeric_limits<float>::denorm_min()));
  EXPECT_EQ(runF(OpKind::Nextafter, {0.0, -1.0}), -std::numeric_limits<double>::denorm_min());
  // a == b gives b: the sign of zero comes from b.
  const double from_negative_zero = runF(OpKind::Nextafter, {-0.0, 0.0});
  EXPECT_EQ(from_negative_zero, 0.0);
  EXPECT_FALSE(std::signbit(from_negative_zero));
  EXPECT_TRUE(std::signbit(runF(OpKind::Nextafter, {0.0, -0.0}, F32)));
  EXPECT_EQ(runF(OpKind::Nextafter, {2.0, 2.0}), 2.0);
  // nan in either gives nan; inf steps to the largest finite value and back.
  EXPECT_TRUE(std::isnan(runF(OpKind::Nextafter, {kNan, 1.0})));
  EXPECT_TRUE(std::isnan(runF(OpKind::Nextafter, {1.0, kNan}, F32)));
  EXPECT_EQ(runF(OpKind::Nextafter, {kInf, 0.0}), std::numeric_limits<double>::max());
  EXPECT_EQ(runF(OpKind::Nextafter, {kInf, 0.0}, F32),
            static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(runF(OpKind::Nextafter, {std::numeric_limits<double>::max(), kInf}), kInf);
  EXPECT_EQ(runF(OpKind::Nextafter, {-kInf, kInf}), std::numeric_limits<double>::lowest());
}

TEST(ElementwiseSemanticsTest, SignbitIsTheSignBit) {
  EXPECT_TRUE(runB(OpKind::Signbit, {-0.0}));
  EXPECT_FALSE(runB(OpKind::Signbit, {0.0}));
  EXPECT_TRUE(runB(OpKind::Signbit, {-1.5}));
  EXPECT_FALSE(runB(OpKind::Signbit, {1.5}));
  EXPECT_TRUE(runB(OpKind::Signbit, {-kInf}));
  EXPECT_FALSE(runB(OpKind::Signbit, {kInf}));
  EXPECT_FALSE(runB(OpKind::Signbit, {kNan}));
  EXPECT_TRUE(runB(OpKind::Signbit, {-kNan}));
  EXPECT_TRUE(runB(OpKind::Signbit, {std::copysign(kNan, -1.0)}));
  EXPECT_TRUE(runB(OpKind::Signbit, {-std::numeric_limits<double>::denorm_min()}));
  // Integers: x < 0.
  EXPECT_TRUE(runB(OpKind::Signbit, {int64_t{-1}}));
  EXPECT_TRUE(runB(OpKind::Signbit, {kMin64}));
  EXPECT_FALSE(runB(OpKind::Signbit, {int64_t{0}}));
  EXPECT_FALSE(runB(OpKind::Signbit, {kMax64}));
}

// ---------------------------------------------------------------------------------------------
// Ternary.

TEST(ElementwiseSemanticsTest, Where) {
  EXPECT_EQ(runF(OpKind::Where, {true, 1.5, -2.5}), 1.5);
  EXPECT_EQ(runF(OpKind::Where, {false, 1.5, -2.5}), -2.5);
  EXPECT_EQ(runF(OpKind::Where, {true, int64_t{3}, 0.5}, F32), 3.0);
  EXPECT_EQ(runI(OpKind::Where, {false, int64_t{3}, int64_t{-4}}), -4);
  EXPECT_TRUE(runB(OpKind::Where, {true, true, false}));
  EXPECT_TRUE(std::isnan(runF(OpKind::Where, {true, kNan, 0.0})));
}

TEST(ElementwiseSemanticsTest, Clamp) {
  Draw draw(41);
  for (int i = 0; i < 100; ++i) {
    const double x = draw.real(-10.0, 10.0);
    const double lo = draw.real(-5.0, 0.0);
    const double hi = draw.real(0.0, 5.0);
    EXPECT_EQ(runF(OpKind::Clamp, {x, lo, hi}), x < lo ? lo : (x > hi ? hi : x));
    const int64_t xi = draw.integer(-100, 100);
    EXPECT_EQ(runI(OpKind::Clamp, {xi, int64_t{-10}, int64_t{20}}),
              xi < -10 ? -10 : (xi > 20 ? 20 : xi));
  }
  EXPECT_TRUE(std::isnan(runF(OpKind::Clamp, {kNan, 0.0, 1.0})));
  EXPECT_TRUE(std::isnan(runF(OpKind::Clamp, {0.5, kNan, 1.0})));
  EXPECT_TRUE(std::isnan(runF(OpKind::Clamp, {0.5, 0.0, kNan})));
  EXPECT_EQ(runF(OpKind::Clamp, {0.5, 2.0, 1.0}), 1.0);  // lo > hi gives hi
  EXPECT_EQ(runI(OpKind::Clamp, {int64_t{0}, int64_t{5}, int64_t{3}}), 3);
  EXPECT_EQ(runF(OpKind::Clamp, {int64_t{7}, 0.5, 6.5}, F32), 6.5);
}

TEST(ElementwiseSemanticsTest, LerpAsTorch) {
  Draw draw(42);
  for (int i = 0; i < 200; ++i) {
    const double start = draw.real(-10.0, 10.0);
    const double end = draw.real(-10.0, 10.0);
    const double weight = draw.real(-1.0, 2.0);
    const double diff = end - start;
    // torch.lerp's two forms, switching at |weight| = 0.5.
    const double expected =
        std::fabs(weight) < 0.5 ? start + weight * diff : end - diff * (1.0 - weight);
    EXPECT_EQ(runF(OpKind::Lerp, {start, end, weight}), expected);
    expectClose(runF(OpKind::Lerp, {start, end, weight}), start + weight * diff, 1e-12);
    // The ends are exact.
    EXPECT_EQ(runF(OpKind::Lerp, {start, end, 0.0}), start);
    EXPECT_EQ(runF(OpKind::Lerp, {start, end, 1.0}), end);
  }
  EXPECT_EQ(runF(OpKind::Lerp, {1.0, 3.0, 0.5}), 2.0);
  EXPECT_EQ(runF(OpKind::Lerp, {0.1, 0.7, -0.75}), 0.7 - (0.7 - 0.1) * 1.75);
}

TEST(ElementwiseSemanticsTest, Addcmul) {
  Draw draw(43);
  for (int i = 0; i < 100; ++i) {
    const double x = draw.real(-10.0, 10.0);
    const double t1 = draw.real(-10.0, 10.0);
    const double t2 = draw.real(-10.0, 10.0);
    const double value = draw.real(-2.0, 2.0);
    EXPECT_EQ(runF(OpKind::Addcmul, {x, t1, t2, value}), x + value * t1 * t2);
    const int64_t a = draw.bits64();
    const int64_t b = draw.bits64();
    const int64_t c = draw.bits64();
    const int64_t v = draw.integer(-3, 3);
    EXPECT_EQ(runI(OpKind::Addcmul, {a, b, c, v}),
              wrap64(__int128{a} + __int128{wrap64(__int128{v} * b)} * c));
  }
  EXPECT_EQ(runF(OpKind::Addcmul, {int64_t{1}, int64_t{2}, int64_t{3}, 0.5}, F32), 4.0);
}

// ---------------------------------------------------------------------------------------------
// Rounding to narrow floats.

double decodeFloat16(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude = 0;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    magnitude = mantissa != 0 ? kNan : kInf;
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

double decodeBFloat16(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

struct RoundingCase {
  double value;
  uint16_t bits;
};

void expectRoundsTo(DataType dtype, double value, double expected) {
  const double rounded = roundToPrecision(value, dtype);
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(rounded)) << value;
    return;
  }
  EXPECT_EQ(rounded, expected) << toString(dtype) << " of " << value;
  EXPECT_EQ(std::signbit(rounded), std::signbit(expected)) << value;
  // Cast rounds the same way.
  EXPECT_EQ(std::get<double>(run(OpKind::Cast, {value}, dtype)), expected) << value;
}

TEST(ElementwiseSemanticsTest, Float16RoundingTable) {
  // Bit patterns from Python: struct.unpack('<H', struct.pack('<e', value)).
  const RoundingCase cases[] = {
      {0.1, 0x2e66},
      {1.0 / 3.0, 0x3555},
      {-2.0 / 3.0, 0xb955},
      {65504.0, 0x7bff},
      {65519.99, 0x7bff},
      {1e-5, 0x00a8},                     // subnormal
      {0x1p-25, 0x0000},                  // half the smallest subnormal: ties to 0
      {0x1p-25 * (1 + 0x1p-30), 0x0001},  // just above the tie
      {3 * 0x1p-26, 0x0001},
      {5.5 * 0x1p-24, 0x0006},  // subnormal tie to even (up)
      {6.5 * 0x1p-24, 0x0006},  // subnormal tie to even (down)
      {1e-8, 0x0000},
      {-2.5e-6, 0x802a},
      {1 + 0x1p-11, 0x3c00},            // tie to even
      {1 + 3 * 0x1p-11, 0x3c02},        // tie to even (up)
      {1 + 0x1p-11 + 0x1p-40, 0x3c01},  // via float32 this would tie and go down
      {2049.0, 0x6800},
      {6.103515625e-05, 0x0400},  // smallest normal
      {6.1e-05, 0x03ff},          // largest subnormal
      {3.14159265358979, 0x4248},
      {1000.7, 0x63d1},
      {-0.0, 0x8000},
  };
  for (const RoundingCase& c : cases) expectRoundsTo(F16, c.value, decodeFloat16(c.bits));
  expectRoundsTo(F16, 65520.0, kInf);  // the tie between 65504 and 2^16 overflows
  expectRoundsTo(F16, -65520.0, -kInf);
  expectRoundsTo(F16, 1e300, kInf);
  expectRoundsTo(F16, -kInf, -kInf);
  expectRoundsTo(F16, kNan, kNan);
  expectRoundsTo(F16, -1e-300, -0.0);
}

TEST(ElementwiseSemanticsTest, BFloat16RoundingTable) {
  // Bit patterns from an exact (rational arithmetic) nearest-even search over all bfloat16s.
  const RoundingCase cases[] = {
      {0.1, 0x3dcd},
      {1.0 / 3.0, 0x3eab},
      {-2.0 / 3.0, 0xbf2b},
      {1 + 0x1p-8, 0x3f80},            // tie to even
      {1 + 3 * 0x1p-8, 0x3f82},        // tie to even (up)
      {1 + 0x1p-8 + 0x1p-30, 0x3f81},  // via float32 this would tie and go down
      {3.14159265358979, 0x4049},
      {3.3895313892515355e38, 0x7f7f},  // largest finite
      {3.39e38, 0x7f7f},
      {3.3961e38, 0x7f7f},
      {0x1p-133, 0x0001},  // smallest subnormal
      {0x1p-134, 0x0000},  // tie to 0
      {1.5 * 0x1p-134, 0x0001},
      {1e-40, 0x0001},
      {-1e-39, 0x800b},
      {0x1p-126 * (1 + 0x1p-8), 0x0080},  // smallest normal, tie to even
      {65504.0, 0x4780},
      {1000.7, 0x447a},
      {-0.0, 0x8000},
  };
  for (const RoundingCase& c : cases) expectRoundsTo(BF16, c.value, decodeBFloat16(c.bits));
  expectRoundsTo(BF16, 3.3962e38, kInf);
  expectRoundsTo(BF16, -1e39, -kInf);
  expectRoundsTo(BF16, kNan, kNan);
}

/// The nearest of `values` (every finite non-negative value of a format, by bit pattern) to
/// `value`, ties to the even bit pattern; `overflow` is where rounding reaches inf.
double bruteForceRound(const std::vector<std::pair<double, uint16_t>>& values, double overflow,
                       double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= overflow) return std::copysign(kInf, value);
  auto above =
      std::lower_bound(values.begin(), values.end(), std::make_pair(magnitude, uint16_t{0}));
  double result = 0;
  if (above == values.end()) {
    result = values.back().first;
  } else if (above->first == magnitude || above == values.begin()) {
    result = above->first;
  } else {
    const auto below = above - 1;
    const double down = magnitude - below->first;
    const double up = above->first - magnitude;
    if (down < up || (down == up && below->second % 2 == 0)) {
      result = below->first;
    } else {
      result = above->first;
    }
  }
  return std::copysign(result, value);
}

std::vector<std::pair<double, uint16_t>> finiteValues(double (*decode)(uint16_t)) {
  std::vector<std::pair<double, uint16_t>> values;
  for (uint32_t bits = 0; bits < 0x8000; ++bits) {
    const double value = decode(static_cast<uint16_t>(bits));
    if (std::isfinite(value)) values.emplace_back(value, static_cast<uint16_t>(bits));
  }
  std::sort(values.begin(), values.end());
  return values;
}

TEST(ElementwiseSemanticsTest, RandomRoundingMatchesBruteForce) {
  const auto halves = finiteValues(decodeFloat16);
  const auto bfloats = finiteValues(decodeBFloat16);
  const double half_overflow = 65520.0;
  const double bfloat_overflow = 0x1.ffp127;
  Draw draw(51);
  for (int i = 0; i < 3000; ++i) {
    // Magnitudes across the whole range of each format, subnormals included.
    const double mantissa = draw.real(-2.0, 2.0);
    const double value_half = std::ldexp(mantissa, static_cast<int>(draw.integer(-27, 17)));
    EXPECT_EQ(roundToPrecision(value_half, F16), bruteForceRound(halves, half_overflow, value_half))
        << value_half;
    const double value_bf = std::ldexp(mantissa, static_cast<int>(draw.integer(-136, 129)));
    EXPECT_EQ(roundToPrecision(value_bf, BF16), bruteForceRound(bfloats, bfloat_overflow, value_bf))
        << value_bf;
    // A float32 value one bit-pattern tie away: exercise exact ties.
    const float f = static_cast<float>(mantissa);
    const double tie = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, 4.0f))) / 2;
    EXPECT_EQ(roundToPrecision(tie, BF16), bruteForceRound(bfloats, bfloat_overflow, tie)) << tie;
    EXPECT_EQ(roundToPrecision(tie, F16), bruteForceRound(halves, half_overflow, tie)) << tie;
  }
}

TEST(ElementwiseSemanticsTest, RoundToFloat32AndIdentities) {
  EXPECT_EQ(roundToPrecision(0.1, F32), 0.100000001490116119384765625);
  EXPECT_EQ(roundToPrecision(1 + 0x1p-24, F32), 1.0);              // tie to even
  EXPECT_EQ(roundToPrecision(1 + 3 * 0x1p-24, F32), 1 + 0x1p-22);  // tie to even (up)
  EXPECT_EQ(roundToPrecision(1e39, F32), kInf);
  EXPECT_EQ(roundToPrecision(0x1p-149, F32), 0x1p-149);  // smallest subnormal
  EXPECT_EQ(roundToPrecision(0x1p-150, F32), 0.0);
  EXPECT_TRUE(std::isnan(roundToPrecision(kNan, F32)));
  EXPECT_EQ(roundToPrecision(0.1, F64), 0.1);
  EXPECT_EQ(roundToPrecision(0.1, I64), 0.1);
  EXPECT_EQ(roundToPrecision(2.7, B), 2.7);
}

// ---------------------------------------------------------------------------------------------
// Cast.

TEST(ElementwiseSemanticsTest, CastFloatToInteger) {
  EXPECT_EQ(runI(OpKind::Cast, {2.7}, I32), 2);
  EXPECT_EQ(runI(OpKind::Cast, {-2.7}, I32), -2);
  EXPECT_EQ(runI(OpKind::Cast, {-2.7}, I64), -2);
  EXPECT_EQ(runI(OpKind::Cast, {kNan}, I32), 0);
  EXPECT_EQ(runI(OpKind::Cast, {kNan}, I64), 0);
  EXPECT_EQ(runI(OpKind::Cast, {1e20}, I32), kMax32);
  EXPECT_EQ(runI(OpKind::Cast, {-1e20}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::Cast, {kInf}, I32), kMax32);
  EXPECT_EQ(runI(OpKind::Cast, {2147483647.9}, I32), kMax32);
  EXPECT_EQ(runI(OpKind::Cast, {1e30}, I64), kMax64);
  EXPECT_EQ(runI(OpKind::Cast, {-kInf}, I64), kMin64);
  EXPECT_EQ(runI(OpKind::Cast, {-9.5}, IDX), -9);
}

TEST(ElementwiseSemanticsTest, CastBetweenIntegersWrapsAndBoolsAreNonzero) {
  EXPECT_EQ(runI(OpKind::Cast, {(int64_t{1} << 32) + 5}, I32), 5);
  EXPECT_EQ(runI(OpKind::Cast, {int64_t{1} << 31}, I32), kMin32);
  EXPECT_EQ(runI(OpKind::Cast, {int64_t{-1}}, I32), -1);
  EXPECT_EQ(runI(OpKind::Cast, {kMin64}, I64), kMin64);
  EXPECT_EQ(runI(OpKind::Cast, {true}, I32), 1);
  EXPECT_TRUE(runB(OpKind::Cast, {kNan}));
  EXPECT_TRUE(runB(OpKind::Cast, {-0.25}));
  EXPECT_FALSE(runB(OpKind::Cast, {-0.0}));
  EXPECT_TRUE(runB(OpKind::Cast, {int64_t{-2}}));
  EXPECT_FALSE(runB(OpKind::Cast, {int64_t{0}}));
  EXPECT_EQ(runF(OpKind::Cast, {true}, F16), 1.0);
  EXPECT_EQ(runF(OpKind::Cast, {false}, BF16), 0.0);
}

TEST(ElementwiseSemanticsTest, CastIntegerToFloatRoundsOnce) {
  const int64_t two24 = int64_t{1} << 24;
  EXPECT_EQ(runF(OpKind::Cast, {two24 + 1}, F32), static_cast<double>(two24));  // tie to even
  EXPECT_EQ(runF(OpKind::Cast, {two24 + 3}, F32), static_cast<double>(two24 + 4));
  EXPECT_EQ(runF(OpKind::Cast, {-(two24 + 3)}, F32), -static_cast<double>(two24 + 4));
  EXPECT_EQ(runF(OpKind::Cast, {kMax64}, F32), 0x1p63);
  EXPECT_EQ(runF(OpKind::Cast, {kMin64}, F32), -0x1p63);
  const int64_t two53 = int64_t{1} << 53;
  EXPECT_EQ(runF(OpKind::Cast, {two53 + 1}, F64), 0x1p53);
  EXPECT_EQ(runF(OpKind::Cast, {two53 + 3}, F64), 0x1p53 + 4);
  // 2^62 + 2^54 + 1 is just above a bfloat16 tie; through a double it would land on the tie
  // and round down to 2^62.
  EXPECT_EQ(runF(OpKind::Cast, {(int64_t{1} << 62) + (int64_t{1} << 54) + 1}, BF16),
            0x1p62 + 0x1p55);
  EXPECT_EQ(runF(OpKind::Cast, {(int64_t{1} << 62) + (int64_t{1} << 54)}, BF16), 0x1p62);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{257}}, BF16), 256.0);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{259}}, BF16), 260.0);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{2049}}, F16), 2048.0);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{2051}}, F16), 2052.0);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{65519}}, F16), 65504.0);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{65520}}, F16), kInf);
  EXPECT_EQ(runF(OpKind::Cast, {int64_t{-65520}}, F16), -kInf);
  EXPECT_EQ(runF(OpKind::Cast, {kMax64}, F16), kInf);
}

TEST(ElementwiseSemanticsTest, CastChainsMatchStoringEachStep) {
  // float64 -> float32 -> float16 rounds twice; each step is what a store would do.
  const double value = 1 + 0x1p-11 + 0x1p-40;
  const double as_float = runF(OpKind::Cast, {value}, F32);
  EXPECT_EQ(as_float, 1 + 0x1p-11);
  EXPECT_EQ(runF(OpKind::Cast, {as_float}, F16), 1.0);
  EXPECT_EQ(runF(OpKind::Cast, {value}, F16), 1 + 0x1p-10);
  EXPECT_EQ(runF(OpKind::Cast, {0.1}, F64), 0.1);
}

// ---------------------------------------------------------------------------------------------
// Misuse by callers is an internal error, never a crash.

TEST(ElementwiseSemanticsTest, RejectsNonElementwiseOpsAndWrongArity) {
  EXPECT_TRUE(throwsError([] { run(OpKind::Sum, {1.0}, F64); }, {"sum", "please report"}));
  EXPECT_TRUE(throwsError([] { run(OpKind::Add, {1.0}, F64); },
                          {"add takes 2 inputs, got 1", "please report"}));
  EXPECT_TRUE(throwsError(
      [] {
        run(OpKind::Addcmul, {1.0, 2.0, 3.0}, F64);
      },
      {"addcmul takes 4 inputs, got 3"}));
}

}  // namespace
}  // namespace braze
