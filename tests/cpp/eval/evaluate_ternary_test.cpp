// where, clamp, lerp and addcmul through the reference evaluator, with tensor, scalar-input
// and constant operands.

#include <cmath>
#include <limits>

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
using test::tensorOf;
using test::valuesOf;
using test::zipValues;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// torch.lerp's formula, which is exact at weight 1.
double lerpOf(double start, double end, double weight) {
  return weight < 0.5 ? start + weight * (end - start) : end - (end - start) * (1 - weight);
}

TEST(EvaluateTernary, WhereSelectsElementwise) {
  for (DataType dtype : {DataType::Float32, DataType::Float16, DataType::Int64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* cond = makeSymbolicTensor(fusion, 2, DataType::Bool);
    TensorView* a = makeSymbolicTensor(fusion, 2, dtype);
    TensorView* b = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(where(cond, a, b));

    RandomTensors random(21);
    const HostTensor tc = random.uniform(DataType::Bool, {5, 6});
    const HostTensor ta = random.uniform(dtype, {5, 6}, -50, 50);
    const HostTensor tb = random.uniform(dtype, {5, 6}, -50, 50);
    const std::vector<double> c = valuesOf(tc);
    const std::vector<double> va = valuesOf(ta);
    const std::vector<double> vb = valuesOf(tb);
    std::vector<double> expected(c.size());
    for (size_t i = 0; i < c.size(); ++i) expected[i] = c[i] != 0 ? va[i] : vb[i];
    expectClose(evaluateFusionTensors(fusion, {tc, ta, tb})[0], {dtype, {5, 6}, expected});
  }
}

TEST(EvaluateTernary, WhereWithConstantsAndBroadcast) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  TensorView* mask = gt(x, 0.0);
  fusion.addOutput(where(mask, x, 0.0));     // relu
  fusion.addOutput(where(mask, 1.0, -1.0));  // sign without zero
  fusion.addOutput(where(mask, 2, x));
  RandomTensors random(22);
  const HostTensor input = random.nonZero(DataType::Float32, {4, 7});
  const std::vector<double> v = valuesOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  ASSERT_EQ(out.size(), 3u);
  expectClose(out[0],
              {DataType::Float32, {4, 7}, mapValues(v, [](double a) { return a > 0 ? a : 0.0; })});
  // Two float literals give PyTorch's default float dtype, as torch.where(mask, 1.0, -1.0).
  expectClose(
      out[1],
      {DataType::Float32, {4, 7}, mapValues(v, [](double a) { return a > 0 ? 1.0 : -1.0; })});
  expectClose(out[2],
              {DataType::Float32, {4, 7}, mapValues(v, [](double a) { return a > 0 ? 2.0 : a; })});
}

TEST(EvaluateTernary, WherePromotesItsBranches) {
  Fusion fusion;
  TensorView* cond = makeSymbolicTensor(fusion, 1, DataType::Bool);
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float64);
  fusion.addOutput(where(cond, a, b));
  const HostTensor tc = tensorOf(DataType::Bool, {3}, {1, 0, 1});
  const HostTensor ta = tensorOf(DataType::Int32, {3}, {4, 5, -6});
  const HostTensor tb = tensorOf(DataType::Float64, {3}, {0.5, 1.5, 2.5});
  expectClose(evaluateFusionTensors(fusion, {tc, ta, tb})[0],
              {DataType::Float64, {3}, {4, 1.5, -6}});
}

