// welford, var and var_mean: one Welford Expr with three outputs of one shape, the variance
// as m2 / (n - correction), reduced-precision handling and keepdim.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/reduction.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::throwsError;

TEST(WelfordTest, OneExprWithThreeOutputs) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 8}});
  const WelfordResult w = welford(x, {-1});
  const Expr* def = definitionOf(w.avg, OpKind::Welford);
  EXPECT_EQ(w.m2->definition(), def);
  EXPECT_EQ(w.n->definition(), def);
  ASSERT_EQ(def->outputs().size(), 3u);
  EXPECT_EQ(def->output(0), w.avg);
  EXPECT_EQ(def->output(1), w.m2);
  EXPECT_EQ(def->output(2), w.n);
  EXPECT_EQ(def->input(0), x);
  EXPECT_EQ(def->attribute<std::vector<int64_t>>("axes"), (std::vector<int64_t>{1}));
  EXPECT_EQ(w.avg->dtype(), DataType::Float32);
  EXPECT_EQ(w.m2->dtype(), DataType::Float32);
  EXPECT_EQ(w.n->dtype(), DataType::Index);
  for (TensorView* out : {w.avg, w.m2, w.n}) EXPECT_EQ(domainText(out), "[s0, r:8]");
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(WelfordTest, ReducedPrecisionIsComputedInFloat32) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float16);
  const WelfordResult w = welford(x, {});
  EXPECT_EQ(w.avg->dtype(), DataType::Float32);
  EXPECT_EQ(w.m2->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(w.avg), "[r:s0, r:s1]");
  const auto* input = w.avg->definition()->input(0)->as<TensorView>();
  EXPECT_EQ(input->dtype(), DataType::Float32);
  EXPECT_EQ(definitionOf(input, OpKind::Cast)->input(0), x);
}

TEST(WelfordTest, VarDividesM2ByCountMinusCorrection) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float64);
  TensorView* v = var(x, {1});
  EXPECT_EQ(v->dtype(), DataType::Float64);
  EXPECT_EQ(domainText(v), "[s0]");
  const Expr* division = v->definition();
  ASSERT_NE(division, nullptr);
  EXPECT_TRUE(division->op() == OpKind::Div || division->op() == OpKind::TrueDiv);
  const auto* m2 = division->input(0)->as<TensorView>();
  const Expr* welford_expr = definitionOf(m2, OpKind::Welford);
  EXPECT_EQ(welford_expr->output(1), m2);
  // The count is a scalar, the reduced extent: n is left unread (welford_as_sums.h).
  const auto* denominator = division->input(1)->as<Scalar>();
  EXPECT_EQ(denominator->dtype(), DataType::Index);
  const Expr* minus = denominator->definition();
  ASSERT_NE(minus, nullptr);
  EXPECT_EQ(minus->op(), OpKind::Sub);
  EXPECT_EQ(minus->input(0), x->axis(1)->extent());
  EXPECT_TRUE(minus->input(1)->as<Scalar>()->isConstantEqualTo(1));
  EXPECT_TRUE(welford_expr->output(2)->uses().empty());
}

TEST(WelfordTest, VarWithOtherCorrections) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* v = var(x, {0}, /*correction=*/3);
  const Expr* minus = v->definition()->input(1)->as<Scalar>()->definition();
  ASSERT_NE(minus, nullptr);
  EXPECT_TRUE(minus->input(1)->as<Scalar>()->isConstantEqualTo(3));
  // correction 0 divides by the count itself (or count - 0).
  TensorView* biased = var(x, {0}, /*correction=*/0);
  const auto* denominator = biased->definition()->input(1)->as<Scalar>();
  EXPECT_EQ(denominator->dtype(), DataType::Index);
}

TEST(WelfordTest, VarOfReducedPrecisionCastsBack) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* v = var(x, {0}, 1, /*keepdim=*/true);
  EXPECT_EQ(v->dtype(), DataType::BFloat16);
  EXPECT_EQ(domainText(v), "[b, s1]");
  const auto* narrowed = definitionOf(v, OpKind::Broadcast)->input(0)->as<TensorView>();
  const auto* wide = definitionOf(narrowed, OpKind::Cast)->input(0)->as<TensorView>();
  EXPECT_EQ(wide->dtype(), DataType::Float32);
}

TEST(WelfordTest, VarMeanSharesOneWelford) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3, DataType::Float16);
  const VarMeanResult r = var_mean(x, {0, 2}, 1, /*keepdim=*/true);
  EXPECT_EQ(r.var->dtype(), DataType::Float16);
  EXPECT_EQ(r.mean->dtype(), DataType::Float16);
  EXPECT_EQ(domainText(r.var), "[b, s1, b]");
  EXPECT_EQ(domainText(r.mean), "[b, s1, b]");
  // mean: broadcast(cast(avg)); var: broadcast(cast(div(m2, ...))).
  const auto* mean_narrow = definitionOf(r.mean, OpKind::Broadcast)->input(0)->as<TensorView>();
  const auto* avg = definitionOf(mean_narrow, OpKind::Cast)->input(0)->as<TensorView>();
  const Expr* welford_expr = definitionOf(avg, OpKind::Welford);
  EXPECT_EQ(welford_expr->output(0), avg);
  const auto* var_narrow = definitionOf(r.var, OpKind::Broadcast)->input(0)->as<TensorView>();
  const auto* quotient = definitionOf(var_narrow, OpKind::Cast)->input(0)->as<TensorView>();
  EXPECT_EQ(quotient->definition()->input(0), welford_expr->output(1));
  fusion.addOutput(r.var);
  fusion.addOutput(r.mean);
  int welfords = 0;
  for (const Expr* expr : fusion.exprs()) welfords += expr->op() == OpKind::Welford;
  EXPECT_EQ(welfords, 1);
}

TEST(WelfordTest, VarMeanWithoutKeepdim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  const VarMeanResult r = var_mean(x, {1});
  EXPECT_EQ(domainText(r.var), "[s0]");
  EXPECT_EQ(domainText(r.mean), "[s0, r:s1]");
  EXPECT_EQ(definitionOf(r.mean, OpKind::Welford)->output(0), r.mean);
}

TEST(WelfordTest, ErrorNonFloatingInput) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  EXPECT_TRUE(throwsError([&] { welford(x, {0}); },
                          {"welford of T0 (input 0)", "int32", "floating", "cast"}));
  EXPECT_TRUE(throwsError([&] { var(x, {0}); }, {"var of T0", "int32"}));
  EXPECT_TRUE(throwsError([&] { var_mean(x, {0}); }, {"var_mean of T0", "int32"}));
}

TEST(WelfordTest, ErrorAxes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError([&] { welford(x, {5}); }, {"welford", "dim 5", "out of range"}));
  EXPECT_TRUE(throwsError([&] { var(x, {1, 1}); }, {"var", "axis 1", "more than once"}));
  EXPECT_TRUE(throwsError([&] { var_mean(x, {-3}); }, {"var_mean", "dim -3"}));
}

TEST(WelfordTest, ErrorNullInput) {
  EXPECT_TRUE(throwsError([&] { welford(nullptr, {}); }, {"welford", "null"}));
  EXPECT_TRUE(throwsError([&] { var(nullptr, {}); }, {"var", "null"}));
}

}  // namespace
}  // namespace braze
