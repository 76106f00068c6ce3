// Reductions through the reference evaluator: sum, prod, max/min/amax/amin, mean, var,
// var_mean and welford over single, multiple, negative and all axes, with keepdim, dtype
// arguments, reduced-precision inputs, and sizes 1 and odd sizes; expected values come from
// grouping the input with plain loops.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "support/error_matchers.h"
#include "support/multi_index.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::RandomTensors;
using test::tensorOf;
using test::throwsError;
using test::valuesOf;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Axes = std::vector<int64_t>;
using Sizes = std::vector<int64_t>;

/// `axes` made non-negative; empty means every dim.
std::vector<bool> reducedDims(const Sizes& sizes, const Axes& axes) {
  const auto rank = static_cast<int64_t>(sizes.size());
  std::vector<bool> reduced(sizes.size(), axes.empty());
  for (int64_t axis : axes) reduced[axis < 0 ? axis + rank : axis] = true;
  return reduced;
}

/// Output sizes of a reduction of `sizes` over `axes`.
Sizes reducedSizes(const Sizes& sizes, const Axes& axes, bool keepdim) {
  const std::vector<bool> reduced = reducedDims(sizes, axes);
  Sizes out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(sizes[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

/// The values of each output element's group, in row-major order of the output.
std::vector<std::vector<double>> groupValues(const std::vector<double>& values, const Sizes& sizes,
                                             const Axes& axes) {
  const std::vector<bool> reduced = reducedDims(sizes, axes);
  const Sizes kept = reducedSizes(sizes, axes, /*keepdim=*/true);
  std::vector<std::vector<double>> groups(static_cast<size_t>(test::numelOf(kept)));
  for (int64_t flat = 0; flat < static_cast<int64_t>(values.size()); ++flat) {
    std::vector<int64_t> index = test::unravelIndex(flat, sizes);
    for (size_t d = 0; d < index.size(); ++d) {
      if (reduced[d]) index[d] = 0;
    }
    groups[test::ravelIndex(index, kept)].push_back(values[flat]);
  }
  return groups;
}

std::vector<double> reduceGroups(const std::vector<std::vector<double>>& groups,
                                 const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> result;
  for (const auto& group : groups) result.push_back(f(group));
  return result;
}

double sumOf(const std::vector<double>& g) {
  return std::accumulate(g.begin(), g.end(), 0.0);
}
double prodOf(const std::vector<double>& g) {
  return std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<>());
}
double maxOf(const std::vector<double>& g) {
  double m = -kInf;
  for (double v : g) m = (std::isnan(v) || std::isnan(m)) ? kNan : std::max(m, v);
  return m;
}
double minOf(const std::vector<double>& g) {
  double m = kInf;
  for (double v : g) m = (std::isnan(v) || std::isnan(m)) ? kNan : std::min(m, v);
  return m;
}
double meanOf(const std::vector<double>& g) {
  return sumOf(g) / static_cast<double>(g.size());
}
double m2Of(const std::vector<double>& g) {
  const double mean = meanOf(g);
  double m2 = 0;
  for (double v : g) m2 += (v - mean) * (v - mean);
  return m2;
}

// ---- every reduction op over a table of shapes and axes ----

struct ReductionOp {
  const char* name;
  TensorView* (*build)(TensorView*, Axes, bool keepdim);
  double (*reference)(const std::vector<double>&);
  double low, high;
};

std::ostream& operator<<(std::ostream& os, const ReductionOp& op) {
  return os << op.name;
}

const ReductionOp kOps[] = {
    {"sum", [](TensorView* x, Axes a, bool k) { return sum(x, a, k); }, sumOf, -2, 2},
    {"prod", [](TensorView* x, Axes a, bool k) { return prod(x, a, k); }, prodOf, 0.6, 1.5},
    {"max", [](TensorView* x, Axes a, bool k) { return max(x, a, k); }, maxOf, -2, 2},
    {"min", [](TensorView* x, Axes a, bool k) { return min(x, a, k); }, minOf, -2, 2},
    {"amax", [](TensorView* x, Axes a, bool k) { return amax(x, a, k); }, maxOf, -2, 2},
    {"amin", [](TensorView* x, Axes a, bool k) { return amin(x, a, k); }, minOf, -2, 2},
    {"mean", [](TensorView* x, Axes a, bool k) { return mean(x, a, k); }, meanOf, -2, 2},
};

struct AxesCase {
  const char* name;
  Sizes sizes;
  Axes axes;
};

std::ostream& operator<<(std::ostream& os, const AxesCase& c) {
  return os << c.name;
}

const AxesCase kAxesCases[] = {
    {"outer", {4, 5, 6}, {0}},
    {"middle", {4, 5, 6}, {1}},
    {"inner", {4, 5, 6}, {2}},
    {"negative", {4, 5, 6}, {-1}},
    {"two", {4, 5, 6}, {0, 2}},
    {"two_negative_unsorted", {4, 5, 6}, {-1, -3}},
    {"all_listed", {4, 5, 6}, {0, 1, 2}},
    {"all_empty", {4, 5, 6}, {}},
    {"vector", {13}, {0}},
    {"size_one_reduced", {3, 1, 5}, {1}},
    {"size_one_kept", {1, 7, 1}, {1}},
    {"odd_inner", {33, 17}, {1}},
    {"odd_outer", {33, 17}, {0}},
    {"rank4_middle", {2, 3, 5, 7}, {1, 2}},
};

class ReductionTest : public ::testing::TestWithParam<std::tuple<ReductionOp, AxesCase, bool>> {};

TEST_P(ReductionTest, MatchesLoops) {
  const auto& [op, shape, keepdim] = GetParam();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, static_cast<int64_t>(shape.sizes.size()));
  fusion.addOutput(op.build(x, shape.axes, keepdim));

  RandomTensors random(31);
  const HostTensor input = random.uniform(DataType::Float32, shape.sizes, op.low, op.high);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::Float32, reducedSizes(shape.sizes, shape.axes, keepdim),
               reduceGroups(groupValues(valuesOf(input), shape.sizes, shape.axes), op.reference)});
}

