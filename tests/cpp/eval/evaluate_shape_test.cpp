// Shape and data-movement ops through the reference evaluator: every output element is
// checked against the input element a plain index computation says it comes from.

#include <functional>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/error_matchers.h"
#include "support/multi_index.h"
#include "support/random_tensor.h"
#include "support/reference_loops.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::RandomTensors;
using test::tensorOf;
using test::throwsError;
using test::valuesOf;

using Sizes = std::vector<int64_t>;
using Index = std::vector<int64_t>;

/// Expected values of a result of `sizes`: element `index` is `f(index)`.
std::vector<double> generate(const Sizes& sizes, const std::function<double(const Index&)>& f) {
  std::vector<double> values;
  for (int64_t flat = 0; flat < test::numelOf(sizes); ++flat) {
    values.push_back(f(test::unravelIndex(flat, sizes)));
  }
  return values;
}

/// Element access into a row-major value list of `sizes`.
struct Grid {
  std::vector<double> values;
  Sizes sizes;
  double operator()(const Index& index) const { return values[test::ravelIndex(index, sizes)]; }
};

Grid gridOf(const HostTensor& tensor) {
  return {valuesOf(tensor), tensor.sizes()};
}

HostTensor evaluateSingle(const Fusion& fusion, const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> outputs = evaluateFusionTensors(fusion, inputs);
  EXPECT_EQ(outputs.size(), 1u);
  return outputs.at(0);
}

// ---- broadcast, broadcast_in_dim, expand ----

TEST(EvaluateShape, BroadcastInsertsUnitDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(broadcast(x, {true, false, true, false}));
  RandomTensors random(51);
  const HostTensor input = random.uniform(DataType::Float32, {3, 4});
  expectClose(evaluateSingle(fusion, {input}), {DataType::Float32, {1, 3, 1, 4}, valuesOf(input)});
}

TEST(EvaluateShape, BroadcastThenAddExpandsAlongNewDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(add(broadcast(x, {false, true}), y));  // x[:, None] + y
  RandomTensors random(52);
  const HostTensor tx = random.uniform(DataType::Float32, {3});
  const HostTensor ty = random.uniform(DataType::Float32, {3, 5});
  const Grid gx = gridOf(tx);
  const Grid gy = gridOf(ty);
  expectClose(evaluateSingle(fusion, {tx, ty}),
              {DataType::Float32, {3, 5}, generate({3, 5}, [&](const Index& i) {
                 return gx({i[0]}) + gy(i);
               })});
}

TEST(EvaluateShape, BroadcastInDimPlacesAndExpandsDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* column = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  fusion.addOutput(broadcast_in_dim(x, {3, 4}, {1}));
  fusion.addOutput(broadcast_in_dim(column, {2, 3, 4}, {1, 2}));
  RandomTensors random(53);
  const HostTensor tx = random.uniform(DataType::Float32, {4});
  const HostTensor tc = random.uniform(DataType::Float32, {3, 1});
  const Grid gx = gridOf(tx);
  const Grid gc = gridOf(tc);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, tc});
  expectClose(
      out[0],
      {DataType::Float32, {3, 4}, generate({3, 4}, [&](const Index& i) { return gx({i[1]}); })});
  expectClose(out[1], {DataType::Float32, {2, 3, 4}, generate({2, 3, 4}, [&](const Index& i) {
                         return gc({i[1], 0});
                       })});
}

TEST(EvaluateShape, ExpandBroadcastDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1, 1}});
  fusion.addOutput(expand(x, {-1, 5}));
  fusion.addOutput(expand(broadcast(x, {true, false, false}), {2, -1, 3}));
  RandomTensors random(54);
  const HostTensor input = random.uniform(DataType::Int64, {4, 1}, -100, 100);
  const Grid g = gridOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Int64, {4, 5}, generate({4, 5}, [&](const Index& i) {
                         return g({i[0], 0});
                       })});
  expectClose(out[1], {DataType::Int64, {2, 4, 3}, generate({2, 4, 3}, [&](const Index& i) {
                         return g({i[1], 0});
                       })});
}

