// The reference evaluator's checks of its arguments (before any work) and of the data it
// meets while evaluating. Every error is checked for the facts it must name.

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::throwsError;

// A fusion computing T2 = T0 + T1 for two inputs made from `a` and `b`.
struct AddFusion {
  Fusion fusion;
  TensorView* t0;
  TensorView* t1;

  AddFusion(const TensorSpec& a, const TensorSpec& b) {
    t0 = makeInputTensor(fusion, a);
    t1 = makeInputTensor(fusion, b);
    fusion.addOutput(add(t0, t1));
  }
};

// Expected T0 + T1 for same-shape inputs, from the raw values.
test::ExpectedTensor sumOf(const HostTensor& a, const HostTensor& b) {
  const std::vector<double> x = test::valuesOf(a);
  const std::vector<double> y = test::valuesOf(b);
  std::vector<double> sum(x.size());
  for (size_t i = 0; i < x.size(); ++i) sum[i] = x[i] + y[i];
  return {DataType::Float32, a.sizes(), sum};
}

TEST(InputValidationTest, WrongArgumentCount) {
  AddFusion f({.sizes = {-1}}, {.sizes = {-1}});
  test::RandomTensors random(1);
  const HostTensor a = random.uniform(DataType::Float32, {3});
  EXPECT_TRUE(throwsError([&] { evaluateFusionTensors(f.fusion, {a}); },
                          {"the fusion has 2 inputs (T0, T1)", "1 argument was given"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, a, a});
      },
      {"2 inputs", "3 arguments were given"}));
}

TEST(InputValidationTest, ScalarGivenForATensorAndTensorForAScalar) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* s = makeInputScalar(fusion, DataType::Float32);
  fusion.addOutput(mul(x, s));
  test::RandomTensors random(2);
  const HostTensor a = random.uniform(DataType::Float32, {3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {ScalarValue(1.0), ScalarValue(2.0)});
      },
      {"input 0 (T0)", "expected a float32 tensor of rank 1", "the float64 scalar 1.0"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {a, a});
      },
      {"input 1 (" + s->name() + ")", "expected a scalar of dtype float32",
       "a tensor float32[3]"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {a, ScalarValue(true)});
      },
      {"input 1", "expected a scalar of dtype float32", "bool scalar true"}));
  // An integer stands for a float scalar, as in Python.
  const auto results = evaluateFusion(fusion, {a, ScalarValue(int64_t{2})});
  const std::vector<double> values = test::valuesOf(a);
  test::expectClose(
      std::get<HostTensor>(results[0]),
      test::ExpectedTensor{DataType::Float32, {3}, {2 * values[0], 2 * values[1], 2 * values[2]}});
}

TEST(InputValidationTest, IntegerScalarForAnIntegerInputOnly) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int64);
  Scalar* s = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(add(x, s));
  const HostTensor a = test::tensorOf(DataType::Int64, {2}, {4, -5});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {a, ScalarValue(0.5)});
      },
      {"input 1", "expected a scalar of dtype int64", "float64 scalar 0.5"}));
}

TEST(InputValidationTest, WrongDtype) {
  AddFusion f({.sizes = {-1}}, {.sizes = {-1}});
  test::RandomTensors random(3);
  const HostTensor a = random.uniform(DataType::Float32, {3});
  const HostTensor b = random.uniform(DataType::Float16, {3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, b});
      },
      {"input 1 (T1)", "expected dtype float32 but got float16", "float16[3] strides [1]"}));
}

TEST(InputValidationTest, IndexInputsAcceptInt64Tensors) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Index, .sizes = {-1}});
  fusion.addOutput(add(x, x));
  const HostTensor a = test::tensorOf(DataType::Int64, {3}, {1, -2, 30});
  const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {a});
  EXPECT_EQ(test::valuesOf(out[0]), (std::vector<double>{2, -4, 60}));
}

