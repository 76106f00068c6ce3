// matmul and linear: result dims by torch.matmul's rules followed by one Reduction IterDomain
// for K, dtypes, and every error.

#include "braze/ops/contraction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::throwsError;

TensorView* input(Fusion& fusion, std::vector<int64_t> sizes, DataType dtype = DataType::Float32) {
  return makeInputTensor(fusion, {.dtype = dtype, .sizes = std::move(sizes)});
}

TEST(MatmulTest, MatrixTimesMatrix) {
  Fusion fusion;
  TensorView* a = input(fusion, {-1, -1}, DataType::BFloat16);
  TensorView* b = input(fusion, {-1, 8}, DataType::BFloat16);
  TensorView* y = matmul(a, b);
  EXPECT_EQ(y->dtype(), DataType::BFloat16);
  EXPECT_EQ(domainText(y), "[s0, 8, r:s1]");
  EXPECT_EQ(y->rank(), 2);
  const Expr* def = definitionOf(y, OpKind::Matmul);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{a, b}));
  EXPECT_TRUE(def->attributes().empty());
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(MatmulTest, VectorCases) {
  Fusion fusion;
  TensorView* v = input(fusion, {5});
  TensorView* w = input(fusion, {5});
  TensorView* m = input(fusion, {5, 3});
  TensorView* n = input(fusion, {4, 5});
  EXPECT_EQ(domainText(matmul(v, w)), "[r:5]");  // dot product: 0-d
  EXPECT_EQ(matmul(v, w)->rank(), 0);
  EXPECT_EQ(domainText(matmul(v, m)), "[3, r:5]");
  EXPECT_EQ(domainText(matmul(n, v)), "[4, r:5]");
  TensorView* batched = input(fusion, {2, 5, 3});
  EXPECT_EQ(domainText(matmul(v, batched)), "[2, 3, r:5]");
  TensorView* batched_left = input(fusion, {2, 7, 5});
  EXPECT_EQ(domainText(matmul(batched_left, v)), "[2, 7, r:5]");
}

TEST(MatmulTest, BatchDimsBroadcast) {
  Fusion fusion;
  TensorView* a = input(fusion, {3, 1, 4, 6});
  TensorView* b = input(fusion, {-1, 6, 2});
  EXPECT_EQ(domainText(matmul(a, b)), "[3, s0, 4, 2, r:6]");
  TensorView* c = input(fusion, {1, 1, 6, 2});
  EXPECT_EQ(domainText(matmul(a, c)), "[3, b, 4, 2, r:6]");
  TensorView* d = input(fusion, {7, 4, 6});
  TensorView* e = input(fusion, {5, 1, 6, 9});
  EXPECT_EQ(domainText(matmul(d, e)), "[5, 7, 4, 9, r:6]");
}

TEST(MatmulTest, ErrorInnerSizesDiffer) {
  Fusion fusion;
  TensorView* a = input(fusion, {3, 4});
  TensorView* b = input(fusion, {5, 6});
  EXPECT_TRUE(
      throwsError([&] { matmul(a, b); }, {"matmul of T0 (input 0) [3, 4] and T1 (input 1) [5, 6]",
                                          "inner sizes differ (4 vs 5)", "second-to-last"}));
  TensorView* v = input(fusion, {3});
  EXPECT_TRUE(throwsError([&] { matmul(a, v); }, {"(4 vs 3)", "b's only dim"}));
}

TEST(MatmulTest, ErrorBatchDimsDoNotBroadcast) {
  Fusion fusion;
  TensorView* a = input(fusion, {2, 3, 4});
  TensorView* b = input(fusion, {5, 4, 6});
  EXPECT_TRUE(throwsError([&] { matmul(a, b); },
                          {"matmul of T0", "batch dim 0 has sizes 2 and 5", "match or be 1"}));
}

TEST(MatmulTest, ErrorDtypes) {
  Fusion fusion;
  TensorView* f = input(fusion, {2, 2});
  TensorView* h = input(fusion, {2, 2}, DataType::Float16);
  TensorView* i = input(fusion, {2, 2}, DataType::Int64);
  EXPECT_TRUE(throwsError([&] { matmul(f, h); }, {"matmul", "b T1 (input 1) has dtype float16",
                                                  "T0 (input 0) has dtype float32", "cast"}));
  EXPECT_TRUE(throwsError([&] { matmul(i, i); },
                          {"matmul", "a T2 (input 2) has dtype int64", "floating operands"}));
}