TEST(EvaluateShape, ReductionOverAnExpandedDim) {
  // Summing n copies of a value gives n times the value.
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  TensorView* wide = expand(x, {-1, 5});
  fusion.addOutput(sum(wide, {1}));
  fusion.addOutput(mul(wide, wide));
  RandomTensors random(77);
  const HostTensor input = random.uniform(DataType::Float32, {4, 1});
  const std::vector<double> v = valuesOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {4}, test::mapValues(v, [](double a) { return 5 * a; })});
  expectClose(out[1], {DataType::Float32, {4, 5}, generate({4, 5}, [&](const Index& i) {
                         return v[i[0]] * v[i[0]];
                       })});
}

TEST(EvaluateShape, ExpandToAScalarInputSize) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1}});
  Scalar* rows = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(expand(x, {rows, -1}));
  RandomTensors random(55);
  const HostTensor input = random.uniform(DataType::Float32, {1, 3});
  const Grid g = gridOf(input);
  expectClose(std::get<HostTensor>(evaluateFusion(fusion, {input, ScalarValue(int64_t{4})})[0]),
              {DataType::Float32, {4, 3}, generate({4, 3}, [&](const Index& i) {
                 return g({0, i[1]});
               })});
}

// ---- reshape, flatten, squeeze, unsqueeze ----

TEST(EvaluateShape, ReshapeKeepsRowMajorOrder) {
  const std::vector<std::vector<Operand>> shapes = {{2, 12}, {3, -1, 2}, {24},
                                                    {-1},    {4, 1, 6},  {2, 2, 2, 3}};
  const std::vector<Sizes> expected_sizes = {{2, 12}, {3, 4, 2}, {24},
                                             {24},    {4, 1, 6}, {2, 2, 2, 3}};
  for (size_t c = 0; c < shapes.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2);
    fusion.addOutput(reshape(x, shapes[c]));
    RandomTensors random(56);
    const HostTensor input = random.uniform(DataType::Float32, {4, 6});
    expectClose(evaluateSingle(fusion, {input}),
                {DataType::Float32, expected_sizes[c], valuesOf(input)});
  }
}

TEST(EvaluateShape, ReshapeOfFixedSizesAndBack) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {2, 3, 4}});
  TensorView* y = reshape(x, {6, -1});
  fusion.addOutput(y);
  fusion.addOutput(reshape(permute(y, {1, 0}), {2, 2, 6}));
  RandomTensors random(57);
  const HostTensor input = random.uniform(DataType::Float64, {2, 3, 4});
  const Grid g{valuesOf(input), {6, 4}};
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float64, {6, 4}, valuesOf(input)});
  // The transpose is [4, 6]; its row-major values reshaped.
  const std::vector<double> transposed = generate({4, 6}, [&](const Index& i) {
    return g({i[1], i[0]});
  });
  expectClose(out[1], {DataType::Float64, {2, 2, 6}, transposed});
}

TEST(EvaluateShape, ReshapeToScalarInputSizes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* rows = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(reshape(x, {rows, -1}));
  RandomTensors random(58);
  const HostTensor input = random.uniform(DataType::Float32, {12});
  expectClose(std::get<HostTensor>(evaluateFusion(fusion, {input, ScalarValue(int64_t{3})})[0]),
              {DataType::Float32, {3, 4}, valuesOf(input)});
}

TEST(EvaluateShape, ReshapeToAnIncompatibleRunTimeShapeNamesTheCounts) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* rows = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(reshape(x, {rows, -1}));
  RandomTensors random(78);
  const HostTensor input = random.uniform(DataType::Float32, {12});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {input, ScalarValue(int64_t{5})});
      },
      {"reshape", "12"}));
}

TEST(EvaluateShape, FlattenRanges) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  fusion.addOutput(flatten(x));
  fusion.addOutput(flatten(x, 1));
  fusion.addOutput(flatten(x, 0, 1));
  fusion.addOutput(flatten(x, -2, -1));
  RandomTensors random(59);
  const HostTensor input = random.uniform(DataType::Float32, {2, 3, 4});
  const std::vector<double> v = valuesOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {24}, v});
  expectClose(out[1], {DataType::Float32, {2, 12}, v});
  expectClose(out[2], {DataType::Float32, {6, 4}, v});
  expectClose(out[3], {DataType::Float32, {2, 12}, v});
}