TEST(EvaluateTernary, WhereWithBroadcastCondition) {
  Fusion fusion;
  TensorView* cond = makeInputTensor(fusion, {.dtype = DataType::Bool, .sizes = {1, 6}});
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 6}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 1}});
  fusion.addOutput(where(cond, a, b));
  RandomTensors random(23);
  const HostTensor tc = random.uniform(DataType::Bool, {1, 6});
  const HostTensor ta = random.uniform(DataType::Float32, {4, 6});
  const HostTensor tb = random.uniform(DataType::Float32, {4, 1});
  const std::vector<double> c = test::broadcastValues(valuesOf(tc), {1, 6}, {4, 6});
  const std::vector<double> vb = test::broadcastValues(valuesOf(tb), {4, 1}, {4, 6});
  const std::vector<double> va = valuesOf(ta);
  std::vector<double> expected(c.size());
  for (size_t i = 0; i < c.size(); ++i) expected[i] = c[i] != 0 ? va[i] : vb[i];
  expectClose(evaluateFusionTensors(fusion, {tc, ta, tb})[0],
              {DataType::Float32, {4, 6}, expected});
}

TEST(EvaluateTernary, WhereOnScalarConditionInput) {
  Fusion fusion;
  Scalar* flag = makeInputScalar(fusion, DataType::Bool);
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float32);
  Val* result = where(Operand(flag), Operand(a), Operand(b));
  ASSERT_TRUE(result->isA<TensorView>());
  fusion.addOutput(result);
  const HostTensor ta = tensorOf(DataType::Float32, {3}, {1, 2, 3});
  const HostTensor tb = tensorOf(DataType::Float32, {3}, {-1, -2, -3});
  expectClose(std::get<HostTensor>(evaluateFusion(fusion, {ScalarValue(false), ta, tb})[0]),
              {DataType::Float32, {3}, {-1, -2, -3}});
  expectClose(std::get<HostTensor>(evaluateFusion(fusion, {ScalarValue(true), ta, tb})[0]),
              {DataType::Float32, {3}, {1, 2, 3}});
}

TEST(EvaluateTernary, ClampWithConstantBounds) {
  for (DataType dtype : {DataType::Float32, DataType::Float64, DataType::BFloat16}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(clamp(x, -0.5, 0.75));
    RandomTensors random(24);
    const HostTensor input = random.uniform(dtype, {6, 5});
    expectClose(evaluateFusionTensors(fusion, {input})[0],
                {dtype, {6, 5}, mapValues(valuesOf(input), [](double v) {
                   return std::min(std::max(v, -0.5), 0.75);
                 })});
  }
}

TEST(EvaluateTernary, ClampKeepsNanAndIntegerDtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* n = makeSymbolicTensor(fusion, 1, DataType::Int32);
  fusion.addOutput(clamp(x, 0.0, 6.0));
  fusion.addOutput(clamp(n, 0, 6));
  const HostTensor tx = tensorOf(DataType::Float32, {4}, {kNan, -1, 3, 9});
  const HostTensor tn = tensorOf(DataType::Int32, {4}, {-4, 2, 6, 100});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, tn});
  expectClose(out[0], {DataType::Float32, {4}, {kNan, 0, 3, 6}});
  expectClose(out[1], {DataType::Int32, {4}, {0, 2, 6, 6}});
}

TEST(EvaluateTernary, ClampWithTensorBounds) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  TensorView* lo = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 5}});
  TensorView* hi = makeSymbolicTensor(fusion, 2, DataType::Float32);
  fusion.addOutput(clamp(x, lo, hi));
  RandomTensors random(25);
  const HostTensor tx = random.uniform(DataType::Float32, {3, 5}, -3, 3);
  const HostTensor tlo = random.uniform(DataType::Float32, {1, 5}, -1, 0);
  const HostTensor thi = random.uniform(DataType::Float32, {3, 5}, 0.1, 1);
  const std::vector<double> l = test::broadcastValues(valuesOf(tlo), {1, 5}, {3, 5});
  const std::vector<double> h = valuesOf(thi);
  const std::vector<double> v = valuesOf(tx);
  std::vector<double> expected(v.size());
  for (size_t i = 0; i < v.size(); ++i) expected[i] = std::min(std::max(v[i], l[i]), h[i]);
  expectClose(evaluateFusionTensors(fusion, {tx, tlo, thi})[0],
              {DataType::Float32, {3, 5}, expected});
}

