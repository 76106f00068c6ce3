// Inputs in every memory layout the evaluator accepts, and degenerate shapes: broadcast and
// stride-0 expanded inputs, strided and permuted inputs declared with their TensorSpec
// contiguity and allocation order, zero-size dims, size-1 dims, 0-d tensors and scalar inputs.

#include <cmath>
#include <limits>
#include <memory>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/multi_index.h"
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
using test::withAllocationOrder;
using test::withGaps;

using Sizes = std::vector<int64_t>;
using Contiguity = std::vector<std::optional<bool>>;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

/// Row sums of a row-major [rows, cols] matrix.
std::vector<double> rowSums(const std::vector<double>& v, int64_t rows, int64_t cols) {
  std::vector<double> sums(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) sums[r] += v[r * cols + c];
  }
  return sums;
}

void expectContiguous(const HostTensor& tensor) {
  EXPECT_EQ(tensor.strides(), test::contiguousStrides(tensor.sizes())) << tensor.describe();
}

// ---- broadcast and expanded inputs ----

TEST(EvaluateLayout, BroadcastInputDimsTakeTheOtherOperandsSize) {
  Fusion fusion;
  TensorView* row = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1}});
  TensorView* col = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  fusion.addOutput(mul(row, col));  // an outer product
  RandomTensors random(131);
  const HostTensor tr = random.uniform(DataType::Float32, {1, 5});
  const HostTensor tc = random.uniform(DataType::Float32, {4, 1});
  const std::vector<double> vr = valuesOf(tr);
  const std::vector<double> vc = valuesOf(tc);
  std::vector<double> expected;
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 5; ++j) expected.push_back(vc[i] * vr[j]);
  }
  const HostTensor out = evaluateFusionTensors(fusion, {tr, tc})[0];
  expectClose(out, {DataType::Float32, {4, 5}, expected});
  expectContiguous(out);
}

TEST(EvaluateLayout, BroadcastDimMayHaveAnyStride) {
  // The stride of a size-1 dim is never used to address anything.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1}});
  fusion.addOutput(exp(x));
  RandomTensors random(132);
  const HostTensor base = random.uniform(DataType::Float32, {1, 6});
  const HostTensor odd =
      HostTensor::borrow(DataType::Float32, {1, 6}, {999, 1}, base.data(), base.owner());
  expectClose(
      evaluateFusionTensors(fusion, {odd})[0],
      {DataType::Float32, {1, 6}, mapValues(valuesOf(base), [](double v) { return std::exp(v); })});
}

TEST(EvaluateLayout, ExpandedInputWithStrideZero) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, false}});
  fusion.addOutput(add(x, 1.0));
  fusion.addOutput(sum(x, {1}));
  RandomTensors random(133);
  const HostTensor base = random.uniform(DataType::Float32, {3, 1});
  const HostTensor expanded = base.expanded({3, 5});
  ASSERT_EQ(expanded.strides()[1], 0);
  const std::vector<double> v = test::broadcastValues(valuesOf(base), {3, 1}, {3, 5});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {expanded});
  expectClose(out[0], {DataType::Float32, {3, 5}, mapValues(v, [](double a) { return a + 1; })});
  expectClose(out[1], {DataType::Float32, {3}, rowSums(v, 3, 5)});
  expectContiguous(out[0]);
}

TEST(EvaluateLayout, ExpandedMiddleDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion,
      {.dtype = DataType::Int32, .sizes = {-1, -1, -1}, .contiguity = {false, false, true}});
  TensorView* y = makeSymbolicTensor(fusion, 3, DataType::Int32);
  fusion.addOutput(sub(x, y));
  RandomTensors random(134);
  const HostTensor base = random.uniform(DataType::Int32, {2, 1, 4}, -20, 20);
  const HostTensor tx = base.expanded({2, 3, 4});
  const HostTensor ty = random.uniform(DataType::Int32, {2, 3, 4}, -20, 20);
  const std::vector<double> vx = test::broadcastValues(valuesOf(base), {2, 1, 4}, {2, 3, 4});
  expectClose(evaluateFusionTensors(fusion, {tx, ty})[0],
              {DataType::Int32,
               {2, 3, 4},
               test::zipValues(vx, valuesOf(ty), [](double a, double b) { return a - b; })});
}