TEST(EvaluateShape, SqueezeAndUnsqueeze) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1, -1, 1}});
  fusion.addOutput(squeeze(x, {1, 3}));
  fusion.addOutput(squeeze(x, {-1}));
  TensorView* y = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(unsqueeze(y, 0));
  fusion.addOutput(unsqueeze(y, -1));
  fusion.addOutput(unsqueeze(y, 1));
  RandomTensors random(60);
  const HostTensor tx = random.uniform(DataType::Float32, {3, 1, 4, 1});
  const HostTensor ty = random.uniform(DataType::Float32, {3, 4});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, ty});
  ASSERT_EQ(out.size(), 5u);
  expectClose(out[0], {DataType::Float32, {3, 4}, valuesOf(tx)});
  expectClose(out[1], {DataType::Float32, {3, 1, 4}, valuesOf(tx)});
  expectClose(out[2], {DataType::Float32, {1, 3, 4}, valuesOf(ty)});
  expectClose(out[3], {DataType::Float32, {3, 4, 1}, valuesOf(ty)});
  expectClose(out[4], {DataType::Float32, {3, 1, 4}, valuesOf(ty)});
}

// ---- permute, transpose ----

TEST(EvaluateShape, PermuteEveryOrderOfThreeDims) {
  const std::vector<Sizes> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  RandomTensors random(61);
  const HostTensor input = random.uniform(DataType::Float32, {2, 3, 5});
  const Grid g = gridOf(input);
  for (const Sizes& order : orders) {
    SCOPED_TRACE(::testing::PrintToString(order));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 3);
    fusion.addOutput(permute(x, order));
    const Sizes out_sizes = {input.sizes()[order[0]], input.sizes()[order[1]],
                             input.sizes()[order[2]]};
    expectClose(evaluateSingle(fusion, {input}),
                {DataType::Float32, out_sizes, generate(out_sizes, [&](const Index& i) {
                   Index source(3);
                   for (size_t d = 0; d < 3; ++d) source[order[d]] = i[d];
                   return g(source);
                 })});
  }
}

TEST(EvaluateShape, TransposeWithNegativeDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3, DataType::Int32);
  fusion.addOutput(transpose(x, 0, -1));
  fusion.addOutput(transpose(x, -2, -1));
  RandomTensors random(62);
  const HostTensor input = random.uniform(DataType::Int32, {2, 3, 4}, -50, 50);
  const Grid g = gridOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Int32, {4, 3, 2}, generate({4, 3, 2}, [&](const Index& i) {
                         return g({i[2], i[1], i[0]});
                       })});
  expectClose(out[1], {DataType::Int32, {2, 4, 3}, generate({2, 4, 3}, [&](const Index& i) {
                         return g({i[0], i[2], i[1]});
                       })});
}

// ---- slice ----

struct SliceCase {
  const char* name;
  std::vector<SliceRange> ranges;
  /// Per dim: the source positions the output keeps.
  std::vector<Sizes> kept;
};

