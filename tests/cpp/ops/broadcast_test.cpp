// broadcast, broadcast_in_dim, expand, squeeze and unsqueeze: which dims become Broadcast, the
// expanded extents, the flags attributes, and every error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/shape.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::throwsError;

using Flags = std::vector<bool>;

const Flags& flagsOf(const Expr* expr) {
  return expr->attribute<std::vector<bool>>("flags");
}

TEST(BroadcastTest, InsertsBroadcastDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1, 5}});
  TensorView* y = broadcast(x, {true, false, true, false});
  EXPECT_EQ(y->dtype(), DataType::Int32);
  EXPECT_EQ(domainText(y), "[b, s0, b, 5]");
  const Expr* def = definitionOf(y, OpKind::Broadcast);
  EXPECT_EQ(def->input(0), x);
  EXPECT_EQ(flagsOf(def), (Flags{true, false, true, false}));
  EXPECT_EQ(y->axis(1)->extent(), x->axis(0)->extent());
  EXPECT_NE(y->axis(1), x->axis(0));
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(BroadcastTest, KeepsBroadcastAndExpandedInputDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 3}});
  TensorView* wide = expand(x, {int64_t{4}, int64_t{-1}});
  TensorView* y = broadcast(wide, {false, false, true});
  EXPECT_EQ(domainText(y), "[b ex 4, 3, b]");
}

TEST(BroadcastTest, OfAZeroDimTensor) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  EXPECT_EQ(domainText(broadcast(x, {true, true})), "[b, b]");
  EXPECT_EQ(domainText(broadcast(x, {})), "[]");
}

TEST(BroadcastTest, ErrorWrongNumberOfKeptDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast(x, {true, false});
      },
      {"broadcast of T0 (input 0)", "[true, false]", "1 false entries", "rank 2"}));
  EXPECT_TRUE(throwsError([&] { broadcast(x, {false, false, false}); }, {"3 false entries"}));
  EXPECT_TRUE(throwsError([&] { broadcast(nullptr, {true}); }, {"broadcast", "null"}));
}

TEST(UnsqueezeTest, InsertsOneBroadcastDim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_EQ(domainText(unsqueeze(x, 0)), "[b, s0, s1]");
  EXPECT_EQ(domainText(unsqueeze(x, 2)), "[s0, s1, b]");
  TensorView* y = unsqueeze(x, -1);
  EXPECT_EQ(domainText(y), "[s0, s1, b]");
  EXPECT_EQ(flagsOf(definitionOf(y, OpKind::Broadcast)), (Flags{false, false, true}));
  EXPECT_EQ(domainText(unsqueeze(x, -3)), "[b, s0, s1]");
}

TEST(UnsqueezeTest, ErrorDimOutOfRange) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError([&] { unsqueeze(x, 3); }, {"unsqueeze", "dim 3", "-3 .. 2"}));
  EXPECT_TRUE(throwsError([&] { unsqueeze(x, -4); }, {"unsqueeze", "dim -4"}));
}

TEST(ExpandTest, ExpandsBroadcastDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1, 1}});
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  TensorView* y = expand(x, {int64_t{4}, int64_t{-1}, n});
  EXPECT_EQ(domainText(y), "[b ex 4, s0, b ex s1]");
  const Expr* def = definitionOf(y, OpKind::Expand);
  EXPECT_EQ(def->inputs().size(), 1u);
  EXPECT_TRUE(def->attributes().empty());
  EXPECT_EQ(y->axis(2)->expandedExtent(), n);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(ExpandTest, SizeOneAndMatchingSizesKeepTheDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 3}});
  EXPECT_EQ(domainText(expand(x, {1, 3})), "[b, 3]");
}

TEST(ExpandTest, LeadingSizesAddNewDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  TensorView* y = expand(x, {2, 1, -1, 6});
  EXPECT_EQ(domainText(y), "[b ex 2, b, s0, b ex 6]");
  const auto* widened = definitionOf(y, OpKind::Expand)->input(0)->as<TensorView>();
  EXPECT_EQ(flagsOf(definitionOf(widened, OpKind::Broadcast)), (Flags{true, true, false, false}));
}

TEST(ExpandTest, IntegerScalarInputsBecomeIndexExtents) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1}});
  Scalar* n = makeInputScalar(fusion, DataType::Int64);
  TensorView* y = expand(x, {n});
  EXPECT_EQ(y->axis(0)->expandedExtent()->dtype(), DataType::Index);
  EXPECT_EQ(domainText(y), "[b ex cast(s0, index)]");
}

TEST(ExpandTest, ReexpandingAnExpandedDimToItsSize) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1}});
  TensorView* wide = expand(x, {5});
  EXPECT_EQ(domainText(expand(wide, {5})), "[b ex 5]");
  EXPECT_TRUE(throwsError(
      [&] { expand(wide, {6}); },
      {"expand of T1", "dim 0 is already expanded to size 5", "cannot be expanded to 6"}));
}

TEST(ExpandTest, ErrorNonBroadcastDimToAnotherSize) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3, 1}});
  EXPECT_TRUE(throwsError(
      [&] {
        expand(x, {5, 4});
      },
      {"expand of T0 (input 0)", "dim 0 has size 3", "not a broadcast dim",
       "cannot be expanded to 5", "pass -1 or 3"}));
}