// ---- strided and permuted inputs ----

TEST(EvaluateLayout, StridedInnerDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {true, false}});
  fusion.addOutput(mul(x, 2.0));
  fusion.addOutput(sum(x, {1}));
  RandomTensors random(135);
  const HostTensor logical = random.uniform(DataType::Float32, {4, 6});
  const HostTensor gapped = withGaps(logical, 1, 2);
  ASSERT_EQ(gapped.strides(), (Sizes{12, 2}));
  const std::vector<double> v = valuesOf(logical);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {gapped});
  expectClose(out[0], {DataType::Float32, {4, 6}, mapValues(v, [](double a) { return 2 * a; })});
  expectClose(out[1], {DataType::Float32, {4}, rowSums(v, 4, 6)});
}

TEST(EvaluateLayout, StridedOuterDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float64, .sizes = {-1, -1}, .contiguity = {false, true}});
  fusion.addOutput(neg(x));
  RandomTensors random(136);
  const HostTensor logical = random.uniform(DataType::Float64, {5, 3});
  const HostTensor gapped = withGaps(logical, 0, 3);
  ASSERT_EQ(gapped.strides(), (Sizes{9, 1}));
  expectClose(
      evaluateFusionTensors(fusion, {gapped})[0],
      {DataType::Float64, {5, 3}, mapValues(valuesOf(logical), [](double a) { return -a; })});
}

TEST(EvaluateLayout, ColumnMajorInput) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  TensorView* y = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(add(x, y));
  fusion.addOutput(sum(x, {1}));
  RandomTensors random(137);
  const HostTensor logical = random.uniform(DataType::Float32, {4, 7});
  const HostTensor column_major = withAllocationOrder(logical, {1, 0});
  ASSERT_EQ(column_major.strides(), (Sizes{1, 4}));
  const HostTensor ty = random.uniform(DataType::Float32, {4, 7});
  const std::vector<double> v = valuesOf(logical);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {column_major, ty});
  expectClose(out[0], {DataType::Float32,
                       {4, 7},
                       test::zipValues(v, valuesOf(ty), [](double a, double b) { return a + b; })});
  expectClose(out[1], {DataType::Float32, {4}, rowSums(v, 4, 7)});
  expectContiguous(out[0]);
}

TEST(EvaluateLayout, RandomAllocationOrdersOfRankFour) {
  RandomTensors random(138);
  const Sizes sizes = {2, 3, 4, 5};
  for (int trial = 0; trial < 6; ++trial) {
    const std::vector<int64_t> order = random.permutation(4);
    SCOPED_TRACE(::testing::PrintToString(order));
    Fusion fusion;
    TensorView* x = makeInputTensor(
        fusion, {.dtype = DataType::Float32, .sizes = {-1, -1, -1, -1}, .allocation_order = order});
    fusion.addOutput(sigmoid(x));
    fusion.addOutput(sum(x, {0, 3}));
    const HostTensor logical = random.uniform(DataType::Float32, sizes);
    const HostTensor stored = withAllocationOrder(logical, order);
    const std::vector<double> v = valuesOf(logical);
    std::vector<double> sums(3 * 4, 0.0);
    for (int64_t flat = 0; flat < test::numelOf(sizes); ++flat) {
      const Sizes i = test::unravelIndex(flat, sizes);
      sums[i[1] * 4 + i[2]] += v[flat];
    }
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {stored});
    expectClose(out[0], {DataType::Float32, sizes,
                         mapValues(v, [](double a) { return 1 / (1 + std::exp(-a)); })});
    expectClose(out[1], {DataType::Float32, {3, 4}, sums});
  }
}