TEST(EvaluateShape, SliceWithPythonSemantics) {
  auto positions = [](int64_t start, int64_t stop, int64_t step) {
    Sizes result;
    for (int64_t i = start; i < stop; i += step) result.push_back(i);
    return result;
  };
  const Sizes all_cols = positions(0, 8, 1);
  const std::vector<SliceCase> cases = {
      {"plain", {{.start = 2, .stop = 7}}, {positions(2, 7, 1), all_cols}},
      {"negative_start", {{.start = -3}}, {positions(7, 10, 1), all_cols}},
      {"negative_stop", {{.start = 1, .stop = -2}}, {positions(1, 8, 1), all_cols}},
      {"stepped_open", {{.start = 1, .stop = std::nullopt, .step = 3}}, {{1, 4, 7}, all_cols}},
      {"stop_past_end", {{.start = 5, .stop = 100}}, {positions(5, 10, 1), all_cols}},
      {"start_before_begin", {{.start = -100, .stop = 2}}, {{0, 1}, all_cols}},
      {"both_dims",
       {{.start = 0, .stop = 10, .step = 4}, {.start = -5, .stop = -1, .step = 2}},
       {{0, 4, 8}, {3, 5}}},
      {"step_larger_than_size", {{.start = 3, .stop = std::nullopt, .step = 20}}, {{3}, all_cols}},
  };
  RandomTensors random(63);
  const HostTensor input = random.uniform(DataType::Float32, {10, 8});
  const Grid g = gridOf(input);
  for (const SliceCase& c : cases) {
    SCOPED_TRACE(c.name);
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2);
    fusion.addOutput(slice(x, c.ranges));
    const Sizes out_sizes = {static_cast<int64_t>(c.kept[0].size()),
                             static_cast<int64_t>(c.kept[1].size())};
    expectClose(evaluateSingle(fusion, {input}),
                {DataType::Float32, out_sizes, generate(out_sizes, [&](const Index& i) {
                   return g({c.kept[0][i[0]], c.kept[1][i[1]]});
                 })});
  }
}

TEST(EvaluateShape, SliceOneDimAndFixedSizes) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {6, 9}});
  fusion.addOutput(slice(x, 1, -5, -1, 2));
  fusion.addOutput(slice(x, 0, 4, std::nullopt));
  RandomTensors random(64);
  const HostTensor input = random.uniform(DataType::Float32, {6, 9});
  const Grid g = gridOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  // Columns -5 .. -1 of 9 are 4 .. 7; every second one: 4, 6.
  expectClose(out[0], {DataType::Float32, {6, 2}, generate({6, 2}, [&](const Index& i) {
                         return g({i[0], 4 + 2 * i[1]});
                       })});
  expectClose(out[1], {DataType::Float32, {2, 9}, generate({2, 9}, [&](const Index& i) {
                         return g({4 + i[0], i[1]});
                       })});
}

TEST(EvaluateShape, SliceWithScalarInputBounds) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* start = makeInputScalar(fusion, DataType::Int64);
  Scalar* stop = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(slice(x, 0, start, Operand(stop)));
  RandomTensors random(65);
  const HostTensor input = random.uniform(DataType::Float32, {10});
  const std::vector<double> v = valuesOf(input);
  // Negative bounds count from the end at run time: [-7, -2) of 10 is [3, 8).
  expectClose(std::get<HostTensor>(evaluateFusion(
                  fusion, {input, ScalarValue(int64_t{-7}), ScalarValue(int64_t{-2})})[0]),
              {DataType::Float32, {5}, std::vector<double>(v.begin() + 3, v.begin() + 8)});
  expectClose(std::get<HostTensor>(evaluateFusion(
                  fusion, {input, ScalarValue(int64_t{2}), ScalarValue(int64_t{50})})[0]),
              {DataType::Float32, {8}, std::vector<double>(v.begin() + 2, v.end())});
}

// ---- pad ----

TEST(EvaluateShape, PadLastDimAndBothDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(pad(x, {1, 2}));
  fusion.addOutput(pad(x, {1, 1, 2, 0}, 1.5));
  RandomTensors random(66);
  const HostTensor input = random.uniform(DataType::Float32, {3, 4});
  const Grid g = gridOf(input);
  auto padded = [&](int64_t row_left, int64_t col_left, double fill) {
    return [&g, row_left, col_left, fill](const Index& i) {
      const int64_t r = i[0] - row_left;
      const int64_t c = i[1] - col_left;
      return (r >= 0 && r < 3 && c >= 0 && c < 4) ? g({r, c}) : fill;
    };
  };
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {3, 7}, generate({3, 7}, padded(0, 1, 0.0))});
  expectClose(out[1], {DataType::Float32, {5, 6}, generate({5, 6}, padded(2, 1, 1.5))});
}