TEST(InputValidationTest, WrongRank) {
  AddFusion f({.sizes = {-1, -1}}, {.sizes = {-1, -1}});
  test::RandomTensors random(4);
  const HostTensor a = random.uniform(DataType::Float32, {2, 3});
  const HostTensor b = random.uniform(DataType::Float32, {2, 3, 1});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, b});
      },
      {"input 1 (T1)", "expected rank 2 but got rank 3"}));
}

TEST(InputValidationTest, UndefinedTensor) {
  AddFusion f({.sizes = {-1}}, {.sizes = {-1}});
  test::RandomTensors random(5);
  const HostTensor a = random.uniform(DataType::Float32, {3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, HostTensor()});
      },
      {"input 1 (T1)", "has no storage"}));
}

TEST(InputValidationTest, FixedSizeMismatch) {
  AddFusion f({.sizes = {4, -1}}, {.sizes = {4, -1}});
  test::RandomTensors random(6);
  const HostTensor good = random.uniform(DataType::Float32, {4, 3});
  const HostTensor bad = random.uniform(DataType::Float32, {5, 3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {good, bad});
      },
      {"input 1 (T1)", "dim 0 has size 5", "the fusion fixes it to 4"}));
}

TEST(InputValidationTest, BroadcastDimMustHaveSizeOne) {
  AddFusion f({.sizes = {1, -1}}, {.sizes = {-1, -1}});
  test::RandomTensors random(7);
  const HostTensor a = random.uniform(DataType::Float32, {3, 2});
  const HostTensor b = random.uniform(DataType::Float32, {3, 2});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, b});
      },
      {"input 0 (T0)", "dim 0 is a broadcast dim and must have size 1", "has size 3"}));
}

// Two inputs whose dim 0 is the same extent Val, as when a frontend knows two sizes agree.
TEST(InputValidationTest, SharedExtentConflict) {
  Fusion fusion;
  Scalar* extent = fusion.create<Scalar>(DataType::Index);
  auto* t0 = fusion.create<TensorView>(
      DataType::Float32,
      std::vector<IterDomain*>{fusion.create<IterDomain>(extent, IterType::Iteration)});
  auto* t1 = fusion.create<TensorView>(
      DataType::Float32,
      std::vector<IterDomain*>{fusion.create<IterDomain>(extent, IterType::Iteration)});
  fusion.addInput(t0);
  fusion.addInput(t1);
  fusion.addOutput(add(t0, t1));
  test::RandomTensors random(8);
  const HostTensor a = random.uniform(DataType::Float32, {5});
  const HostTensor b = random.uniform(DataType::Float32, {7});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {a, b});
      },
      {"input 1 (T1): dim 0 has size 7 but T0 (input 0) dim 0 has size 5",
       "both are extent " + extent->name()}));
  const HostTensor c = random.uniform(DataType::Float32, {5});
  test::expectClose(evaluateFusionTensors(fusion, {a, c})[0], sumOf(a, c));
}

TEST(InputValidationTest, ExtentThatIsAScalarInputConflict) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  auto* t = fusion.create<TensorView>(
      DataType::Float32,
      std::vector<IterDomain*>{fusion.create<IterDomain>(n, IterType::Iteration)});
  fusion.addInput(t);
  fusion.addOutput(neg(t));
  test::RandomTensors random(9);
  const HostTensor a = random.uniform(DataType::Float32, {6});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {ScalarValue(int64_t{4}), a});
      },
      {"input 1 (T0): dim 0 has size 6", "extent " + n->name() + " is scalar input 0", "4"}));
  EXPECT_NO_THROW(evaluateFusion(fusion, {ScalarValue(int64_t{6}), a}));
}

TEST(InputValidationTest, PermutedTensorForAContiguousInput) {
  AddFusion f({.sizes = {-1, -1}}, {.sizes = {-1, -1}});
  test::RandomTensors random(10);
  const HostTensor a = random.uniform(DataType::Float32, {2, 3});
  const HostTensor b = random.uniform(DataType::Float32, {3, 2}).permuted({1, 0});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, b});
      },
      {"input 1 (T1)", "dim 1 has stride 2",
       "declared layout (allocation order [0, 1], contiguity [true, true])", "needs stride 1",
       "non-contiguous"}));
}