TEST(EvaluateLayout, PermutedAndStridedTogether) {
  // Allocation order {1, 0} and a gap along dim 0, which is innermost in memory.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32,
                                           .sizes = {-1, -1},
                                           .contiguity = {false, true},
                                           .allocation_order = {1, 0}});
  fusion.addOutput(mul(x, x));
  RandomTensors random(139);
  const HostTensor logical = random.uniform(DataType::Float32, {3, 4});
  const HostTensor stored = withGaps(logical, 0, 2, {1, 0});
  ASSERT_EQ(stored.strides(), (Sizes{2, 6}));
  expectClose(
      evaluateFusionTensors(fusion, {stored})[0],
      {DataType::Float32, {3, 4}, mapValues(valuesOf(logical), [](double a) { return a * a; })});
}

TEST(EvaluateLayout, PermutedReducedPrecisionInputThroughAReduction) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::BFloat16, .sizes = {-1, -1, -1}, .allocation_order = {2, 0, 1}});
  fusion.addOutput(sum(x, {-1}));
  RandomTensors random(140);
  const HostTensor logical = random.uniform(DataType::BFloat16, {3, 4, 9});
  const std::vector<double> v = valuesOf(logical);
  expectClose(evaluateFusionTensors(fusion, {withAllocationOrder(logical, {2, 0, 1})})[0],
              {DataType::BFloat16, {3, 4}, rowSums(v, 12, 9)});
}

TEST(EvaluateLayout, ShapeOpsOnNonContiguousInputs) {
  // Data movement reads its input through the strides: a column-major x and a gapped y.
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  TensorView* y = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {true, false}});
  TensorView* index =
      makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}, .contiguity = {false}});
  fusion.addOutput(permute(x, {1, 0}));
  fusion.addOutput(slice(y, 1, 1, std::nullopt, 2));
  fusion.addOutput(pad(x, {1, 0}, -1.0));
  fusion.addOutput(cat({x, y}, 0));
  fusion.addOutput(index_select(y, 1, index));
  fusion.addOutput(reshape(x, {-1}));
  RandomTensors random(146);
  const HostTensor lx = random.uniform(DataType::Float32, {3, 4});
  const HostTensor ly = random.uniform(DataType::Float32, {2, 4});
  const HostTensor lindex = tensorOf(DataType::Int64, {3}, {3, 0, -1});
  const std::vector<HostTensor> out = evaluateFusionTensors(
      fusion, {withAllocationOrder(lx, {1, 0}), withGaps(ly, 1, 2), withGaps(lindex, 0, 3)});
  ASSERT_EQ(out.size(), 6u);
  const std::vector<double> vx = valuesOf(lx);
  const std::vector<double> vy = valuesOf(ly);
  auto at = [](const std::vector<double>& v, int64_t cols, int64_t r, int64_t c) {
    return v[r * cols + c];
  };
  std::vector<double> transposed;
  for (int64_t c = 0; c < 4; ++c) {
    for (int64_t r = 0; r < 3; ++r) transposed.push_back(at(vx, 4, r, c));
  }
  expectClose(out[0], {DataType::Float32, {4, 3}, transposed});
  expectClose(out[1], {DataType::Float32,
                       {2, 2},
                       {at(vy, 4, 0, 1), at(vy, 4, 0, 3), at(vy, 4, 1, 1), at(vy, 4, 1, 3)}});
  std::vector<double> padded;
  for (int64_t r = 0; r < 3; ++r) {
    padded.push_back(-1.0);
    for (int64_t c = 0; c < 4; ++c) padded.push_back(at(vx, 4, r, c));
  }
  expectClose(out[2], {DataType::Float32, {3, 5}, padded});
  std::vector<double> stacked = vx;
  stacked.insert(stacked.end(), vy.begin(), vy.end());
  expectClose(out[3], {DataType::Float32, {5, 4}, stacked});
  expectClose(out[4], {DataType::Float32,
                       {2, 3},
                       {at(vy, 4, 0, 3), at(vy, 4, 0, 0), at(vy, 4, 0, 3), at(vy, 4, 1, 3),
                        at(vy, 4, 1, 0), at(vy, 4, 1, 3)}});
  expectClose(out[5], {DataType::Float32, {12}, vx});
  for (const HostTensor& tensor : out) expectContiguous(tensor);
}