TEST(EvaluateShape, PadWithNegativeWidthsCrops) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Int32);
  fusion.addOutput(pad(x, {-1, 2}, 7));
  fusion.addOutput(pad(x, {0, 0, -1, -1}));
  fusion.addOutput(pad(x, {2, -3, -2, 1}, -9));
  RandomTensors random(67);
  const HostTensor input = random.uniform(DataType::Int32, {4, 5}, 1, 50);
  const Grid g = gridOf(input);
  auto padded = [&](int64_t row_left, int64_t col_left, double fill) {
    return [&g, row_left, col_left, fill](const Index& i) {
      const int64_t r = i[0] - row_left;
      const int64_t c = i[1] - col_left;
      return (r >= 0 && r < 4 && c >= 0 && c < 5) ? g({r, c}) : fill;
    };
  };
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Int32, {4, 6}, generate({4, 6}, padded(0, -1, 7))});
  expectClose(out[1], {DataType::Int32, {2, 5}, generate({2, 5}, padded(-1, 0, 0))});
  // Last dim: 2 + 5 - 3 = 4; first dim: 4 - 2 + 1 = 3.
  expectClose(out[2], {DataType::Int32, {3, 4}, generate({3, 4}, padded(-2, 2, -9))});
}

TEST(EvaluateShape, PadOfReducedPrecisionWithFloatValue) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::BFloat16);
  fusion.addOutput(pad(x, {2, 1}, -0.5));
  RandomTensors random(68);
  const HostTensor input = random.uniform(DataType::BFloat16, {3});
  const std::vector<double> v = valuesOf(input);
  expectClose(evaluateSingle(fusion, {input}),
              {DataType::BFloat16, {6}, {-0.5, -0.5, v[0], v[1], v[2], -0.5}});
}

// ---- cat ----

TEST(EvaluateShape, CatAlongEachDim) {
  RandomTensors random(69);
  const HostTensor a = random.uniform(DataType::Float32, {2, 3});
  const HostTensor b = random.uniform(DataType::Float32, {4, 3});
  const HostTensor c = random.uniform(DataType::Float32, {2, 5});
  const Grid ga = gridOf(a);
  const Grid gb = gridOf(b);
  const Grid gc = gridOf(c);
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  TensorView* z = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(cat({x, y}, 0));
  fusion.addOutput(cat({x, z, x}, -1));
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {a, b, c});
  expectClose(out[0], {DataType::Float32, {6, 3}, generate({6, 3}, [&](const Index& i) {
                         return i[0] < 2 ? ga(i) : gb({i[0] - 2, i[1]});
                       })});
  expectClose(out[1], {DataType::Float32, {2, 11}, generate({2, 11}, [&](const Index& i) {
                         if (i[1] < 3) return ga(i);
                         if (i[1] < 8) return gc({i[0], i[1] - 3});
                         return ga({i[0], i[1] - 8});
                       })});
}

TEST(EvaluateShape, CatPromotesDtypes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* y = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(cat({x, y}, 0));
  const HostTensor a = tensorOf(DataType::Float16, {2}, {0.5, -1.25});
  const HostTensor b = tensorOf(DataType::Float32, {3}, {1.0 / 3.0, 2, 3});
  expectClose(evaluateSingle(fusion, {a, b}),
              {DataType::Float32, {5}, {0.5, -1.25, 1.0 / 3.0, 2, 3}});
}

// ---- select, index_select, gather ----

TEST(EvaluateShape, SelectWithConstantIndices) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  fusion.addOutput(select(x, 1, 2));
  fusion.addOutput(select(x, -1, -2));
  fusion.addOutput(select(x, 0, 0));
  RandomTensors random(70);
  const HostTensor input = random.uniform(DataType::Float32, {3, 4, 5});
  const Grid g = gridOf(input);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  expectClose(out[0], {DataType::Float32, {3, 5}, generate({3, 5}, [&](const Index& i) {
                         return g({i[0], 2, i[1]});
                       })});
  expectClose(out[1], {DataType::Float32, {3, 4}, generate({3, 4}, [&](const Index& i) {
                         return g({i[0], i[1], 3});
                       })});
  expectClose(out[2], {DataType::Float32, {4, 5}, generate({4, 5}, [&](const Index& i) {
                         return g({0, i[0], i[1]});
                       })});
}

