// permute and transpose: the output's dims, the "perm" attribute, and every error.

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

using Perm = std::vector<int64_t>;

TEST(PermuteTest, ReordersDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Bool, .sizes = {2, -1, 1}});
  TensorView* y = permute(x, {2, 0, -2});
  EXPECT_EQ(y->dtype(), DataType::Bool);
  EXPECT_EQ(domainText(y), "[b, 2, s0]");
  const Expr* def = definitionOf(y, OpKind::Permute);
  EXPECT_EQ(def->attribute<std::vector<int64_t>>("perm"), (Perm{2, 0, 1}));
  EXPECT_EQ(y->axis(2)->extent(), x->axis(1)->extent());
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(PermuteTest, OfAZeroDimTensor) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  EXPECT_EQ(domainText(permute(x, {})), "[]");
}

TEST(PermuteTest, TransposeSwapsTwoDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {2, 3, 4}});
  TensorView* y = transpose(x, 0, -1);
  EXPECT_EQ(domainText(y), "[4, 3, 2]");
  EXPECT_EQ(definitionOf(y, OpKind::Permute)->attribute<std::vector<int64_t>>("perm"),
            (Perm{2, 1, 0}));
  EXPECT_EQ(domainText(transpose(x, 1, 1)), "[2, 3, 4]");
}

TEST(PermuteTest, ErrorNotAPermutation) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  EXPECT_TRUE(throwsError(
      [&] {
        permute(x, {0, 1});
      },
      {"permute of T0 (input 0)", "[0, 1]", "2 entries", "rank 3"}));
  EXPECT_TRUE(throwsError(
      [&] {
        permute(x, {0, 2, -1});
      },
      {"permute of T0", "[0, 2, -1] is not a permutation", "dim 2", "more than once"}));
  EXPECT_TRUE(throwsError([&] { permute(x, {0, 1, 3}); }, {"permute", "dim 3", "out of range"}));
}

TEST(PermuteTest, ErrorTransposeDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError([&] { transpose(x, 0, 2); }, {"transpose", "dim 2", "-2 .. 1"}));
  EXPECT_TRUE(throwsError([&] { permute(nullptr, {}); }, {"permute", "null"}));
}

}  // namespace
}  // namespace braze