TEST(EvaluateTernary, LerpWithScalarAndTensorWeights) {
  for (DataType dtype : {DataType::Float32, DataType::Float64, DataType::Float16}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* start = makeSymbolicTensor(fusion, 2, dtype);
    TensorView* end = makeSymbolicTensor(fusion, 2, dtype);
    TensorView* weight = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(lerp(start, end, 0.3));
    fusion.addOutput(lerp(start, end, weight));
    RandomTensors random(26);
    const HostTensor ts = random.uniform(dtype, {4, 5});
    const HostTensor te = random.uniform(dtype, {4, 5});
    const HostTensor tw = random.uniform(dtype, {4, 5}, 0, 1);
    const std::vector<double> s = valuesOf(ts);
    const std::vector<double> e = valuesOf(te);
    const std::vector<double> w = valuesOf(tw);
    std::vector<double> fixed(s.size());
    std::vector<double> varying(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      fixed[i] = lerpOf(s[i], e[i], 0.3);
      varying[i] = lerpOf(s[i], e[i], w[i]);
    }
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ts, te, tw});
    expectClose(out[0], {dtype, {4, 5}, fixed});
    expectClose(out[1], {dtype, {4, 5}, varying});
  }
}

TEST(EvaluateTernary, LerpIsExactAtTheEnds) {
  Fusion fusion;
  TensorView* start = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* end = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(lerp(start, end, 0.0));
  fusion.addOutput(lerp(start, end, 1.0));
  const HostTensor ts = tensorOf(DataType::Float32, {3}, {1e8, -3.25, 0.1});
  const HostTensor te = tensorOf(DataType::Float32, {3}, {1.0, 7.5, 1e-8});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ts, te});
  expectClose(out[0], ts, test::Tolerance{});
  expectClose(out[1], te, test::Tolerance{});
}

TEST(EvaluateTernary, AddcmulDefaultAndExplicitValue) {
  for (DataType dtype : {DataType::Float32, DataType::BFloat16, DataType::Float64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    TensorView* t1 = makeSymbolicTensor(fusion, 2, dtype);
    TensorView* t2 = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(addcmul(x, t1, t2));
    fusion.addOutput(addcmul(x, t1, t2, -0.5));
    RandomTensors random(27);
    const HostTensor tx = random.uniform(dtype, {3, 7});
    const HostTensor ta = random.uniform(dtype, {3, 7});
    const HostTensor tb = random.uniform(dtype, {3, 7});
    const std::vector<double> v = valuesOf(tx);
    const std::vector<double> a = valuesOf(ta);
    const std::vector<double> b = valuesOf(tb);
    std::vector<double> one(v.size());
    std::vector<double> half(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      one[i] = v[i] + a[i] * b[i];
      half[i] = v[i] - 0.5 * a[i] * b[i];
    }
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, ta, tb});
    expectClose(out[0], {dtype, {3, 7}, one});
    expectClose(out[1], {dtype, {3, 7}, half});
  }
}

TEST(EvaluateTernary, AddcmulWithScalarInputValueAndBroadcastFactor) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  TensorView* t1 = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  Scalar* value = makeInputScalar(fusion, DataType::Float64);
  fusion.addOutput(addcmul(x, t1, x, value));
  RandomTensors random(28);
  const HostTensor tx = random.uniform(DataType::Float32, {4, 3});
  const HostTensor t = random.uniform(DataType::Float32, {4, 1});
  const std::vector<double> v = valuesOf(tx);
  const std::vector<double> f = test::broadcastValues(valuesOf(t), {4, 1}, {4, 3});
  std::vector<double> expected(v.size());
  for (size_t i = 0; i < v.size(); ++i) expected[i] = v[i] + 2.5 * f[i] * v[i];
  expectClose(std::get<HostTensor>(evaluateFusion(fusion, {tx, t, ScalarValue(2.5)})[0]),
              {DataType::Float32, {4, 3}, expected});
}

}  // namespace
}  // namespace braze