INSTANTIATE_TEST_SUITE_P(AllOps, ReductionTest,
                         ::testing::Combine(::testing::ValuesIn(kOps),
                                            ::testing::ValuesIn(kAxesCases), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::get<1>(info.param).name +
                                  (std::get<2>(info.param) ? "_keepdim" : "");
                         });

class ReductionDtypeTest : public ::testing::TestWithParam<std::tuple<ReductionOp, DataType>> {};

TEST_P(ReductionDtypeTest, KeepsFloatDtype) {
  const auto& [op, dtype] = GetParam();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
  fusion.addOutput(op.build(x, {1}, false));
  RandomTensors random(32);
  const HostTensor input = random.uniform(dtype, {6, 25}, op.low, op.high);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {dtype, {6}, reduceGroups(groupValues(valuesOf(input), {6, 25}, {1}), op.reference)});
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, ReductionDtypeTest,
                         ::testing::Combine(::testing::ValuesIn(kOps),
                                            ::testing::Values(DataType::Float64, DataType::Float16,
                                                              DataType::BFloat16)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::string(toString(std::get<1>(info.param)));
                         });

// ---- dtypes of results ----

TEST(EvaluateReduction, SumAndProdOfIntegersGiveInt64) {
  for (DataType dtype : {DataType::Int32, DataType::Int64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    fusion.addOutput(sum(x, {0}));
    fusion.addOutput(prod(x, {1}));
    // Column sums exceed int32: the int64 result must hold them.
    const HostTensor input = tensorOf(dtype, {3, 2}, {2e9, -7, 2e9, 3, 2e9, 5});
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
    expectClose(out[0], {DataType::Int64, {2}, {6e9, 1}});
    expectClose(out[1], {DataType::Int64, {3}, {-14e9, 6e9, 10e9}});
  }
}

TEST(EvaluateReduction, SumOfLargeInt64IsExact) {
  const int64_t big = int64_t{1} << 62;
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(sum(x, {0}));
  fusion.addOutput(max(x, {0}));
  const HostTensor input = test::tensorOfIntegers(DataType::Int64, {4}, {big, big + 1, -big, 7});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  EXPECT_EQ(test::integersOf(out[0]), (std::vector<int64_t>{big + 8}));
  EXPECT_EQ(test::integersOf(out[1]), (std::vector<int64_t>{big + 1}));
}

TEST(EvaluateReduction, SumOfBoolCounts) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Bool);
  fusion.addOutput(sum(x, {1}));
  RandomTensors random(33);
  const HostTensor input = random.uniform(DataType::Bool, {4, 9});
  expectClose(
      evaluateFusionTensors(fusion, {input})[0],
      {DataType::Int64, {4}, reduceGroups(groupValues(valuesOf(input), {4, 9}, {1}), sumOf)});
}

