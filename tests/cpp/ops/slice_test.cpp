// slice: Python semantics for start/stop (negative, clamped, missing), the counts as extents
// (folded for constants, scalar expressions otherwise), the Slice Expr's inputs, manually
// normalized bounds, and errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/shape.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::scalarText;
using test::throwsError;

// The Slice Expr's (start, step) inputs as text: "0 1 2 1".
std::string startsAndSteps(const TensorView* y) {
  const Expr* def = definitionOf(y, OpKind::Slice);
  std::string text;
  for (size_t i = 1; i < def->inputs().size(); ++i) {
    if (i > 1) text += " ";
    text += scalarText(def->input(i)->as<Scalar>());
  }
  return text;
}

TEST(SliceTest, ConstantBoundsFold) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 8}});
  TensorView* y = slice(x, 1, 2, 6);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[s0, 4]");
  EXPECT_EQ(definitionOf(y, OpKind::Slice)->input(0), x);
  EXPECT_EQ(startsAndSteps(y), "0 1 2 1");
  for (size_t i = 1; i < y->definition()->inputs().size(); ++i) {
    EXPECT_EQ(y->definition()->input(i)->dtype(), DataType::Index);
  }
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(SliceTest, PythonSemanticsOnConstantSizes) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {8}});
  struct Case {
    int64_t start;
    std::optional<int64_t> stop;
    int64_t step;
    std::string domain;
    std::string inputs;
  };
  const Case cases[] = {
      {-3, std::nullopt, 1, "[3]", "5 1"},  // x[-3:]
      {2, 100, 3, "[2]", "2 3"},            // x[2:100:3] -> 2, 5
      {6, 2, 1, "[0]", "6 1"},              // empty
      {-100, -6, 1, "[2]", "0 1"},          // x[-100:-6]
      {0, std::nullopt, 3, "[3]", "0 3"},   // x[::3] -> 0, 3, 6
      {7, std::nullopt, 1, "[b]", "7 1"},   // one element
      {9, std::nullopt, 1, "[0]", "8 1"},   // start clamped to the size
  };
  for (const Case& c : cases) {
    std::optional<Operand> stop;
    if (c.stop) stop = *c.stop;
    TensorView* y = slice(x, 0, c.start, stop, c.step);
    EXPECT_EQ(domainText(y), c.domain) << c.start;
    EXPECT_EQ(startsAndSteps(y), c.inputs) << c.start;
  }
}

TEST(SliceTest, WholeDimKeepsTheInputExtent) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = slice(x, 0, 0, std::nullopt, 1);
  EXPECT_EQ(domainText(y), "[s0, s1]");
  EXPECT_EQ(y->axis(0)->extent(), x->axis(0)->extent());
}

TEST(SliceTest, SymbolicSizes) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1}});
  EXPECT_EQ(domainText(slice(x, 0, 1, std::nullopt)), "[sub(s0, minimum(1, s0))]");
  EXPECT_EQ(domainText(slice(x, 0, -2, std::nullopt)), "[sub(s0, maximum(add(s0, -2), 0))]");
  EXPECT_EQ(domainText(slice(x, 0, 0, 5)), "[minimum(5, s0)]");
  EXPECT_EQ(domainText(slice(x, 0, 0, std::nullopt, 2)), "[ceil_div(s0, 2)]");
  TensorView* y = slice(x, 0, 2, -1, 3);
  // The stop is raised to the start, so the count is ceil_div(stop - start, step).
  EXPECT_EQ(domainText(y),
            "[ceil_div(sub(maximum(maximum(add(s0, -1), 0), minimum(2, s0)), minimum(2, s0)), "
            "3)]");
  EXPECT_EQ(startsAndSteps(y), "minimum(2, s0) 3");
}

TEST(SliceTest, SymbolicBounds) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {10}});
  Scalar* start = makeInputScalar(fusion, DataType::Index);
  Scalar* stop = makeInputScalar(fusion, DataType::Int64);
  TensorView* y = slice(x, 0, start, stop);
  const std::string begin = "minimum(maximum(where(lt(s0, 0), add(s0, 10), s0), 0), 10)";
  const std::string end =
      "minimum(maximum(where(lt(cast(s1, index), 0), add(cast(s1, index), 10), "
      "cast(s1, index)), 0), 10)";
  EXPECT_EQ(domainText(y), "[sub(maximum(" + end + ", " + begin + "), " + begin + ")]");
  EXPECT_EQ(startsAndSteps(y), begin + " 1");
}