TEST(EvaluateLayout, InputReturnedAsOutputIsAContiguousCopy) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .allocation_order = {1, 0}});
  fusion.addOutput(x);
  RandomTensors random(147);
  const HostTensor logical = random.uniform(DataType::Float32, {3, 5});
  const HostTensor stored = withAllocationOrder(logical, {1, 0});
  const HostTensor out = evaluateFusionTensors(fusion, {stored})[0];
  expectClose(out, logical, test::Tolerance{});
  expectContiguous(out);
  EXPECT_NE(out.data(), stored.data());
}

// ---- zero-size dims ----

TEST(EvaluateLayout, ZeroSizeDimThroughPointwiseOps) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(exp(add(x, y)));
  const HostTensor tx = HostTensor::empty(DataType::Float32, {0, 5});
  const HostTensor ty = HostTensor::empty(DataType::Float32, {0, 5});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, ty});
  expectClose(out[0], {DataType::Float32, {0, 5}, {}});
}

TEST(EvaluateLayout, ReductionsOverZeroSizeDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(sum(x, {0}));
  fusion.addOutput(sum(x, {1}));
  fusion.addOutput(prod(x, {0}));
  fusion.addOutput(mean(x, {0}));
  fusion.addOutput(sum(x, {}));
  const HostTensor input = HostTensor::empty(DataType::Float32, {0, 4});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  ASSERT_EQ(out.size(), 5u);
  expectClose(out[0], {DataType::Float32, {4}, {0, 0, 0, 0}});
  expectClose(out[1], {DataType::Float32, {0}, {}});
  expectClose(out[2], {DataType::Float32, {4}, {1, 1, 1, 1}});
  expectClose(out[3], {DataType::Float32, {4}, {kNan, kNan, kNan, kNan}});
  expectClose(out[4], {DataType::Float32, {}, {0}});
}

TEST(EvaluateLayout, FixedZeroSizeInputAndEmptySlice) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {3, 0}});
  TensorView* y = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(sum(x, {1}));
  fusion.addOutput(slice(y, 0, 4, 2));  // start past stop: no elements
  fusion.addOutput(cat({slice(y, 0, 0, 0), y}, 0));
  RandomTensors random(141);
  const HostTensor ty = random.uniform(DataType::Float32, {6});
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {HostTensor::empty(DataType::Int64, {3, 0}), ty});
  ASSERT_EQ(out.size(), 3u);
  expectClose(out[0], {DataType::Int64, {3}, {0, 0, 0}});
  expectClose(out[1], {DataType::Float32, {0}, {}});
  expectClose(out[2], {DataType::Float32, {6}, valuesOf(ty)});
}

// ---- size-1 dims ----

TEST(EvaluateLayout, SymbolicDimsOfSizeOne) {
  // Symbolic dims bound to 1 are ordinary dims of extent 1, not broadcasts.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = makeSymbolicTensor(fusion, 3);
  fusion.addOutput(mul(x, y));
  fusion.addOutput(sum(x, {0, 2}));
  RandomTensors random(142);
  const HostTensor tx = random.uniform(DataType::Float32, {1, 4, 1});
  const HostTensor ty = random.uniform(DataType::Float32, {1, 4, 1});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, ty});
  expectClose(out[0], {DataType::Float32,
                       {1, 4, 1},
                       test::zipValues(valuesOf(tx), valuesOf(ty),
                                       [](double a, double b) { return a * b; })});
  expectClose(out[1], {DataType::Float32, {4}, valuesOf(tx)});
}