TEST(EvaluateReduction, MaxAndMinOfIntegersKeepDtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Int32);
  fusion.addOutput(max(x, {0}));
  fusion.addOutput(amin(x, {-1}, true));
  RandomTensors random(34);
  const HostTensor input = random.uniform(DataType::Int32, {5, 4}, -100, 100);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(
      out[0],
      {DataType::Int32, {4}, reduceGroups(groupValues(valuesOf(input), {5, 4}, {0}), maxOf)});
  expectClose(
      out[1],
      {DataType::Int32, {5, 1}, reduceGroups(groupValues(valuesOf(input), {5, 4}, {1}), minOf)});
}

TEST(EvaluateReduction, DtypeArgumentSetsTheResult) {
  Fusion fusion;
  TensorView* f = makeSymbolicTensor(fusion, 2, DataType::Float32);
  TensorView* i = makeSymbolicTensor(fusion, 2, DataType::Int32);
  TensorView* h = makeSymbolicTensor(fusion, 2, DataType::Float16);
  fusion.addOutput(sum(f, {1}, false, DataType::Float64));
  fusion.addOutput(sum(i, {0}, true, DataType::Float32));
  fusion.addOutput(prod(i, {1}, false, DataType::Float64));
  fusion.addOutput(mean(h, {1}, false, DataType::Float32));
  fusion.addOutput(sum(h, {0}, false, DataType::Float64));
  RandomTensors random(35);
  const HostTensor tf = random.uniform(DataType::Float32, {3, 4});
  const HostTensor ti = random.nonZero(DataType::Int32, {3, 4}, -5, 5, 1);
  const HostTensor th = random.uniform(DataType::Float16, {3, 4});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tf, ti, th});
  ASSERT_EQ(out.size(), 5u);
  expectClose(
      out[0],
      {DataType::Float64, {3}, reduceGroups(groupValues(valuesOf(tf), {3, 4}, {1}), sumOf)});
  expectClose(
      out[1],
      {DataType::Float32, {1, 4}, reduceGroups(groupValues(valuesOf(ti), {3, 4}, {0}), sumOf)});
  expectClose(
      out[2],
      {DataType::Float64, {3}, reduceGroups(groupValues(valuesOf(ti), {3, 4}, {1}), prodOf)});
  expectClose(
      out[3],
      {DataType::Float32, {3}, reduceGroups(groupValues(valuesOf(th), {3, 4}, {1}), meanOf)});
  expectClose(
      out[4],
      {DataType::Float64, {4}, reduceGroups(groupValues(valuesOf(th), {3, 4}, {0}), sumOf)});
}

TEST(EvaluateReduction, Float16SumAccumulatesInFloat32) {
  // 4096 values in [0.5, 1]: a float16 accumulator would stall at 2048 (where its spacing
  // reaches 2); the true sum is about 3072.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float16);
  fusion.addOutput(sum(x, {0}));
  fusion.addOutput(sum(x, {0}, false, DataType::Float32));
  RandomTensors random(36);
  const HostTensor input = random.uniform(DataType::Float16, {4096}, 0.5, 1.0);
  const double total = sumOf(valuesOf(input));
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float16, {}, {total}});
  expectClose(out[1], {DataType::Float32, {}, {total}});
}