TEST(SliceTest, ManualNormalizationUsesTheBoundsAsGiven) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  Scalar* start = makeInputScalar(fusion, DataType::Index);
  Scalar* stop = makeInputScalar(fusion, DataType::Index);
  // No where/minimum/maximum: only the count.
  TensorView* y = slice(x, {SliceRange{start, stop, 2}, SliceRange{0, stop}}, true);
  EXPECT_EQ(domainText(y), "[ceil_div(sub(s3, s2), 2), s3]");
  EXPECT_EQ(startsAndSteps(y), "s2 2 0 1");
  // The whole dim keeps the input's extent, as the Python-style slice does.
  TensorView* whole = slice(x, {SliceRange{0, x->axis(0)->extent()}}, true);
  EXPECT_EQ(whole->axis(0)->extent(), x->axis(0)->extent());
  // The Python-style slice's count is the one the normalized bounds give.
  TensorView* python = slice(x, 0, start, stop);
  const Expr* def = definitionOf(python, OpKind::Slice);
  TensorView* again = slice(
      x,
      {SliceRange{def->input(1)->as<Scalar>(), python->axis(0)->extent()->definition()->input(0)}},
      true);
  EXPECT_EQ(domainText(again), domainText(python));
}

TEST(SliceTest, ErrorManualNormalizationWithConstantsOutOfRange) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {8}});
  EXPECT_TRUE(throwsError(
      [&] {
        slice(x, {SliceRange{-1, 4}}, true);
      },
      {"slice of T0 (input 0) with manual_normalization", "dim 0", "start -1 and stop 4",
       "0 <= start <= stop <= size", "leave manual_normalization off"}));
  EXPECT_TRUE(throwsError([&] { slice(x, {SliceRange{5, 3}}, true); }, {"start 5 and stop 3"}));
  EXPECT_TRUE(throwsError([&] { slice(x, {SliceRange{0, 9}}, true); }, {"stop 9 on a size of 8"}));
}

TEST(SliceTest, EveryDimAtOnce) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {6, 8, 4}});
  TensorView* y = slice(x, {SliceRange{1, 3}, SliceRange{0, std::nullopt, 2}});
  EXPECT_EQ(domainText(y), "[2, 4, 4]");
  EXPECT_EQ(startsAndSteps(y), "1 1 0 2 0 1");
}

TEST(SliceTest, BroadcastAndExpandedDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1}});
  EXPECT_EQ(domainText(slice(x, 0, 0, 1)), "[b]");
  EXPECT_EQ(domainText(slice(x, 0, 1, std::nullopt)), "[0]");
  TensorView* wide = expand(x, {10});
  // Still one value repeated: the slice stays an expanded broadcast.
  EXPECT_EQ(domainText(slice(wide, 0, 2, 5)), "[b ex 3]");
  EXPECT_EQ(domainText(slice(wide, 0, 2, 3)), "[b]");
  EXPECT_EQ(domainText(slice(wide, {})), "[b ex 10]");
}

TEST(SliceTest, ErrorStepNotAPositiveConstant) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError([&] { slice(x, 1, 0, std::nullopt, 0); },
                          {"slice of T0 (input 0)", "step of dim 1 is 0", "positive constant"}));
  EXPECT_TRUE(throwsError([&] { slice(x, 0, 0, std::nullopt, -1); },
                          {"step of dim 0 is -1", "positive constant"}));
  Scalar* step = makeInputScalar(fusion, DataType::Index);
  EXPECT_TRUE(throwsError([&] { slice(x, 0, 0, std::nullopt, step); },
                          {"step of dim 0 is s2", "positive constant"}));
}

TEST(SliceTest, ErrorArguments) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError(
      [&] {
        slice(x, {SliceRange{}, SliceRange{}});
      },
      {"slice of T0", "2 ranges", "rank 1"}));
  EXPECT_TRUE(
      throwsError([&] { slice(x, 1, 0, std::nullopt); }, {"slice", "dim 1", "out of range"}));
  EXPECT_TRUE(throwsError([&] { slice(x, 0, 0.5, std::nullopt); },
                          {"slice", "start of dim 0", "must be an integer"}));
  EXPECT_TRUE(throwsError([&] { slice(x, 0, 0, Operand(true)); },
                          {"slice", "stop of dim 0", "must be an integer"}));
  EXPECT_TRUE(
      throwsError([&] { slice(x, 0, x, std::nullopt); }, {"slice", "start of dim 0", "tensor T0"}));
  EXPECT_TRUE(throwsError([&] { slice(nullptr, {}); }, {"slice", "null"}));
}

}  // namespace
}  // namespace braze