TEST(EvaluateShape, SelectWithScalarInputIndex) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  Scalar* index = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(select(x, 0, index));
  RandomTensors random(71);
  const HostTensor input = random.uniform(DataType::Float32, {4, 3});
  const Grid g = gridOf(input);
  for (int64_t i : {0, 3, -1, -4}) {
    SCOPED_TRACE(i);
    const int64_t row = i < 0 ? i + 4 : i;
    expectClose(std::get<HostTensor>(evaluateFusion(fusion, {input, ScalarValue(i)})[0]),
                {DataType::Float32, {3}, {g({row, 0}), g({row, 1}), g({row, 2})}});
  }
}

TEST(EvaluateShape, SelectOutOfRangeNamesTheOpAndValue) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  Scalar* index = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(select(x, 0, index));
  RandomTensors random(72);
  const HostTensor input = random.uniform(DataType::Float32, {4, 3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {input, ScalarValue(int64_t{4})});
      },
      {"select", "4"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {input, ScalarValue(int64_t{-5})});
      },
      {"select", "-5"}));
}

TEST(EvaluateShape, IndexSelectRowsAndColumns) {
  for (DataType index_dtype : {DataType::Int64, DataType::Int32}) {
    SCOPED_TRACE(toString(index_dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2);
    TensorView* rows = makeSymbolicTensor(fusion, 1, index_dtype);
    TensorView* cols = makeSymbolicTensor(fusion, 1, index_dtype);
    fusion.addOutput(index_select(x, 0, rows));
    fusion.addOutput(index_select(x, -1, cols));
    RandomTensors random(73);
    const HostTensor input = random.uniform(DataType::Float32, {5, 4});
    const Grid g = gridOf(input);
    const HostTensor trows = tensorOf(index_dtype, {3}, {4, 0, -1});  // -1 is row 4
    const HostTensor tcols = tensorOf(index_dtype, {6}, {3, 3, 0, -4, 1, 2});
    const Sizes row_positions = {4, 0, 4};
    const Sizes col_positions = {3, 3, 0, 0, 1, 2};
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input, trows, tcols});
    expectClose(out[0], {DataType::Float32, {3, 4}, generate({3, 4}, [&](const Index& i) {
                           return g({row_positions[i[0]], i[1]});
                         })});
    expectClose(out[1], {DataType::Float32, {5, 6}, generate({5, 6}, [&](const Index& i) {
                           return g({i[0], col_positions[i[1]]});
                         })});
  }
}

TEST(EvaluateShape, IndexSelectOutOfRangeNamesTheOpAndValue) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* rows = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(index_select(x, 0, rows));
  RandomTensors random(74);
  const HostTensor input = random.uniform(DataType::Float32, {5, 4});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {input, tensorOf(DataType::Int64, {3}, {1, 9, 0})});
      },
      {"index_select", "9"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {input, tensorOf(DataType::Int64, {2}, {-6, 0})});
      },
      {"index_select", "-6"}));
}

// take (index_select with an index of any rank) and embedding_fwd, which is take along rows.
TEST(EvaluateShape, TakeWithAMatrixOfIndices) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int32);
  TensorView* scalar = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {}});
  fusion.addOutput(take(x, 1, index));
  fusion.addOutput(embedding_fwd(index, select(x, 0, 1)));
  fusion.addOutput(take(x, -1, scalar));
  RandomTensors random(79);
  const HostTensor input = random.uniform(DataType::Float32, {2, 4, 3});
  const Grid g = gridOf(input);
  const HostTensor tindex = tensorOf(DataType::Int32, {2, 3}, {3, 0, -1, 2, -4, 1});
  const Grid gi = gridOf(tindex);
  auto at = [&](const Index& i) {
    const auto k = static_cast<int64_t>(gi(i));
    return k < 0 ? k + 4 : k;
  };
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {input, tindex, tensorOf(DataType::Int64, {}, {-2})});
  expectClose(out[0], {DataType::Float32, {2, 2, 3, 3}, generate({2, 2, 3, 3}, [&](const Index& i) {
                         return g({i[0], at({i[1], i[2]}), i[3]});
                       })});
  expectClose(out[1], {DataType::Float32, {2, 3, 3}, generate({2, 3, 3}, [&](const Index& i) {
                         return g({1, at({i[0], i[1]}), i[2]});
                       })});
  expectClose(out[2], {DataType::Float32, {2, 4}, generate({2, 4}, [&](const Index& i) {
                         return g({i[0], i[1], 1});
                       })});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {input, tensorOf(DataType::Int32, {2, 3}, {0, 0, 0, 0, 4, 0}),
                                       tensorOf(DataType::Int64, {}, {0})});
      },
      {"index_select", "holds 4 at position [1, 1]", "size 4"}));
}