TEST(EvaluateReduction, BFloat16MeanOfManyValues) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  fusion.addOutput(mean(x, {1}));
  RandomTensors random(37);
  const HostTensor input = random.uniform(DataType::BFloat16, {3, 5000}, 1.0, 3.0);
  expectClose(evaluateFusionTensors(fusion, {input})[0],
              {DataType::BFloat16,
               {3},
               reduceGroups(groupValues(valuesOf(input), {3, 5000}, {1}), meanOf)});
}

// ---- nan and infinities ----

TEST(EvaluateReduction, NanPropagatesThroughMaxMinAndSum) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  fusion.addOutput(max(x, {1}));
  fusion.addOutput(min(x, {1}));
  fusion.addOutput(sum(x, {1}));
  const HostTensor input =
      tensorOf(DataType::Float32, {3, 3}, {1, kNan, 3, -kInf, 2, 5, kNan, kInf, -1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {3}, {kNan, 5, kNan}});
  expectClose(out[1], {DataType::Float32, {3}, {kNan, -kInf, kNan}});
  expectClose(out[2], {DataType::Float32, {3}, {kNan, -kInf, kNan}});
}

TEST(EvaluateReduction, MaxOfAllNegativeValues) {
  // An accumulator initialised with 0 instead of -inf would give 0 here.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float64);
  fusion.addOutput(max(x, {}));
  fusion.addOutput(min(neg(x), {}));
  const HostTensor input = tensorOf(DataType::Float64, {4}, {-3, -1.5, -7, -2});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float64, {}, {-1.5}});
  expectClose(out[1], {DataType::Float64, {}, {1.5}});
}

// ---- var, var_mean, welford ----

class VarianceTest : public ::testing::TestWithParam<std::tuple<AxesCase, int64_t, bool>> {};

TEST_P(VarianceTest, VarAndVarMean) {
  const auto& [shape, correction, keepdim] = GetParam();
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, static_cast<int64_t>(shape.sizes.size()));
  fusion.addOutput(var(x, shape.axes, correction, keepdim));
  VarMeanResult vm = var_mean(x, shape.axes, correction, keepdim);
  fusion.addOutput(vm.var);
  fusion.addOutput(vm.mean);

  RandomTensors random(38);
  const HostTensor input = random.uniform(DataType::Float32, shape.sizes, -3, 5);
  const auto groups = groupValues(valuesOf(input), shape.sizes, shape.axes);
  const std::vector<double> variance = reduceGroups(groups, [&](const auto& g) {
    return m2Of(g) / static_cast<double>(static_cast<int64_t>(g.size()) - correction);
  });
  const Sizes out_sizes = reducedSizes(shape.sizes, shape.axes, keepdim);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  ASSERT_EQ(out.size(), 3u);
  expectClose(out[0], {DataType::Float32, out_sizes, variance});
  expectClose(out[1], {DataType::Float32, out_sizes, variance});
  expectClose(out[2], {DataType::Float32, out_sizes, reduceGroups(groups, meanOf)});
}

const AxesCase kVarianceCases[] = {
    {"inner", {6, 11}, {1}}, {"outer", {6, 11}, {0}},       {"two", {3, 4, 5}, {0, 2}},
    {"all", {3, 4, 5}, {}},  {"negative", {3, 4, 5}, {-2}},
};

