// uniform and normal: the shape, the parameters in the compute dtype, the seed and offset as
// int64 scalars (0 and 0 when absent), and every error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/random.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::throwsError;

TEST(RandomTest, UniformShapeParametersAndDefaultSeed) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  TensorView* y = uniform(fusion, {2, n, 1}, -1, 2.5);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[2, s0, b]");
  const Expr* def = definitionOf(y, OpKind::Uniform);
  ASSERT_EQ(def->inputs().size(), 4u);
  EXPECT_EQ(def->input(0)->dtype(), DataType::Float32);
  EXPECT_TRUE(identical(*def->input(0)->as<Scalar>()->value(), ScalarValue(-1.0)));
  EXPECT_TRUE(identical(*def->input(1)->as<Scalar>()->value(), ScalarValue(2.5)));
  // Absent seed and offset are the constants 0: reproducible by default.
  for (size_t i : {2u, 3u}) {
    EXPECT_EQ(def->input(i)->dtype(), DataType::Int64);
    EXPECT_EQ(def->input(i)->as<Scalar>()->constantInt(), 0);
  }
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(RandomTest, NormalTakesSeedAndOffsetFromInputs) {
  Fusion fusion;
  Scalar* seed = makeInputScalar(fusion, DataType::Int64);
  Scalar* offset = makeInputScalar(fusion, DataType::Int32);
  TensorView* y = normal(fusion, {3, 4}, 0.0, 1.0, DataType::BFloat16, seed, offset);
  EXPECT_EQ(y->dtype(), DataType::BFloat16);
  const Expr* def = definitionOf(y, OpKind::Normal);
  // 16-bit dtypes compute in float32.
  EXPECT_EQ(def->input(0)->dtype(), DataType::Float32);
  EXPECT_EQ(def->input(2), seed);
  // An int32 offset is widened to the int64 the counter takes.
  EXPECT_EQ(def->input(3)->dtype(), DataType::Int64);
  EXPECT_EQ(def->input(3)->definition()->input(0), offset);
}

TEST(RandomTest, Float64ParametersStayDouble) {
  Fusion fusion;
  Scalar* mean = makeInputScalar(fusion, DataType::Float64);
  TensorView* y = normal(fusion, {5}, mean, 0.5, DataType::Float64, 1, 2);
  const Expr* def = definitionOf(y, OpKind::Normal);
  EXPECT_EQ(def->input(0), mean);
  EXPECT_EQ(def->input(1)->dtype(), DataType::Float64);
  EXPECT_EQ(def->input(2)->as<Scalar>()->constantInt(), 1);
  EXPECT_EQ(def->input(3)->as<Scalar>()->constantInt(), 2);
}

TEST(RandomTest, Errors) {
  Fusion fusion;
  EXPECT_TRUE(throwsError([&] { uniform(fusion, {2}, 0, 1, DataType::Int32); },
                          {"uniform", "dtype int32", "not floating"}));
  EXPECT_TRUE(throwsError([&] { normal(fusion, {2}, 0, 1, DataType::Bool); },
                          {"normal", "dtype bool", "not floating"}));
  EXPECT_TRUE(throwsError(
      [&] {
        uniform(fusion, {2, -1}, 0, 1);
      },
      {"uniform", "shape[1] is -1", "non-negative"}));
  EXPECT_TRUE(throwsError([&] { uniform(fusion, {2}, 3.0, 1.0); },
                          {"uniform", "minval 3", "greater than maxval 1"}));
  EXPECT_TRUE(throwsError([&] { normal(fusion, {2}, 0.0, -1.0); },
                          {"normal", "std is -1", "non-negative"}));
  EXPECT_TRUE(throwsError(
      [&] { uniform(fusion, {2}, 0, 1, DataType::Float32, 5); },
      {"uniform", "rng_seed and rng_offset must be given together", "got only rng_seed"}));
  EXPECT_TRUE(throwsError([&] { normal(fusion, {2}, 0, 1, DataType::Float32, std::nullopt, 5); },
                          {"normal", "got only rng_offset"}));
  EXPECT_TRUE(throwsError([&] { uniform(fusion, {2}, 0, 1, DataType::Float32, 1.5, 0); },
                          {"uniform", "rng_seed has dtype float64", "integers"}));
  Scalar* flag = makeInputScalar(fusion, DataType::Bool);
  EXPECT_TRUE(throwsError([&] { uniform(fusion, {2}, 0, 1, DataType::Float32, 0, flag); },
                          {"uniform", "rng_offset has dtype bool"}));
  TensorView* t = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError([&] { uniform(fusion, {2}, t, 1); }, {"uniform", "minval", "tensor T0"}));
  EXPECT_TRUE(throwsError([&] { normal(fusion, {2}, 0, 1, DataType::Float32, t, 0); },
                          {"normal", "rng_seed", "tensor T0"}));
  EXPECT_TRUE(throwsError([&] { normal(fusion, {2}, true, 1); }, {"normal", "mean is a bool"}));
  Fusion other;
  Scalar* foreign = makeInputScalar(other, DataType::Int64);
  EXPECT_TRUE(throwsError([&] { uniform(fusion, {2}, 0, 1, DataType::Float32, foreign, 0); },
                          {"uniform", "rng_seed", "another fusion"}));
}

}  // namespace
}  // namespace braze