TEST(MatmulTest, ErrorZeroDimOperandAndNull) {
  Fusion fusion;
  TensorView* s = input(fusion, {});
  TensorView* m = input(fusion, {2, 2});
  EXPECT_TRUE(
      throwsError([&] { matmul(s, m); }, {"matmul of T0 (input 0) []", "at least one dim"}));
  EXPECT_TRUE(throwsError([&] { matmul(nullptr, m); }, {"matmul", "a is null"}));
  EXPECT_TRUE(throwsError([&] { matmul(m, nullptr); }, {"matmul", "b is null"}));
  Fusion other;
  TensorView* foreign = input(other, {2, 2});
  EXPECT_TRUE(throwsError([&] { matmul(m, foreign); }, {"matmul", "another fusion"}));
}

TEST(LinearTest, WeightAndBias) {
  Fusion fusion;
  TensorView* x = input(fusion, {-1, 7, 16}, DataType::Float16);
  TensorView* w = input(fusion, {32, 16}, DataType::Float16);
  TensorView* b = input(fusion, {32}, DataType::Float16);
  TensorView* y = linear(x, w, b);
  EXPECT_EQ(y->dtype(), DataType::Float16);
  EXPECT_EQ(domainText(y), "[s0, 7, 32, r:16]");
  const Expr* def = definitionOf(y, OpKind::Linear);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{x, w, b}));
  EXPECT_EQ(linear(x, w)->definition()->inputs(), (std::vector<Val*>{x, w}));
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(LinearTest, VectorWeightAndScalarBias) {
  Fusion fusion;
  TensorView* x = input(fusion, {4, -1});
  TensorView* w = input(fusion, {-1});
  TensorView* b = input(fusion, {});
  EXPECT_EQ(domainText(linear(x, w, b)), "[4, r:s0]");
  TensorView* w2 = input(fusion, {3, -1});
  EXPECT_EQ(domainText(linear(x, w2, b)), "[4, 3, r:s0]");
  TensorView* v = input(fusion, {-1});
  EXPECT_EQ(domainText(linear(v, w2)), "[3, r:s3]");
}

TEST(LinearTest, Errors) {
  Fusion fusion;
  TensorView* x = input(fusion, {2, 8});
  TensorView* w3 = input(fusion, {2, 3, 8});
  TensorView* w = input(fusion, {5, 6});
  TensorView* good = input(fusion, {5, 8});
  TensorView* bias2 = input(fusion, {1, 5});
  TensorView* bias_n = input(fusion, {4});
  TensorView* w1 = input(fusion, {8});
  TensorView* bias1 = input(fusion, {5});
  TensorView* ints = input(fusion, {5, 8}, DataType::Int32);
  TensorView* s = input(fusion, {});
  EXPECT_TRUE(throwsError([&] { linear(x, w3); },
                          {"linear", "weight T1 (input 1) [2, 3, 8] has rank 3", "[N, K] or [K]"}));
  EXPECT_TRUE(throwsError(
      [&] { linear(x, w); },
      {"linear of x T0 (input 0) [2, 8] and weight T2 (input 2) [5, 6]", "K differs (8 vs 6)"}));
  EXPECT_TRUE(throwsError([&] { linear(x, good, bias2); },
                          {"linear", "bias T4 (input 4) [1, 5] has rank 2", "[N] or 0-d"}));
  EXPECT_TRUE(throwsError([&] { linear(x, good, bias_n); },
                          {"linear", "bias T5 (input 5) [4] does not match N = 5"}));
  EXPECT_TRUE(throwsError([&] { linear(x, w1, bias1); }, {"linear", "has rank 1", "must be 0-d"}));
  EXPECT_TRUE(throwsError([&] { linear(x, ints); }, {"linear", "weight", "int32", "floating"}));
  EXPECT_TRUE(throwsError([&] { linear(s, w1); }, {"linear", "x T9 (input 9) [] is 0-d"}));
  EXPECT_TRUE(throwsError([&] { linear(nullptr, w1); }, {"linear", "x is null"}));
  EXPECT_TRUE(throwsError([&] { linear(x, nullptr); }, {"linear", "weight is null"}));
}

}  // namespace
}  // namespace braze
