// uniform and normal through the reference evaluator: Random123's known answer for
// Philox-4x32-10, the row-major counter, reproducibility by (seed, offset), the half-open range,
// rounding to 16-bit dtypes, and the distributions' moments.

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::valuesOf;

// Philox-4x32-10 of counter 0 under key 0 (Random123's kat_vectors).
constexpr uint32_t kZeroWords[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};

double unitDouble(uint32_t high, uint32_t low) {
  return static_cast<double>(((uint64_t{high} << 32) | low) >> 11) * 0x1p-53;
}

std::vector<double> drawn(TensorView* (*op)(Fusion&, const std::vector<Operand>&, Operand, Operand,
                                            DataType, std::optional<Operand>,
                                            std::optional<Operand>),
                          std::vector<Operand> shape, double a, double b, DataType dtype,
                          int64_t seed, int64_t offset) {
  Fusion fusion;
  fusion.addOutput(op(fusion, shape, a, b, dtype, seed, offset));
  return valuesOf(evaluateFusionTensors(fusion, {})[0]);
}

TEST(EvaluateRandom, ElementZeroIsPhiloxOfTheZeroCounter) {
  const std::vector<double> single = drawn(uniform, {1}, 0.0, 1.0, DataType::Float32, 0, 0);
  EXPECT_EQ(single[0], static_cast<double>(kZeroWords[0] >> 8) * 0x1p-24);
  const std::vector<double> wide = drawn(uniform, {1}, 0.0, 1.0, DataType::Float64, 0, 0);
  EXPECT_EQ(wide[0], unitDouble(kZeroWords[0], kZeroWords[1]));
  // Box-Muller of the four words (float64 uses all of them).
  const double u1 = 1.0 - unitDouble(kZeroWords[0], kZeroWords[1]);
  const double u2 = unitDouble(kZeroWords[2], kZeroWords[3]);
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  const std::vector<double> gauss = drawn(normal, {1}, 1.0, 3.0, DataType::Float64, 0, 0);
  EXPECT_NEAR(gauss[0], 1.0 + 3.0 * z, 1e-14);
}

TEST(EvaluateRandom, ElementsFollowTheRowMajorLinearIndex) {
  // Element (i, j) of a [4, 5] tensor is element 5 i + j of a [20] one with the same seed.
  EXPECT_EQ(drawn(uniform, {4, 5}, -2.0, 2.0, DataType::Float32, 9, 4),
            drawn(uniform, {20}, -2.0, 2.0, DataType::Float32, 9, 4));
  EXPECT_EQ(drawn(normal, {2, 3, 4}, 0.0, 1.0, DataType::Float64, 9, 4),
            drawn(normal, {24}, 0.0, 1.0, DataType::Float64, 9, 4));
}

TEST(EvaluateRandom, SeedAndOffsetSelectTheStream) {
  const std::vector<double> base = drawn(uniform, {64}, 0.0, 1.0, DataType::Float32, 5, 0);
  EXPECT_EQ(base, drawn(uniform, {64}, 0.0, 1.0, DataType::Float32, 5, 0));
  for (const auto& [seed, offset] : {std::pair{5, 1}, std::pair{6, 0}}) {
    const std::vector<double> other =
        drawn(uniform, {64}, 0.0, 1.0, DataType::Float32, seed, offset);
    int equal = 0;
    for (size_t k = 0; k < base.size(); ++k) equal += base[k] == other[k] ? 1 : 0;
    EXPECT_LE(equal, 1) << "seed " << seed << ", offset " << offset;
  }
  // Without rng_seed and rng_offset: seed 0, offset 0.
  Fusion fusion;
  fusion.addOutput(uniform(fusion, {64}, 0.0, 1.0));
  EXPECT_EQ(valuesOf(evaluateFusionTensors(fusion, {})[0]),
            drawn(uniform, {64}, 0.0, 1.0, DataType::Float32, 0, 0));
}

TEST(EvaluateRandom, SeedAndOffsetFromScalarInputs) {
  Fusion fusion;
  Scalar* seed = makeInputScalar(fusion, DataType::Int64);
  Scalar* offset = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(normal(fusion, {3, 7}, 0.0, 1.0, DataType::Float32, seed, offset));
  const int64_t big_offset = int64_t{1} << 40;  // the counter's high offset word
  const std::vector<EvaluatorArgument> out =
      evaluateFusion(fusion, {ScalarValue(int64_t{-3}), ScalarValue(big_offset)});
  EXPECT_EQ(valuesOf(std::get<HostTensor>(out[0])),
            drawn(normal, {3, 7}, 0.0, 1.0, DataType::Float32, -3, big_offset));
  EXPECT_NE(valuesOf(std::get<HostTensor>(out[0])),
            drawn(normal, {3, 7}, 0.0, 1.0, DataType::Float32, -3, 0));
}

TEST(EvaluateRandom, UniformStaysBelowMaxval) {
  // Between 1 and the next float32, every u >= 0.5 rounds up to maxval: it becomes minval.
  const double next = std::nextafter(1.0f, 2.0f);
  for (double v : drawn(uniform, {256}, 1.0, next, DataType::Float32, 1, 0)) EXPECT_EQ(v, 1.0);
  for (double v : drawn(uniform, {1000}, -3.0, 5.0, DataType::Float32, 2, 0)) {
    EXPECT_GE(v, -3.0);
    EXPECT_LT(v, 5.0);
  }
  for (double v : drawn(uniform, {16}, 4.0, 4.0, DataType::Float32, 2, 0)) EXPECT_EQ(v, 4.0);
}

TEST(EvaluateRandom, NarrowDtypesRoundTheFloat32Value) {
  const std::vector<double> wide = drawn(uniform, {100}, -1.0, 1.0, DataType::Float32, 3, 1);
  const std::vector<double> half = drawn(uniform, {100}, -1.0, 1.0, DataType::Float16, 3, 1);
  const std::vector<double> brain = drawn(uniform, {100}, -1.0, 1.0, DataType::BFloat16, 3, 1);
  const std::vector<double> e4m3 = drawn(uniform, {100}, -1.0, 1.0, DataType::Float8_e4m3fn, 3, 1);
  for (size_t k = 0; k < wide.size(); ++k) {
    EXPECT_EQ(half[k], test::roundTo(DataType::Float16, wide[k]));
    EXPECT_EQ(brain[k], test::roundTo(DataType::BFloat16, wide[k]));
    EXPECT_EQ(e4m3[k], test::roundTo(DataType::Float8_e4m3fn, wide[k]));
  }
}

void expectMoments(const std::vector<double>& values, double mean, double std) {
  double sum = 0.0;
  double squares = 0.0;
  for (double v : values) {
    sum += v;
    squares += v * v;
  }
  const auto n = static_cast<double>(values.size());
  const double m = sum / n;
  // 5 standard errors of the mean and of the variance estimate.
  EXPECT_NEAR(m, mean, 5.0 * std / std::sqrt(n));
  EXPECT_NEAR(std::sqrt(squares / n - m * m), std, 5.0 * std / std::sqrt(2.0 * n));
}

TEST(EvaluateRandom, Moments) {
  for (DataType dtype : {DataType::Float32, DataType::Float64}) {
    SCOPED_TRACE(toString(dtype));
    // Uniform on [-1, 3): mean 1, std 4 / sqrt(12).
    expectMoments(drawn(uniform, {200000}, -1.0, 3.0, dtype, 11, 0), 1.0, 4.0 / std::sqrt(12.0));
    expectMoments(drawn(normal, {200000}, 2.0, 0.5, dtype, 11, 0), 2.0, 0.5);
  }
}

}  // namespace
}  // namespace braze
