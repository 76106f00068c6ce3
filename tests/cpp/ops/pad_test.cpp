// pad: (left, right) pairs from the last dim, the Pad Expr's inputs in dim order, the fill
// value's dtype, the new extents, cropping, and every error.

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

// The Pad Expr's width inputs as text, in dim order: "0 0 1 2".
std::string widthsOf(const TensorView* y) {
  const Expr* def = definitionOf(y, OpKind::Pad);
  std::string text;
  for (size_t i = 2; i < def->inputs().size(); ++i) {
    if (i > 2) text += " ";
    text += scalarText(def->input(i)->as<Scalar>());
  }
  return text;
}

TEST(PadTest, PadsTheLastDimFirst) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 5}});
  TensorView* y = pad(x, {1, 2});
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[s0, 8]");
  EXPECT_EQ(widthsOf(y), "0 0 1 2");
  const Expr* def = y->definition();
  EXPECT_EQ(def->input(0), x);
  const auto* value = def->input(1)->as<Scalar>();
  EXPECT_EQ(value->dtype(), DataType::Float32);
  EXPECT_TRUE(value->isConstantEqualTo(0));
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(PadTest, SeveralDimsAndSymbolicSizes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = pad(x, {0, 0, 3, -1});
  EXPECT_EQ(domainText(y), "[s0, add(s1, 2), s2]");
  EXPECT_EQ(widthsOf(y), "0 0 3 -1 0 0");
  Scalar* w = makeInputScalar(fusion, DataType::Int64);
  TensorView* z = pad(x, {w, 1});
  const std::string width = "cast(" + w->name() + ", index)";
  EXPECT_EQ(domainText(z), "[s0, s1, add(add(s2, " + width + "), 1)]");
  EXPECT_EQ(widthsOf(z), "0 0 0 0 " + width + " 1");
}

TEST(PadTest, CroppingAndPaddingABroadcastDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 6}});
  EXPECT_EQ(domainText(pad(x, {-2, -3})), "[b, b]");
  EXPECT_EQ(domainText(pad(x, {-3, -3})), "[b, 0]");
  EXPECT_EQ(domainText(pad(x, {0, 0, 2, 0})), "[3, 6]");
  EXPECT_EQ(domainText(pad(x, {})), "[b, 6]");
}

TEST(PadTest, ValueTakesTheTensorDtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* y = pad(x, {1, 1}, 2.75);
  const auto* value = y->definition()->input(1)->as<Scalar>();
  EXPECT_EQ(value->dtype(), DataType::Int32);
  EXPECT_EQ(value->constantInt(), 2);
  EXPECT_EQ(y->dtype(), DataType::Int32);

  Scalar* fill = makeInputScalar(fusion, DataType::Float64);
  TensorView* z = pad(x, {1, 1}, fill);
  const auto* cast_fill = z->definition()->input(1)->as<Scalar>();
  EXPECT_EQ(cast_fill->dtype(), DataType::Int32);
  EXPECT_EQ(scalarText(cast_fill), "cast(" + fill->name() + ", int32)");

  Scalar* same = makeInputScalar(fusion, DataType::Int32);
  EXPECT_EQ(pad(x, {1, 1}, same)->definition()->input(1), same);
}

TEST(PadTest, ErrorOddNumberOfWidths) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError(
      [&] {
        pad(x, {1, 2, 3});
      },
      {"pad of T0 (input 0)", "3 entries", "(left, right) pairs"}));
}

TEST(PadTest, ErrorTooManyPairs) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError(
      [&] {
        pad(x, {1, 1, 1, 1});
      },
      {"pad of T0", "2 (left, right) pairs", "rank 1"}));
}

TEST(PadTest, ErrorCropsPastTheDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3}});
  EXPECT_TRUE(throwsError(
      [&] {
        pad(x, {-2, -2});
      },
      {"pad of T0", "dim 0 of size 3", "widths (-2, -2)", "size -1"}));
}

TEST(PadTest, ErrorBadArguments) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError(
      [&] {
        pad(x, {1.5, 0});
      },
      {"pad", "left width (dim 0)", "must be an integer"}));
  EXPECT_TRUE(throwsError([&] { pad(x, {0, 1}, x); }, {"pad", "value", "tensor T0"}));
  Fusion other;
  Scalar* foreign = makeInputScalar(other, DataType::Float32);
  EXPECT_TRUE(throwsError([&] { pad(x, {0, 1}, foreign); }, {"pad", "value", "another fusion"}));
  EXPECT_TRUE(throwsError([&] { pad(nullptr, {}); }, {"pad", "null"}));
}

}  // namespace
}  // namespace braze