TEST(ExpandTest, ErrorSizeArguments) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 1}});
  EXPECT_TRUE(throwsError([&] { expand(x, {4}); }, {"expand of T0", "1 sizes given", "rank 2"}));
  EXPECT_TRUE(throwsError(
      [&] {
        expand(x, {-2, 4});
      },
      {"expand", "size of dim 0 is -2", "non-negative"}));
  EXPECT_TRUE(throwsError(
      [&] {
        expand(x, {-1, 2, 3});
      },
      {"expand of T0", "-1 at dim 0", "new leading dim"}));
  EXPECT_TRUE(throwsError([&] { expand(x, {2.5, 3}); }, {"expand", "must be an integer"}));
  Scalar* f = makeInputScalar(fusion, DataType::Float32);
  EXPECT_TRUE(throwsError([&] { expand(x, {f, 3}); }, {"expand", "float32"}));
  Fusion other;
  Scalar* foreign = makeInputScalar(other, DataType::Index);
  EXPECT_TRUE(throwsError([&] { expand(x, {foreign, 3}); }, {"expand", "another fusion"}));
}

TEST(BroadcastInDimTest, MapsInputDimsAndExpandsTheRest) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 1}});
  Scalar* n = makeInputScalar(fusion, DataType::Index);
  TensorView* y = broadcast_in_dim(x, {int64_t{2}, n, int64_t{7}}, {1, 2});
  EXPECT_EQ(domainText(y), "[b ex 2, s0, b ex 7]");
  const auto* inserted = definitionOf(y, OpKind::Expand)->input(0)->as<TensorView>();
  EXPECT_EQ(flagsOf(definitionOf(inserted, OpKind::Broadcast)), (Flags{true, false, false}));
  // The input's dim of data keeps its own extent, not the shape's scalar.
  EXPECT_EQ(y->axis(1)->extent(), x->axis(0)->extent());
}

TEST(BroadcastInDimTest, NoExpandWhenEveryNewDimHasSizeOne) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4}});
  TensorView* y = broadcast_in_dim(x, {1, 4}, {1});
  EXPECT_EQ(domainText(y), "[b, 4]");
  definitionOf(y, OpKind::Broadcast);
  // Same rank, nothing to broadcast: the input itself.
  EXPECT_EQ(broadcast_in_dim(x, {4}, {0}), x);
}

TEST(BroadcastInDimTest, SameRankExpandsSizeOneDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 4}});
  TensorView* y = broadcast_in_dim(x, {3, 4}, {0, 1});
  EXPECT_EQ(domainText(y), "[b ex 3, 4]");
  EXPECT_EQ(definitionOf(y, OpKind::Expand)->input(0), x);
}

TEST(BroadcastInDimTest, Errors) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3, -1}});
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast_in_dim(x, {3, 4, 5}, {0});
      },
      {"broadcast_in_dim of T0 (input 0)", "broadcast_dims has 1 entries", "rank 2"}));
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast_in_dim(x, {3, 4}, {0, 2});
      },
      {"broadcast_dims[1] = 2", "out of range", "rank 2"}));
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast_in_dim(x, {3, 4, 5}, {2, 1});
      },
      {"broadcast_dims [2, 1]", "strictly increasing"}));
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast_in_dim(x, {3, 4, 5}, {1, 1});
      },
      {"strictly increasing"}));
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast_in_dim(x, {4, 7}, {0, 1});
      },
      {"input dim 0 has size 3", "shape[0] is 4", "only size-1 dims"}));
  EXPECT_TRUE(throwsError(
      [&] {
        broadcast_in_dim(x, {3, -1}, {0, 1});
      },
      {"shape[1] is -1", "non-negative"}));
}

TEST(SqueezeTest, RemovesSizeOneDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, -1, 1, 4}});
  TensorView* y = squeeze(x, {-2, 0});
  EXPECT_EQ(domainText(y), "[s0, 4]");
  const Expr* def = definitionOf(y, OpKind::Squeeze);
  EXPECT_EQ(flagsOf(def), (Flags{true, false, true, false}));
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(SqueezeTest, EmptyListRemovesNothing) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 3}});
  TensorView* y = squeeze(x, {});
  EXPECT_EQ(domainText(y), "[b, 3]");
  EXPECT_EQ(flagsOf(definitionOf(y, OpKind::Squeeze)), (Flags{false, false}));
}

TEST(SqueezeTest, ExpandedToOneIsSizeOne) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 2}});
  TensorView* y = expand(x, {1, 2});
  EXPECT_EQ(domainText(squeeze(y, {0})), "[2]");
}

TEST(SqueezeTest, ErrorDimNotSizeOne) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3, -1, 1}});
  EXPECT_TRUE(throwsError([&] { squeeze(x, {0}); }, {"squeeze of T0 (input 0)", "dim 0 has size 3",
                                                     "only dims of size 1", "[3, s0, 1]"}));
  EXPECT_TRUE(throwsError([&] { squeeze(x, {1}); }, {"dim 1 has size s0"}));
  TensorView* wide = expand(x, {-1, -1, 5});
  EXPECT_TRUE(throwsError([&] { squeeze(wide, {2}); }, {"dim 2 has size 5", "expanded broadcast"}));
}

TEST(SqueezeTest, ErrorDuplicateAndOutOfRangeDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 1}});
  EXPECT_TRUE(throwsError(
      [&] {
        squeeze(x, {0, -2});
      },
      {"squeeze of T0", "dim -2 (dim 0)", "more than once"}));
  EXPECT_TRUE(throwsError([&] { squeeze(x, {2}); }, {"squeeze", "dim 2", "out of range"}));
}

}  // namespace
}  // namespace braze