// torch.scatter: a copy of x with src written at the index's positions; where a position
// repeats, the last one in row-major order of the index wins.
TEST(EvaluateShape, ScatterWritesSrcAtTheIndexPositions) {
  const HostTensor tx = tensorOf(DataType::Float32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const HostTensor tsrc = tensorOf(DataType::Float32, {2, 3}, {-1, -2, -3, -4, -5, -6});
  for (const int64_t dim : {0, 1}) {
    SCOPED_TRACE(dim);
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2);
    TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int64);
    TensorView* src = makeSymbolicTensor(fusion, 2);
    fusion.addOutput(scatter(x, dim, index, src));
    const HostTensor tindex = tensorOf(DataType::Int64, {2, 2}, {2, -3, 1, 1});
    const HostTensor out = evaluateFusionTensors(fusion, {tx, tindex, tsrc})[0];
    if (dim == 1) {
      // Row 0 gets -1 at column 2 and -2 at column 1 (-3 + 4); row 1 gets -4, then -5, at 1.
      expectClose(out,
                  tensorOf(DataType::Float32, {3, 4}, {0, -2, -1, 3, 4, -5, 6, 7, 8, 9, 10, 11}));
    } else {
      // Column 0 gets -1 at row 2, then -4 at row 1; column 1 gets -2 at row 0 (-3 + 3), then
      // -5 at row 1.
      expectClose(out,
                  tensorOf(DataType::Float32, {3, 4}, {0, -2, 2, 3, -4, -5, 6, 7, -1, 9, 10, 11}));
    }
    EXPECT_TRUE(throwsError(
        [&] {
          evaluateFusionTensors(fusion,
                                {tx, tensorOf(DataType::Int64, {2, 2}, {0, 0, 0, 7}), tsrc});
        },
        {"scatter", "holds 7", "out of range for dim " + std::to_string(dim)}));
  }
}

TEST(EvaluateShape, GatherAlongEachDim) {
  RandomTensors random(75);
  const HostTensor input = random.uniform(DataType::Float64, {3, 5});
  const Grid g = gridOf(input);
  {
    SCOPED_TRACE("dim 1");
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float64);
    TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int64);
    fusion.addOutput(gather(x, 1, index));
    const HostTensor tindex = tensorOf(DataType::Int64, {3, 2}, {4, 0, -1, 2, 1, 1});
    const Grid gi = gridOf(tindex);
    expectClose(evaluateSingle(fusion, {input, tindex}),
                {DataType::Float64, {3, 2}, generate({3, 2}, [&](const Index& i) {
                   const auto k = static_cast<int64_t>(gi(i));
                   return g({i[0], k < 0 ? k + 5 : k});
                 })});
  }
  {
    SCOPED_TRACE("dim 0");
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float64);
    TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int32);
    fusion.addOutput(gather(x, 0, index));
    const HostTensor tindex = tensorOf(
        DataType::Int32, {4, 5}, {0, 1, 2, 0, 1, 2, 2, 2, 2, 2, -3, 0, 1, 0, 0, 1, 1, 1, 1, -1});
    const Grid gi = gridOf(tindex);
    expectClose(evaluateSingle(fusion, {input, tindex}),
                {DataType::Float64, {4, 5}, generate({4, 5}, [&](const Index& i) {
                   const auto k = static_cast<int64_t>(gi(i));
                   return g({k < 0 ? k + 3 : k, i[1]});
                 })});
  }
}