TEST(InputValidationTest, DeclaredAllocationOrderIsChecked) {
  AddFusion f({.sizes = {-1, -1}}, {.sizes = {-1, -1}, .allocation_order = {1, 0}});
  test::RandomTensors random(11);
  const HostTensor a = random.uniform(DataType::Float32, {2, 3});
  const HostTensor row_major = random.uniform(DataType::Float32, {2, 3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, row_major});
      },
      {"input 1 (T1)", "dim 0 has stride 3", "allocation order [1, 0]", "needs stride 1"}));
  const HostTensor column_major = test::withAllocationOrder(row_major, {1, 0});
  test::expectClose(evaluateFusionTensors(f.fusion, {a, column_major})[0], sumOf(a, row_major));
}

TEST(InputValidationTest, NonContiguousDeclarationAcceptsGapsAndStrideZero) {
  AddFusion f({.sizes = {-1, -1}, .contiguity = {false, false}},
              {.sizes = {-1, -1}, .contiguity = {true, false}});
  test::RandomTensors random(12);
  const HostTensor dense = random.uniform(DataType::Float32, {3, 4});
  const HostTensor gaps = test::withGaps(dense, 1, 3);      // strides [12, 3]
  const HostTensor row_gaps = test::withGaps(dense, 0, 2);  // strides [8, 1]
  const HostTensor column = random.uniform(DataType::Float32, {3, 1});
  const HostTensor expanded = column.expanded({3, 4});  // strides [1, 0]
  // T1's dim 0 promises stride size(1) * stride(1) = 4.
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {expanded, row_gaps});
      },
      {"input 1 (T1)", "dim 0 has stride 8", "needs stride 4"}));
  test::expectClose(evaluateFusionTensors(f.fusion, {expanded, expanded.contiguous()})[0],
                    sumOf(expanded, expanded));
  test::expectClose(evaluateFusionTensors(f.fusion, {gaps, dense})[0], sumOf(dense, dense));
  // Dim 0 of `gaps` is contiguous with dim 1's actual stride: 12 = 4 * 3.
  test::expectClose(evaluateFusionTensors(f.fusion, {row_gaps, gaps})[0], sumOf(dense, dense));
}

TEST(InputValidationTest, StridesOfSizeOneDimsAreFree) {
  AddFusion f({.sizes = {-1, -1}}, {.sizes = {-1, -1}});
  test::RandomTensors random(13);
  const HostTensor a = random.uniform(DataType::Float32, {3, 1});
  const HostTensor dense = random.uniform(DataType::Float32, {3, 1});
  const HostTensor odd =
      HostTensor::borrow(DataType::Float32, {3, 1}, {1, 77}, dense.data(), dense.owner());
  test::expectClose(evaluateFusionTensors(f.fusion, {a, odd})[0], sumOf(a, dense));
}

TEST(InputValidationTest, ElementwiseOperandsWithDifferentSizes) {
  AddFusion f({.sizes = {-1, -1}}, {.sizes = {-1, -1}});
  test::RandomTensors random(14);
  const HostTensor a = random.uniform(DataType::Float32, {2, 5});
  const HostTensor b = random.uniform(DataType::Float32, {2, 7});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, b});
      },
      {"add", "T0 (input 0) dim 1 has size 5", "T1 (input 1) dim 1 has size 7",
       "T2 = add(T0, T1)"}));
  // An Iteration dim of size 1 does not broadcast either.
  const HostTensor c = random.uniform(DataType::Float32, {2, 1});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(f.fusion, {a, c});
      },
      {"add", "has size 5", "has size 1"}));
}