TEST(EvaluateLayout, AllDimsOfSizeOne) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {1, 1}});
  TensorView* y = makeSymbolicTensor(fusion, 2, DataType::Float64);
  fusion.addOutput(sub(y, x));
  fusion.addOutput(sum(x, {}));
  RandomTensors random(143);
  const HostTensor tx = random.uniform(DataType::Float64, {1, 1});
  const HostTensor ty = random.uniform(DataType::Float64, {2, 3});
  const double value = valuesOf(tx)[0];
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, ty});
  expectClose(
      out[0],
      {DataType::Float64, {2, 3}, mapValues(valuesOf(ty), [&](double b) { return b - value; })});
  expectClose(out[1], {DataType::Float64, {}, {value}});
}

// ---- 0-d tensors and scalar inputs ----

TEST(EvaluateLayout, ZeroDimTensorInputs) {
  Fusion fusion;
  TensorView* s = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(exp(s));
  fusion.addOutput(add(x, s));
  fusion.addOutput(sum(s, {}));
  fusion.addOutput(sum(mul(x, s), {}));
  const HostTensor ts = test::scalarTensor(DataType::Float32, 0.5);
  RandomTensors random(144);
  const HostTensor tx = random.uniform(DataType::Float32, {3, 4});
  const std::vector<double> v = valuesOf(tx);
  double total = 0;
  for (double a : v) total += a * 0.5;
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {ts, tx});
  ASSERT_EQ(out.size(), 4u);
  expectClose(out[0], {DataType::Float32, {}, {std::exp(0.5)}});
  expectClose(out[1], {DataType::Float32, {3, 4}, mapValues(v, [](double a) { return a + 0.5; })});
  expectClose(out[2], {DataType::Float32, {}, {0.5}});
  expectClose(out[3], {DataType::Float32, {}, {total}});
}

TEST(EvaluateLayout, ScalarInputsOfEveryCategory) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  Scalar* factor = makeInputScalar(fusion, DataType::Float64);
  Scalar* offset = makeInputScalar(fusion, DataType::Int64);
  Scalar* enabled = makeInputScalar(fusion, DataType::Bool);
  fusion.addOutput(where(enabled, add(mul(x, factor), offset), x));
  const HostTensor tx = tensorOf(DataType::Float32, {3}, {1.0, -2.0, 0.5});
  const std::vector<EvaluatorArgument> on =
      evaluateFusion(fusion, {tx, ScalarValue(3.0), ScalarValue(int64_t{-1}), ScalarValue(true)});
  const std::vector<EvaluatorArgument> off =
      evaluateFusion(fusion, {tx, ScalarValue(3.0), ScalarValue(int64_t{-1}), ScalarValue(false)});
  expectClose(std::get<HostTensor>(on[0]), {DataType::Float32, {3}, {2.0, -7.0, 0.5}});
  expectClose(std::get<HostTensor>(off[0]), {DataType::Float32, {3}, {1.0, -2.0, 0.5}});
}

TEST(EvaluateLayout, SameFusionWithDifferentSizes) {
  // Symbolic sizes are bound afresh on each run.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(sum(x, {0}));
  RandomTensors random(145);
  for (const Sizes& sizes : {Sizes{3, 4}, Sizes{1, 9}, Sizes{7, 1}, Sizes{0, 2}}) {
    SCOPED_TRACE(::testing::PrintToString(sizes));
    const HostTensor input = random.uniform(DataType::Float32, sizes);
    std::vector<double> sums(static_cast<size_t>(sizes[1]), 0.0);
    const std::vector<double> v = valuesOf(input);
    for (int64_t i = 0; i < sizes[0]; ++i) {
      for (int64_t j = 0; j < sizes[1]; ++j) sums[j] += v[i * sizes[1] + j];
    }
    expectClose(evaluateFusionTensors(fusion, {input})[0], {DataType::Float32, {sizes[1]}, sums});
  }
}

}  // namespace
}  // namespace braze