TEST(EvaluateShape, GatherOutOfRangeNamesTheOpAndValue) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int64);
  fusion.addOutput(gather(x, 1, index));
  RandomTensors random(76);
  const HostTensor input = random.uniform(DataType::Float32, {2, 3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {input, tensorOf(DataType::Int64, {2, 2}, {0, 1, 2, 3})});
      },
      {"gather", "3"}));
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

// triu over the last two dims, batched, with positive, zero and negative diagonals and a
// diagonal past the matrix.
TEST(EvaluateShape, TriuKeepsTheUpperTriangle) {
  for (int64_t diagonal : {-5, -1, 0, 1, 2, 4}) {
    SCOPED_TRACE(diagonal);
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1, -1}});
    TensorView* m = makeInputTensor(fusion, {.dtype = DataType::Bool, .sizes = {-1, -1}});
    fusion.addOutput(triu(x, diagonal));
    fusion.addOutput(triu(m, diagonal));
    std::vector<double> xs;
    for (int i = 0; i < 2 * 3 * 4; ++i) xs.push_back(i + 1);
    const std::vector<HostTensor> out = evaluateFusionTensors(
        fusion, {test::tensorOf(DataType::Float32, {2, 3, 4}, xs),
                 test::tensorOf(DataType::Bool, {3, 4}, std::vector<double>(12, 1.0))});
    std::vector<double> expected;
    std::vector<double> expected_mask;
    for (int b = 0; b < 2; ++b) {
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c) {
          const bool keep = c - r >= diagonal;
          expected.push_back(keep ? xs[(b * 3 + r) * 4 + c] : 0.0);
          if (b == 0) expected_mask.push_back(keep ? 1.0 : 0.0);
        }
      }
    }
    EXPECT_EQ(out[0].dtype(), DataType::Float32);
    EXPECT_EQ(test::valuesOf(out[0]), expected);
    EXPECT_EQ(out[1].dtype(), DataType::Bool);
    EXPECT_EQ(test::valuesOf(out[1]), expected_mask);
  }
}

TEST(EvaluateShape, SetCopies) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1, -1}});
  fusion.addOutput(set(x));
  fusion.addOutput(set(add(x, 1)));
  const HostTensor input = test::tensorOf(DataType::Int32, {3, 2}, {1, 2, 3, 4, 5, 6});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  EXPECT_EQ(out[0].dtype(), DataType::Int32);
  EXPECT_EQ(test::valuesOf(out[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(test::valuesOf(out[1]), (std::vector<double>{2, 3, 4, 5, 6, 7}));
}

TEST(EvaluateShape, SegmentSetCopies) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1}});
  fusion.addOutput(neg(segment_set(x)));
  const std::vector<HostTensor> out =
      evaluateFusionTensors(fusion, {test::tensorOf(DataType::Float32, {3}, {1, -2, 3})});
  EXPECT_EQ(test::valuesOf(out[0]), (std::vector<double>{-1, 2, -3}));
}

// stride_order's output comes back with its strides (column-major here); a computed tensor it
// feeds, and the input, are row-major.
TEST(EvaluateShape, StrideOrderLaysOutTheOutput) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1, -1, -1}});
  TensorView* y = stride_order(x, {0, 1, 2});
  fusion.addOutput(y);
  fusion.addOutput(add(y, 1));
  fusion.addOutput(stride_order(x, {1, 2, 0}));
  std::vector<double> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const HostTensor input = test::tensorOf(DataType::Int64, {2, 3, 4}, values);
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {input});
  EXPECT_EQ(out[0].strides(), (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(out[1].strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(out[2].strides(), (std::vector<int64_t>{4, 8, 1}));
  const std::vector<std::vector<int64_t>> positions = {{0, 0, 0}, {1, 2, 3}, {0, 1, 2}, {1, 0, 3}};
  for (const std::vector<int64_t>& at : positions) {
    EXPECT_EQ(out[0].at(at), input.at(at));
    EXPECT_EQ(out[2].at(at), input.at(at));
    EXPECT_EQ(toInt64(out[1].at(at)), toInt64(input.at(at)) + 1);
  }
}

}  // namespace
}  // namespace braze
