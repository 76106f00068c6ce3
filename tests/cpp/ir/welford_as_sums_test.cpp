// welfordAsSums: a Welford whose input the fusion reads anyway becomes two sums with the same
// results; one whose input is read by nothing else, or whose count is read, stays.

#include "braze/ir/welford_as_sums.h"

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"

namespace braze {
namespace {

int64_t welfordsIn(const Fusion& fusion) {
  int64_t count = 0;
  for (const Expr* expr : fusion.exprs()) count += expr->op() == OpKind::Welford ? 1 : 0;
  return count;
}

void expectSameResults(const Fusion& a, const Fusion& b, DataType dtype) {
  test::RandomTensors random(11);
  const HostTensor x = random.uniform(dtype, {6, 300}, -3.0, 5.0);
  const auto expected = evaluateFusion(a, {x});
  const auto actual = evaluateFusion(b, {x});
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& e = std::get<HostTensor>(expected[i]);
    const auto& r = std::get<HostTensor>(actual[i]);
    ASSERT_EQ(r.sizes(), e.sizes());
    for (int64_t k = 0; k < e.numel(); ++k) {
      const double want = std::get<double>(e.atFlat(k));
      EXPECT_NEAR(std::get<double>(r.atFlat(k)), want, 1e-5 * (1 + std::abs(want)))
          << "output " << i << " element " << k;
    }
  }
}

// A layer norm without weights, its statistics from var_mean as nvFuser-style definitions
// write it.
std::unique_ptr<Fusion> layerNorm(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  const VarMeanResult stats = var_mean(x, {1}, /*correction=*/0, /*keepdim=*/true);
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* y = mul(sub(xf, cast(stats.mean, DataType::Float32)),
                      rsqrt(add(cast(stats.var, DataType::Float32), 1e-5)));
  fusion->addOutput(cast(y, dtype));
  fusion->addOutput(stats.mean);
  return fusion;
}

TEST(WelfordAsSumsTest, ALayerNormsStatisticsBecomeSumsWithTheSameResults) {
  for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
    SCOPED_TRACE(toString(dtype));
    std::unique_ptr<Fusion> fusion = layerNorm(dtype);
    const std::unique_ptr<Fusion> original = fusion->clone();
    ASSERT_EQ(welfordsIn(*fusion), 1);
    EXPECT_EQ(welfordAsSums(*fusion), 1);
    EXPECT_EQ(welfordsIn(*fusion), 0);
    expectSameResults(*original, *fusion, dtype);
  }
}

TEST(WelfordAsSumsTest, AWelfordAloneOrWithItsCountReadStays) {
  Fusion alone;
  TensorView* x = makeSymbolicTensor(alone, 2);
  const VarMeanResult stats = var_mean(x, {1});
  alone.addOutput(stats.var);
  alone.addOutput(stats.mean);
  EXPECT_EQ(welfordAsSums(alone), 0);
  EXPECT_EQ(welfordsIn(alone), 1);

  Fusion counted;
  TensorView* y = makeSymbolicTensor(counted, 2);
  const WelfordResult w = welford(y, {1});
  counted.addOutput(add(y, broadcast(w.avg, {false, true})));
  counted.addOutput(w.n);
  EXPECT_EQ(welfordAsSums(counted), 0);
}

}  // namespace
}  // namespace braze