INSTANTIATE_TEST_SUITE_P(Shapes, VarianceTest,
                         ::testing::Combine(::testing::ValuesIn(kVarianceCases),
                                            ::testing::Values(int64_t{0}, int64_t{1}, int64_t{2}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_correction" +
                                  std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_keepdim" : "");
                         });

TEST(EvaluateReduction, VarOfReducedPrecisionKeepsDtype) {
  for (DataType dtype : {DataType::Float16, DataType::BFloat16, DataType::Float64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    VarMeanResult vm = var_mean(x, {1});
    fusion.addOutput(vm.var);
    fusion.addOutput(vm.mean);
    RandomTensors random(39);
    const HostTensor input = random.uniform(dtype, {4, 300}, 10, 12);
    const auto groups = groupValues(valuesOf(input), {4, 300}, {1});
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
    expectClose(out[0], {dtype, {4}, reduceGroups(groups, [](const auto& g) {
                           return m2Of(g) / static_cast<double>(g.size() - 1);
                         })});
    expectClose(out[1], {dtype, {4}, reduceGroups(groups, meanOf)});
  }
}

TEST(EvaluateReduction, VarOfOneElementWithCorrectionIsNan) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(var(x, {1}));
  fusion.addOutput(var(x, {1}, 0));
  const HostTensor input = tensorOf(DataType::Float32, {2, 1}, {3.5, -1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {2}, {kNan, kNan}});
  expectClose(out[1], {DataType::Float32, {2}, {0, 0}});
}

TEST(EvaluateReduction, WelfordGivesMeanM2AndCount) {
  for (DataType dtype : {DataType::Float32, DataType::Float64, DataType::Float16}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 3, dtype);
    WelfordResult w = welford(x, {0, 2});
    fusion.addOutput(w.avg);
    fusion.addOutput(w.m2);
    fusion.addOutput(w.n);
    RandomTensors random(40);
    const HostTensor input = random.uniform(dtype, {5, 3, 7}, -2, 4);
    const auto groups = groupValues(valuesOf(input), {5, 3, 7}, {0, 2});
    // Reduced precision is computed, and returned, in float32.
    const DataType result = isReducedPrecision(dtype) ? DataType::Float32 : dtype;
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
    ASSERT_EQ(out.size(), 3u);
    expectClose(out[0], {result, {3}, reduceGroups(groups, meanOf)});
    expectClose(out[1], {result, {3}, reduceGroups(groups, m2Of)});
    expectClose(out[2], {DataType::Index, {3}, {35, 35, 35}});
  }
}

TEST(EvaluateReduction, WelfordOverEveryAxis) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float64);
  WelfordResult w = welford(x, {});
  fusion.addOutput(w.avg);
  fusion.addOutput(w.m2);
  fusion.addOutput(w.n);
  RandomTensors random(41);
  const HostTensor input = random.uniform(DataType::Float64, {9, 4}, 100, 101);
  const std::vector<double> v = valuesOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float64, {}, {meanOf(v)}});
  expectClose(out[1], {DataType::Float64, {}, {m2Of(v)}});
  expectClose(out[2], {DataType::Index, {}, {36}});
}

// ---- shapes ----

TEST(EvaluateReduction, ReducesABroadcastDim) {
  // A fixed size-1 dim is a Broadcast dim; reducing it is the identity on values.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 1}});
  fusion.addOutput(sum(x, {1}));
  fusion.addOutput(max(x, {1}, true));
  RandomTensors random(42);
  const HostTensor input = random.uniform(DataType::Float32, {4, 1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {4}, valuesOf(input)});
  expectClose(out[1], {DataType::Float32, {4, 1}, valuesOf(input)});
}

TEST(EvaluateReduction, ReductionOfAReductionAndKeepdimChains) {
  // sum over dim 1 then max over what remains of dim 2 (now dim 1); keepdim of the first
  // leaves a size-1 dim in place.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* s = sum(x, {1}, true);
  fusion.addOutput(max(s, {2}));
  fusion.addOutput(sum(sum(x, {1}), {1}));
  RandomTensors random(43);
  const HostTensor input = random.uniform(DataType::Float32, {3, 4, 5});
  const std::vector<double> sums =
      reduceGroups(groupValues(valuesOf(input), {3, 4, 5}, {1}), sumOf);  // [3, 5]
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0],
              {DataType::Float32, {3, 1}, reduceGroups(groupValues(sums, {3, 5}, {1}), maxOf)});
  expectClose(out[1],
              {DataType::Float32, {3}, reduceGroups(groupValues(sums, {3, 5}, {1}), sumOf)});
}

TEST(EvaluateReduction, MeanOfIntegersIsRefused) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Int32);
  EXPECT_TRUE(throwsError([&] { mean(x, {0}); }, {"mean"}));
}

}  // namespace
}  // namespace braze