TEST(InputValidationTest, SelectIndexOutOfRange) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  Scalar* i = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(select(x, 0, i));
  test::RandomTensors random(15);
  const HostTensor a = random.uniform(DataType::Float32, {4, 3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {a, ScalarValue(int64_t{9})});
      },
      {"select", "index 9", "dim 0", "T0 (input 0)", "size 4", "valid indices are -4 .. 3"}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {a, ScalarValue(int64_t{-5})});
      },
      {"select", "index -5"}));
  // Negative indices count from the end.
  const auto results = evaluateFusion(fusion, {a, ScalarValue(int64_t{-1})});
  const std::vector<double> values = test::valuesOf(a);
  test::expectClose(
      std::get<HostTensor>(results[0]),
      test::ExpectedTensor{DataType::Float32, {3}, {values[9], values[10], values[11]}});
}

TEST(InputValidationTest, IndexSelectIndexOutOfRange) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeSymbolicTensor(fusion, 1, DataType::Int64);
  fusion.addOutput(index_select(x, 0, index));
  test::RandomTensors random(16);
  const HostTensor a = random.uniform(DataType::Float32, {5, 2});
  const HostTensor bad = test::tensorOf(DataType::Int64, {3}, {0, -5, 9});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {a, bad});
      },
      {"index_select", "T1 (input 1) holds 9 at position 2", "dim 0", "size 5"}));
}

TEST(InputValidationTest, GatherIndexOutOfRange) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int32);
  fusion.addOutput(gather(x, 1, index));
  test::RandomTensors random(17);
  const HostTensor a = random.uniform(DataType::Float32, {2, 5});
  const HostTensor bad = test::tensorOf(DataType::Int32, {2, 2}, {0, 4, -6, 1});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {a, bad});
      },
      {"gather", "holds -6 at position [1, 0]", "dim 1", "size 5"}));
}

TEST(InputValidationTest, ReshapeElementCountMismatch) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* rows = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(reshape(x, {rows, int64_t{4}}));
  test::RandomTensors random(18);
  const HostTensor a = random.uniform(DataType::Float32, {10});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusion(fusion, {a, ScalarValue(int64_t{2})});
      },
      {"reshape", "has 10 elements", "[2, 4]", "has 8"}));
}

TEST(InputValidationTest, IntegerDivisionByZeroNamesTheOp) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* y = makeSymbolicTensor(fusion, 1, DataType::Int32);
  fusion.addOutput(div(x, y));
  const HostTensor a = test::tensorOf(DataType::Int32, {3}, {7, 8, 9});
  const HostTensor b = test::tensorOf(DataType::Int32, {3}, {2, 0, 3});
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {a, b});
      },
      {"div", "zero", "T2 = div(T0, T1)"}));
}

TEST(InputValidationTest, ScalarOutputsNeedEvaluateFusion) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  Scalar* s = makeInputScalar(fusion, DataType::Int64);
  fusion.addOutput(neg(x));
  Val* twice = mul(s, 2);
  fusion.addOutput(twice);
  test::RandomTensors random(19);
  const HostTensor a = random.uniform(DataType::Float32, {2});
  const auto results = evaluateFusion(fusion, {a, ScalarValue(int64_t{21})});
  EXPECT_EQ(std::get<ScalarValue>(results[1]), ScalarValue(int64_t{42}));
  EXPECT_TRUE(throwsError(
      [&] {
        evaluateFusionTensors(fusion, {a, a});
      },
      {"input 1", "expected a scalar of dtype int64", "a tensor"}));

  Fusion no_scalar_inputs;
  TensorView* t = makeSymbolicTensor(no_scalar_inputs, 1);
  no_scalar_inputs.addOutput(neg(t));
  no_scalar_inputs.addOutput(mul(no_scalar_inputs.constantIndex(3), t->axis(0)->extent()));
  EXPECT_TRUE(throwsError([&] { evaluateFusionTensors(no_scalar_inputs, {a}); },
                          {"evaluateFusionTensors", "output 1", "is a scalar", "evaluateFusion"}));
  const auto both = evaluateFusion(no_scalar_inputs, {a});
  EXPECT_EQ(std::get<ScalarValue>(both[1]), ScalarValue(int64_t{6}));
}

}  // namespace
}  // namespace braze
